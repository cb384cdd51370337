#include "tessera/evolve/schema.hpp"

#include <cctype>
#include <iterator>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/problem/problem.hpp"

namespace tessera {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

ParamSpec real(const char* section, const char* key, ParamValue def, Range range,
               const char* help) {
  return {section, key, ParamType::kReal, std::move(def), help, range, 0, {}};
}

ParamSpec integer(const char* section, const char* key, ParamValue def, Range range,
                  const char* help) {
  return {section, key, ParamType::kInt, std::move(def), help, range, 0, {}};
}

// A threshold that may differ per refinement level: one number, or one per level.
ParamSpec per_level(const char* section, const char* key, double def, Range range,
                    const char* help) {
  return {section, key, ParamType::kRealList, std::vector<double>{def}, help, range, 0, {}};
}

ParamSpec choice(const char* section, const char* key, const char* def,
                 std::vector<std::string> choices, const char* help) {
  return {section, key, ParamType::kString, std::string(def), help, {}, 0, std::move(choices)};
}

std::vector<ParamSpec> core_specs() {
  const Range positive{0, kInf, true, false};
  const std::vector<std::string> bcs = {"periodic", "outflow", "reflecting", "problem"};
  std::vector<ParamSpec> s = {
      real("run", "t_end", {}, positive, "simulation time at which the run ends"),
      integer("run", "max_steps", std::int64_t(1000000), {1, kInf},
              "largest number of root steps; the run stops there even before t_end"),
      integer("run", "threads", std::int64_t(0), {0, 4096},
              "OpenMP threads; 0 uses OMP_NUM_THREADS or all cores"),
      real("run", "memory_limit", 0.0, {0, kInf, false, true},
           "host memory the run may use, in GB (1e9 bytes); runs and refinements that would "
           "exceed it are refused (exit 6); 0: what the machine, or the job's memory limit, "
           "has available"),
      integer("run", "log_interval", std::int64_t(0), {0, kInf},
              "steps between the log's step lines, each followed by a totals line (mass, "
              "momentum, energy; 1: every step); 0: a step line every run.log_seconds of wall "
              "time, a totals line about every minute, and both for the first and last step"),
      real("run", "log_seconds", 10.0, {0, kInf, false, true},
           "wall-clock seconds between the log's step lines when run.log_interval = 0"),
      {"run",
       "wall_time",
       ParamType::kString,
       std::string(""),
       "wall-clock limit of the job, hh:mm:ss (hours may exceed 24); the run writes a "
       "checkpoint and stops with exit code 10 early enough to finish before it; empty: no "
       "limit",
       {},
       0,
       {}},
      choice("run", "backend", "auto", {"auto", "cuda", "cpu"},
             "where the solver runs: cuda (a GPU), cpu (OpenMP), auto (cuda when a GPU is "
             "present)"),
      integer("gpu", "groups_per_batch", std::int64_t(0), {0, 1 << 20},
              "patch groups per GPU batch; 0 chooses from the GPU's multiprocessor count"),
      integer("gpu", "streams", std::int64_t(0), {0, 64},
              "CUDA streams a batch is split over; 0 chooses automatically"),
      choice("gpu", "resident", "auto", {"auto", "on", "off"},
             "keep the patch data in GPU memory between steps (ghost zones gathered on the "
             "GPU, nothing staged through the host; the host copy is updated for outputs, "
             "checkpoints, the log's totals and refinement criteria the GPU does not "
             "evaluate; regrids make their new patches on the GPU): auto does so for runs "
             "whose data fit in the GPU's free memory and that have no problem-defined "
             "boundaries (self-gravity solves, kicks and keeps its potential on the GPU; on "
             "several ranks the root solve's density and potential cross the bus), on insists "
             "(problem-defined boundaries' ghost cells are then evaluated on the host per level "
             "step and sent), off stages every batch through the host"),
      real("mpi", "coarse_fine_cost", 1.5, {1, 100},
           "several MPI ranks: the cost of a patch group whose ghost zones read the coarser "
           "level (interpolated in space and time), in units of one that does not, when each "
           "level is cut into pieces of equal cost (measured: 1.57 in the prepare stage)"),
      real("mpi", "imbalance_tolerance", 0.1, {0, kInf},
           "several MPI ranks: after a regrid each level keeps its cuts along the curve (no "
           "patch moves) while its most loaded rank holds at most this fraction more cost "
           "(mpi.coarse_fine_cost) than the best cut would give it; beyond that the level is "
           "cut again and the groups that change rank migrate (0: whenever the kept cuts are "
           "not the best)"),
      choice("mpi", "device_exchange", "auto", {"auto", "peer", "mpi", "host"},
             "several MPI ranks with device-resident data (gpu.resident): how the buffer "
             "patches go between two ranks' GPUs. peer: GPU to GPU within a host (CUDA IPC, "
             "over NVLink where the GPUs have it); mpi: the MPI library sends GPU memory itself "
             "(CUDA-aware MPI); host: through page-locked host buffers and MPI; auto: peer "
             "within a host, else mpi where the library is CUDA-aware, else host. The same "
             "bits every way. The root FFT's transposes on the GPUs (mpi.root_fft = \"slabs\"), "
             "and a resident run's root density and potential between the ranks' GPUs, go GPU "
             "to GPU within a host unless this is host (mpi takes the host route there)"),
      choice("mpi", "root_fft", "slabs", {"slabs", "gathered"},
             "several MPI ranks with self-gravity: the root Poisson solve's FFT cut into slabs "
             "of z-planes over the ranks (each transforms and holds 1/N of the grid: FFTW on "
             "the CPU, cuFFT on each rank's GPU with the CUDA backend), or gathered (every rank "
             "solves the whole root grid); the same bits either way, on each backend. A job "
             "whose ranks have different backends gathers"),
      {"mpi",
       "overlap_exchange",
       ParamType::kBool,
       true,
       "several MPI ranks: step the patch groups whose ghost zones read no other rank's patch "
       "while the level's messages travel, and the others once they have arrived (the same "
       "bits either way); false: receive everything before the level's hydro step",
       {},
       0,
       {}},
      {"mpi",
       "parallel_io",
       ParamType::kBool,
       true,
       "several MPI ranks: write each plot file and checkpoint together through parallel "
       "HDF5 (MPI-IO), every rank its own patches; false: rank 0 gathers every patch and "
       "writes alone (a file system without MPI-IO support). A build without parallel HDF5 "
       "always gathers",
       {},
       0,
       {}},
      {"mesh", "nx", ParamType::kInt3, {}, "root-level cells per dimension", {16, kInf}, 16, {}},
      {"mesh",
       "xmin",
       ParamType::kReal3,
       std::array<double, 3>{0, 0, 0},
       "lower corner of the domain",
       {},
       0,
       {}},
      {"mesh",
       "xmax",
       ParamType::kReal3,
       std::array<double, 3>{1, 1, 1},
       "upper corner of the domain (cells must be cubic)",
       {},
       0,
       {}},
  };
  for (const char* axis : {"x", "y", "z"})
    for (const char* side : {"lo", "hi"}) {
      ParamSpec p = choice("mesh", "", "periodic", bcs, "");
      p.key = std::string("bc_") + axis + side;
      p.help = std::string("boundary condition on the ") + (side[0] == 'l' ? "lower " : "upper ") +
               axis + " face: periodic, outflow (zero gradient), reflecting (a wall), or problem " +
               "(set by the problem, e.g. an inflow; only problems that define it accept it)";
      s.push_back(std::move(p));
    }
  const std::vector<ParamSpec> rest = {
      choice("hydro", "eos", "adiabatic", {"adiabatic", "isothermal"},
             "equation of state: adiabatic (ideal gas, p = (gamma - 1) e; 5 variables) or "
             "isothermal (p = c^2 rho with c = hydro.iso_sound_speed; no energy equation)"),
      real("hydro", "gamma", 5.0 / 3.0, {1, kInf, true, false},
           "adiabatic index (adiabatic gas only)"),
      real("hydro", "iso_sound_speed", 1.0, {0, kInf, true, false},
           "sound speed c of isothermal gas (hydro.eos = \"isothermal\" only)"),
      integer("hydro", "passive_scalars", std::int64_t(0), {0, 16},
              "passive scalars advected with the mass: stored as rho*s, plotted as the "
              "concentrations s under the names r0, r1, ..."),
      real("hydro", "cfl", 0.3, {0, 1, true, false},
           "Courant number: dt = cfl * dx / max(|v_d| + c_s). The method of lines (rk2, vl2) "
           "is stable up to 1 / d for a flow along d axes (the problem's: 1 for a shock tube, "
           "2 for a flow in a plane, 3 for a blast), relaxing_tvd up to 1; a larger value is "
           "refused (hydro.cfl_unsafe)"),
      {"hydro",
       "cfl_unsafe",
       ParamType::kBool,
       false,
       "true: run with a hydro.cfl above the scheme's stable limit for the problem's flow "
       "(expect growing errors or a collapsing time step; the run stops with exit 4 when its "
       "time step collapses or a conserved total runs away)",
       {},
       0,
       {}},
      choice("hydro", "scheme", "mol", {"mol", "relaxing_tvd"},
             "hydro scheme: mol (method of lines: reconstruction, Riemann solver and "
             "hydro.integrator) or relaxing_tvd (Trac & Pen 2003, as in GAMER: dimensionally "
             "split, a forward x-y-z sweep and a backward z-y-x sweep in alternate steps, "
             "3 ghost layers, limiter hydro.tvd_limiter; hydrodynamics only, stable for "
             "hydro.cfl up to ~0.9 in 3D flow)"),
      choice("hydro", "tvd_limiter", "vanleer", {"vanleer", "minmod", "mc", "superbee"},
             "flux limiter of the relaxing_tvd scheme: vanleer (harmonic mean, as Trac & Pen), "
             "minmod, mc (monotonized central) or superbee"),
      choice("hydro", "reconstruction", "plm", {"plm", "pcm", "ppm", "ppm_char"},
             "spatial reconstruction of primitive variables: plm (piecewise linear, second "
             "order, limiter hydro.limiter), pcm (first order), ppm (piecewise parabolic, "
             "Colella & Woodward 1984, with the extremum-preserving limiter of Colella & "
             "Sekora 2008; reads 3 cells per side: 6 ghost layers with rk2 and with vl2, whose "
             "predictor then takes the mc_ep slopes; prefer vl2: with rk2 smooth flow grows "
             "slowly unstable modes) or ppm_char (ppm limited in characteristic variables, "
             "Colella & Woodward 1984 section 4: less ringing behind shocks; hydrodynamics "
             "only)"),
      choice("hydro", "limiter", "mc", {"minmod", "mc", "vanleer", "mc_ep"},
             "slope limiter of plm, unused by pcm, ppm and ppm_char (Wang et al. 2009 eqs. "
             "9-11; van Leer 1974); mc_ep: MC relaxed at smooth extrema after Colella & "
             "Sekora 2008 (second order there, "
             "reads 3 cells per side: 6 ghost layers with rk2, 4 with vl2)"),
      choice("hydro", "riemann", "auto", {"auto", "hllc", "hlld", "hll", "llf"},
             "Riemann solver: hllc (Toro; for isothermal gas its form without an energy "
             "equation, after Mignone 2007; hydrodynamics only), hlld (Miyoshi & Kusano "
             "2005; MHD only), hll (HLLE: Einfeldt speeds, Davis speeds for MHD) or llf "
             "(Rusanov); auto: hllc for hydrodynamics, hlld for MHD"),
      choice("hydro", "integrator", "rk2", {"rk2", "vl2"},
             "time integrator: rk2 (SSP-RK2, 4 ghost layers) or vl2 (van Leer predictor-"
             "corrector of Stone & Gardiner 2009: donor-cell half step, then a full step with "
             "the chosen reconstruction; 3 ghost layers, less data per update)"),
      {"hydro",
       "fofc",
       ParamType::kBool,
       true,
       "first-order flux correction (MOL scheme): a cell that a step would leave with a "
       "density or pressure below its floor, or not finite, is stepped again with first-order "
       "(LLF) fluxes on its faces, which its neighbours take too, so the update stays "
       "conservative (Lemaster & Stone 2009; as Athena++); the log counts such cells "
       "('fofc N') apart from floored ones ('floors N'), the last resort",
       {},
       0,
       {}},
      real("hydro", "density_floor", 1e-10, positive, "smallest density kept after an update"),
      real("hydro", "pressure_floor", 1e-12, positive,
           "smallest pressure kept after an update (adiabatic gas only)"),
      {"mhd",
       "enabled",
       ParamType::kBool,
       false,
       "ideal MHD with GLM divergence cleaning (Dedner et al. 2002): 9 variables (rho, rho v, "
       "E, B, psi), magnetic pressure B^2/2; needs hydro.eos = \"adiabatic\"",
       {},
       0,
       {}},
      real("mhd", "glm_alpha", 0.1, {0, kInf, false, false},
           "parabolic divergence cleaning: psi decays by exp(-alpha ch dt / dx) per step "
           "(Mignone & Tzeferacos 2010; alpha = dx ch / c_p^2, ch the largest fast speed); 0: "
           "purely hyperbolic cleaning"),
      {"mhd",
       "plot_divb",
       ParamType::kBool,
       false,
       "plot files gain the derived field divB (central differences of Bcc, in code units)",
       {},
       0,
       {}},
      {"gravity",
       "enabled",
       ParamType::kBool,
       false,
       "self-gravity: the potential of laplacian(phi) = 4 pi G rho (FFT on the root level, "
       "red-black SOR per patch group on refined levels), its acceleration -grad(phi) "
       "applied to momentum and energy; plot files gain phi",
       {},
       0,
       {}},
      real("gravity", "G", 1.0, {0, kInf, true, false}, "gravitational constant in code units"),
      choice("gravity", "boundary", "isolated", {"isolated", "periodic"},
             "boundary of the potential: isolated (vacuum outside the domain; zero padding to "
             "twice the root grid, Hockney & Eastwood 1981) or periodic (needs periodic mesh "
             "boundaries; the mean density is subtracted from the source, the \"Jeans "
             "swindle\")"),
      real("gravity", "sor_omega", 1.69, {0, 2, true, true},
           "over-relaxation parameter of the refined levels' SOR; 1.69 is the optimum for a "
           "16^3 patch group, 2 / (1 + sin(pi / 17))"),
      real("gravity", "sor_tolerance", 1e-10, {0, 1, true, false},
           "a refined level's SOR stops when the sum of |residual| over a patch group is below "
           "this fraction of the sum of |4 pi G h^2 (rho - rho_mean)| (or at round-off)"),
      integer("gravity", "sor_max_iterations", std::int64_t(500), {1, 100000},
              "most SOR iterations per patch group and solve (a log warning says when a "
              "solve stops there)"),
      {"gravity",
       "potential_correction",
       ParamType::kBool,
       true,
       "the potential correction: at every synchronisation of the levels (the first solve, "
       "the end of each root step, a regrid) multigrid (FAS) V-cycles over all levels make "
       "the potential the composite solution of every level together: each level's "
       "potential where a finer one covers it is the finer one's, and the fluxes through "
       "coarse-fine faces are the finer level's (docs/architecture.md, \"Self-gravity\"); "
       "false: each level solved once from the coarser one",
       {},
       0,
       {}},
      integer("gravity", "correction_cycles", std::int64_t(2), {1, 100},
              "V-cycles of the potential correction per synchronisation (each: one FFT of "
              "the root and two smoothing passes per refined level)"),
      integer("gravity", "smoothing_iterations", std::int64_t(4), {1, 100},
              "red-black Gauss-Seidel iterations per patch group in each smoothing pass of "
              "the potential correction's V-cycles"),
      integer("amr", "max_level", std::int64_t(0), {0, 10},
              "finest refinement level (0: uniform root grid)"),
      integer("amr", "regrid_interval", std::int64_t(2), {1, kInf}, "root steps between regrids"),
      integer("amr", "flag_buffer", std::int64_t(2), {0, 8},
              "cells around a flagged cell that are refined too"),
      {"amr",
       "subcycle",
       ParamType::kBool,
       true,
       "finer levels take two half steps per parent step (false: one shared step)",
       {},
       0,
       {}},
      per_level("amr", "lohner_refine", 0.8, {0, 1},
                "refine where Lohner's error estimator exceeds this (0: off); one value, or one "
                "per level "
                "below the finest"),
      per_level("amr", "lohner_derefine", 0.2, {0, 1},
                "refined patches stay refined while the estimator exceeds this"),
      real("amr", "lohner_filter", 0.01, {0, kInf}, "noise filter epsilon of the estimator"),
      choice("amr", "lohner_variables", "density_pressure",
             {"density_pressure", "density", "pressure", "density_pressure_field", "field"},
             "variables the estimator looks at (field: the magnetic field strength |B|, MHD "
             "only)"),
      per_level("amr", "gradient_refine", 0.0, {0, kInf},
                "refine where max_d |q(i+1) - q(i-1)| / 2|q(i)| of density or pressure exceeds "
                "this (0: off)"),
      per_level("amr", "gradient_derefine", 0.0, {0, kInf},
                "refined patches stay refined while the relative gradient exceeds this"),
      per_level("amr", "current_refine", 0.0, {0, kInf},
                "refine where |curl B| dx / |B| exceeds this (current sheets; MHD only; 0: "
                "off)"),
      per_level("amr", "current_derefine", 0.0, {0, kInf},
                "refined patches stay refined while |curl B| dx / |B| exceeds this"),
      per_level("amr", "density_refine", 0.0, {0, kInf},
                "refine where density exceeds this (0: off)"),
      per_level("amr", "density_derefine", 0.0, {0, kInf},
                "refined patches stay refined while density exceeds this"),
      real("amr", "jeans_cells", 0.0, {0, kInf},
           "refine where the Jeans length sqrt(pi c_s^2 / (G rho)) spans fewer than this many "
           "cells (Truelove et al. 1997: at least 4 against artificial fragmentation; 0: off; "
           "needs gravity.enabled); refined patches stay refined while it holds on their "
           "own cells"),
      real("units", "length_cgs", 1.0, {0, kInf, true, false},
           "the code unit of length in cm. Units label the outputs (plot file attributes the "
           "yt loader scripts/tessera_yt.py reads, the log); the equations are solved in code "
           "units, gravity.G included"),
      real("units", "mass_cgs", 1.0, {0, kInf, true, false}, "the code unit of mass in g"),
      real("units", "time_cgs", 1.0, {0, kInf, true, false}, "the code unit of time in s"),
      real("units", "mu", 0.6, {0, kInf, true, false},
           "mean molecular weight, in hydrogen masses (temperature T = mu m_H p / (rho k_B))"),
      {"output",
       "dir",
       ParamType::kString,
       std::string("output"),
       "directory for plot files (created if missing)",
       {},
       0,
       {}},
      real("output", "dt", 0.0, {0, kInf},
           "simulation time between plot files; 0 writes only the first and the last"),
      {"output", "enabled", ParamType::kBool, true, "write plot files at all", {}, 0, {}},
      {"output",
       "history",
       ParamType::kBool,
       true,
       "write the history file <output.dir>/<problem>.hst (with output.enabled): a row of "
       "time, dt, conserved totals, floored cells, cells per level and wall time per stage "
       "(cumulative) at the first step and at every row the interval asks for, readable by "
       "numpy.loadtxt; and the end-of-run summary <problem>.summary.json",
       {},
       0,
       {}},
      integer("output", "history_interval", std::int64_t(0), {0, kInf},
              "root steps between history rows (0: a row with each totals line of the log, "
              "or by output.history_dt). A row sums the whole mesh: on a run kept on the "
              "GPU it copies the data to the host, so every step costs speed"),
      real("output", "history_dt", 0.0, {0, kInf},
           "simulation time between history rows (0: off, output.history_interval rules)"),
      integer("output", "max_files", std::int64_t(10000), {1, kInf},
              "the most plot files, and the most checkpoints, that output.dt and "
              "output.checkpoint_dt may ask for over the run (run.t_end / dt, at most one per "
              "root step): a larger count is refused as a likely mistake"),
      real("output", "checkpoint_dt", 0.0, {0, kInf},
           "simulation time between checkpoints (0: off); checkpoints never shorten a step"),
      integer("output", "checkpoint_interval", std::int64_t(0), {0, kInf},
              "root steps between checkpoints (0: off)"),
      integer("output", "checkpoint_keep", std::int64_t(3), {1, kInf},
              "checkpoints kept in output.dir; older ones are deleted after a new one is "
              "complete"),
      {"problem",
       "name",
       ParamType::kString,
       {},
       "problem to set up (see `tessera problems`)",
       {},
       0,
       {}},
  };
  s.insert(s.end(), rest.begin(), rest.end());
  return s;
}

std::string row(const ParamSpec& s) {
  return "| `" + s.name() + "` | " + s.expected() + " | `" + format_param_value(s.default_value) +
         "` | " + s.help + " |\n";
}

}  // namespace

const ParamSchema& parameter_schema() {
  static const ParamSchema schema = [] {
    ParamSchema sc;
    sc.specs = core_specs();
    sc.sections = {"run",     "gpu", "mpi",    "mesh",  "hydro",  "mhd",
                   "gravity", "amr", "output", "units", "problem"};
    sc.problem_specs = [](const std::string& name) { return find_problem(name).params(); };
    return sc;
  }();
  return schema;
}

std::optional<double> parse_wall_time(const std::string& text) {
  if (text.empty()) return 0.0;
  // Exactly three fields of digits separated by ':'.
  long parts[3] = {0, 0, 0};
  std::size_t pos = 0;
  for (int n = 0; n < 3; ++n) {
    std::size_t end = pos;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    if (end == pos || end - pos > 6) return std::nullopt;
    parts[n] = std::stol(text.substr(pos, end - pos));
    const bool last = n == 2;
    if (last ? end != text.size() : (end >= text.size() || text[end] != ':')) return std::nullopt;
    pos = end + 1;
  }
  if (parts[1] > 59 || parts[2] > 59) return std::nullopt;
  const double seconds = 3600.0 * parts[0] + 60.0 * parts[1] + parts[2];
  if (seconds <= 0) return std::nullopt;
  return seconds;
}

Params load_run_params(const std::string& file, const std::vector<std::string>& overrides) {
  return load_run_params_text(read_param_file(file), file, overrides);
}

Params load_run_params_text(const std::string& text, const std::string& file,
                            const std::vector<std::string>& overrides) {
  Params p = load_params_from_string(text, file, overrides, parameter_schema());
  const std::string& wall = p.string("run.wall_time");
  if (!parse_wall_time(wall))
    throw Error(ErrorKind::kInput, file + ": run.wall_time = \"" + shorten_for_message(wall) +
                                       "\": expected hh:mm:ss (e.g. \"23:30:00\"), more than "
                                       "zero, or \"\" for no limit");
  return p;
}

namespace {
// Keys a restart may change; besides them every [gpu], [mpi] and [output] key (the GPU's
// batching, the decomposition and the outputs change no number of the solution). Outside
// those sections: what only the plot files show (mhd.plot_divb, the [units] that label
// them) and the permission to run past the stable Courant number (hydro.cfl_unsafe:
// hydro.cfl itself cannot change).
const char* const kRestartKeys[] = {
    "run.t_end",     "run.max_steps", "run.threads",      "run.log_interval", "run.log_seconds",
    "run.wall_time", "run.backend",   "run.memory_limit", "mhd.plot_divb",    "hydro.cfl_unsafe"};
const char* const kRestartSections[] = {"gpu", "mpi", "output", "units"};
}  // namespace

bool may_change_on_restart(const std::string& name) {
  for (const char* k : kRestartKeys)
    if (name == k) return true;
  for (const char* section : kRestartSections)
    if (name.rfind(std::string(section) + ".", 0) == 0) return true;
  return false;
}

std::string restart_changeable_keys(bool markdown) {
  const std::string q = markdown ? "`" : "";
  std::string out;
  for (const char* k : kRestartKeys) out += q + k + q + ", ";
  out += "and every ";
  const std::size_t n = std::size(kRestartSections);
  for (std::size_t i = 0; i < n; ++i)
    out += (i == 0 ? "" : i + 1 == n ? " and " : ", ") + q + "[" + kRestartSections[i] + "]" + q;
  return out + " key";
}

std::string parameter_reference_markdown(const std::string& only) {
  std::string out =
      only.empty()
          ? "# Parameter reference\n\n"
            "Generated by `tessera params`; do not edit by hand. Keys without a default are "
            "required. Any key can be overridden on the command line as `section.key=value`. "
            "On a restart (`--restart`) only these keys may differ from the checkpoint's: " +
                restart_changeable_keys(true) + ".\n"
          : std::string();
  std::string section;
  std::vector<std::string> names;
  for (const auto& s : parameter_schema().specs) {
    if (s.section != section) {
      section = s.section;
      names.push_back(section);
      if (only.empty() || only == section)
        out +=
            "\n## [" + section + "]\n\n| key | expected | default | meaning |\n|---|---|---|---|\n";
    }
    if (only.empty() || only == section) out += row(s);
  }
  for (const ProblemInfo* p : all_problems()) {
    names.push_back(p->name);
    if (!only.empty() && only != p->name && only != "problem") continue;
    out += "\n## [problem] name = \"" + p->name + "\"\n\n" + p->description + "\n\n";
    const auto specs = p->params();
    if (specs.empty()) {
      out += "No further keys.\n";
      continue;
    }
    out += "| key | expected | default | meaning |\n|---|---|---|---|\n";
    for (const auto& s : specs) out += row(s);
  }
  if (out.empty()) {
    std::string message = "tessera params: no section or problem '";  // appended: GCC 12
    message += only;                                                  // -Wrestrict
    message += "'; the sections and problems:";
    for (const auto& n : names) message += (message.back() == ':' ? " " : ", ") + n;
    throw Error(ErrorKind::kInput, message);
  }
  return out;
}

}  // namespace tessera
