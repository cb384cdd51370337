#include "tessera/evolve/simulation.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/parallel.hpp"
#include "tessera/evolve/memory.hpp"
#include "tessera/evolve/schema.hpp"
#include "tessera/io/output_dir.hpp"
#include "tessera/io/plot_output.hpp"
#include "tessera/mesh/geometry.hpp"
#include "tessera/mesh/prolongation.hpp"

namespace tessera::evolve {

namespace {

// A duration for the log's estimate: "42s", "3m12s", "1h02m", "2d03h".
std::string format_duration(double seconds) {
  const long long s = std::llround(std::max(0.0, std::min(seconds, 1e12)));
  if (s < 60) return strprintf("%llds", s);
  if (s < 3600) return strprintf("%lldm%02llds", s / 60, s % 60);
  if (s < 86400) return strprintf("%lldh%02lldm", s / 3600, (s % 3600) / 60);
  return strprintf("%lldd%02lldh", s / 86400, (s % 86400) / 3600);
}

kernels::Scheme scheme_from_params(const Params& p, const physics::Model& model) {
  kernels::Scheme s;
  s.physics = model.physics();
  const std::string& limiter = p.string("hydro.limiter");
  if (p.string("hydro.reconstruction") == "pcm")
    s.recon = kernels::Reconstruction::kPcm;
  else if (p.string("hydro.reconstruction") == "ppm")
    s.recon = kernels::Reconstruction::kPpm;
  else if (limiter == "minmod")
    s.recon = kernels::Reconstruction::kPlmMinmod;
  else if (limiter == "vanleer")
    s.recon = kernels::Reconstruction::kPlmVanLeer;
  else if (limiter == "mc_ep")
    s.recon = kernels::Reconstruction::kPlmMcEp;
  else
    s.recon = kernels::Reconstruction::kPlmMc;
  const std::string& rs = p.string("hydro.riemann");
  const bool mhd = model.has_magnetic_field();
  if (rs == "hll")
    s.riemann = kernels::RiemannSolver::kHll;
  else if (rs == "llf")
    s.riemann = kernels::RiemannSolver::kLlf;
  else if (rs == "hlld" || (rs == "auto" && mhd))
    s.riemann = kernels::RiemannSolver::kHlld;
  else
    s.riemann = kernels::RiemannSolver::kHllc;
  s.integrator =
      p.string("hydro.integrator") == "vl2" ? kernels::Integrator::kVl2 : kernels::Integrator::kRk2;
  return s;
}

std::unique_ptr<exec::Executor> make_executor(const Params& p) {
  const std::string& backend = p.string("run.backend");
  const bool want_cuda = backend == "cuda" || (backend == "auto" && exec::cuda_device_available());
  if (!want_cuda) return exec::make_cpu_executor();
  return exec::make_cuda_executor(static_cast<int>(p.integer("gpu.groups_per_batch")),
                                  static_cast<int>(p.integer("gpu.streams")));
}

// Restriction of every family of `level` onto its parent (the initial mesh of one rank).
void restrict_every_family(mesh::Mesh& m, int level) {
  const auto& groups = m.groups(level);
#pragma omp parallel for schedule(static)
  for (std::size_t g = 0; g < groups.size(); ++g) mesh::restrict_family(m, groups[g]);
}

}  // namespace

mesh::FieldRegistry run_fields(const Params& params) {
  mesh::FieldRegistry f = physics::Model(params).fields();
  if (!params.boolean("gravity.enabled")) return f;
  // The potential goes last, after the solver's variables (HydroPass reads the first ones).
  std::vector<mesh::FieldInfo> all = f.all();
  std::vector<int> order = f.plot_order();
  all.push_back(gravity::potential_field());
  order.push_back(static_cast<int>(all.size()) - 1);
  if (params.integer("amr.max_level") > 0 && params.boolean("gravity.potential_correction"))
    all.push_back(gravity::correction_field());  // not plotted: not in the plot order
  mesh::FieldRegistry out(std::move(all), std::move(order));
  out.set_admissible(f.admissible());
  return out;
}

Simulation::Simulation(Params params, parallel::Comm& comm)
    : params_(std::move(params)), comm_(&comm), model_(params_), fields_(run_fields(params_)) {
  set_log_rank(comm.rank());
  std::string note;
  const int threads = effective_threads(params_, &note);
  if (!note.empty()) log_line("note: %s", note.c_str());
  omp_set_num_threads(threads);
  problem_name_ = params_.string("problem.name");
  overlap_exchange_ = params_.boolean("mpi.overlap_exchange");
  run_id_ = io::new_run_id();
  const bool cuda = params_.string("run.backend") == "cuda" ||
                    (params_.string("run.backend") == "auto" && exec::cuda_device_available());
  memory_ = estimate_memory(params_, cuda, fields_.size(), comm_->size());
  {
    std::string source;
    const double available = host_memory_available(params_, 0, &source);
    log_line("%s", memory_summary(memory_, available, source).c_str());
  }
  check_output_cadence(params_, memory_);
  check_initial_memory(params_, memory_);  // before the root level is allocated
  // Several ranks: the structure only; initialize() gives each rank its own data.
  mesh_ = std::make_unique<mesh::Mesh>(mesh::geometry_from_params(params_), fields_,
                                       mesh::Hierarchy{}, comm.size() == 1);
  gravity::check_params(params_, mesh_->geometry());
  log_line("equations: %s", model_.describe().c_str());
  {
    const double l = params_.real("units.length_cgs"), m = params_.real("units.mass_cgs"),
                 t = params_.real("units.time_cgs");
    if (l == 1 && m == 1 && t == 1)
      log_line(
          "units: code units (1 cm, 1 g, 1 s; set [units] to label the outputs in "
          "physical ones), mean molecular weight %g",
          params_.real("units.mu"));
    else
      log_line("units: length %g cm, mass %g g, time %g s, mean molecular weight %g", l, m, t,
               params_.real("units.mu"));
  }
  problem_ = create_problem(params_);
  install_problem_boundary(*mesh_);
  executor_ = make_executor(params_);
  // The backend at the start of the log (the summary at the end repeats it).
  if (std::strcmp(executor_->name(), "cpu") == 0)
    log_line("backend: cpu, %d threads", omp_get_max_threads());
  else
    log_line("backend: %s, %s; %d host threads", executor_->name(),
             exec::cuda_device_description().c_str(), omp_get_max_threads());
  kernels::MolParams mol{};
  mol.phys = model_.params();
  mol.scalars = model_.num_scalars();
  if (params_.string("hydro.scheme") == "relaxing_tvd") {
    const std::string& l = params_.string("hydro.tvd_limiter");
    const auto limiter = l == "minmod"     ? kernels::TvdLimiter::kMinmod
                         : l == "mc"       ? kernels::TvdLimiter::kMc
                         : l == "superbee" ? kernels::TvdLimiter::kSuperbee
                                           : kernels::TvdLimiter::kVanLeer;
    hydro_ = std::make_unique<HydroPass>(scheme_from_params(params_, model_), mol, limiter);
    log_line(
        "hydro: relaxing TVD (Trac & Pen 2003), %s flux limiter, dimensionally split sweeps "
        "x-y-z and z-y-x in alternate steps of each level",
        l.c_str());
  } else {
    hydro_ = std::make_unique<HydroPass>(scheme_from_params(params_, model_), mol,
                                         params_.boolean("hydro.fofc"));
    if (params_.string("hydro.reconstruction") == "ppm" &&
        params_.string("hydro.integrator") == "rk2")
      log_line(
          "note: PPM with rk2 is a centred scheme where the flow is smooth, and SSP-RK2 lets "
          "its modes grow slowly: in long runs of smooth, low-amplitude flow use "
          "hydro.integrator = \"vl2\" or PLM (docs/user_guide.md, hydro.reconstruction)");
  }
  // Device residency: the default for GPU runs whose data fit, adaptive ones on one rank.
  const std::string& resident = params_.string("gpu.resident");
  const int batch_param = static_cast<int>(params_.integer("gpu.groups_per_batch"));
  const bool on_gpu = executor_->name() != std::string("cpu");
  const bool refined = params_.integer("amr.max_level") > 0;
  const bool self_gravity = params_.boolean("gravity.enabled");
  if (resident == "on" && (!on_gpu || ((refined || self_gravity) && comm.size() > 1)))
    throw Error(
        ErrorKind::kInput,
        strprintf("gpu.resident = \"on\" needs the cuda backend, and for a run with refinement "
                  "(amr.max_level > 0) or self-gravity one rank; this run has backend %s, "
                  "amr.max_level = %lld, gravity.enabled = %s and %d ranks",
                  executor_->name(), static_cast<long long>(params_.integer("amr.max_level")),
                  self_gravity ? "true" : "false", comm.size()));
  // Self-gravity stays on the GPU with the data for a run without refinement on one rank
  // (the root's density, cuFFT solve, potential and kicks: gravity/device_root.hpp), and,
  // when asked (gpu.resident = "on"), for one with refinement but without the potential
  // correction (the refined levels' SOR boxes and kicks: gravity/device_potential.hpp);
  // the correction's sources and the slabs of several ranks work on the host's copy.
  const bool correction = refined && params_.boolean("gravity.potential_correction");
  const bool gravity_on_host =
      self_gravity && (comm.size() > 1 || (refined && (correction || resident != "on")));
  // Problem-defined sides: their ghost cells are evaluated on the host at every level step
  // and sent (ProblemGhosts). The double Mach reflection (root 256 x 64 x 16 + 2 levels,
  // 150 steps, one H200) ran resident at 9.4e7 cell-updates/s against 1.19e8 staged, the
  // tables' making (then serial) taking most of the loop: "auto" stages such runs, "on"
  // keeps them on the GPU.
  const bool problem_bc = mesh_->geometry().problem_boundaries();
  if (resident == "auto" && on_gpu && gravity_on_host)
    log_line(
        "note: the patch data stay on the host and are staged per batch: the potential of "
        "self-gravity is solved on the host between the GPU's hydro steps (with refinement, "
        "or on several ranks; gpu.resident = \"on\" keeps a run with refinement but without "
        "gravity.potential_correction on the GPU)");
  if (resident == "auto" && on_gpu && problem_bc && !gravity_on_host)
    log_line(
        "note: the patch data stay on the host and are staged per batch: the problem-defined "
        "boundaries' ghost cells are evaluated on the host (gpu.resident = \"on\" keeps the "
        "data on the GPU and sends them the ghost cells at every level step)");
  if (resident == "auto" && on_gpu && refined && comm.size() > 1 && !gravity_on_host && !problem_bc)
    log_line(
        "note: the patch data stay on the host and are staged per batch: adaptive runs stay on "
        "the GPU on one rank only");
  if (resident != "off" && on_gpu && (!refined || comm.size() == 1) && !gravity_on_host &&
      (resident == "on" || !problem_bc)) {
    // Resident batches are 4 groups per multiprocessor unless set: with no host stage to
    // overlap, larger batches only save launches (uniform 256^3 MHD on an H100: +6% in
    // double, +8% in single from 1 to 4 or 8 per SM; docs/performance.md). On several ranks
    // a rank holds its share of the level and the buffer copies around it (taken as half
    // as much again: a piece of 1/2 of 256^3 holds 1/8 of its size in buffers).
    const int ranks = comm.size();
    const double level_bytes =
        ranks == 1 ? memory_.root_bytes : std::min(1.0, 1.5 / ranks) * memory_.root_bytes;
    // The root solve's buffers on the GPU (the cuFFT planes, spectrum and multipliers, as
    // MemoryEstimate counts them on the host, and the resident root's density and two
    // ghosted potentials).
    const double gravity_bytes =
        self_gravity ? sizeof(double) * double(mesh_->geometry().root_cell_count()) *
                           (params_.string("gravity.boundary") == "periodic" ? 8.5 : 28.0)
                     : 0.0;
    const double need =
        level_bytes + (batch_param == 0 ? 4 : 1) * memory_.device_bytes + gravity_bytes;
    const auto dev = exec::device_memory();
    if (dev && need > 0.95 * dev->first) {
      if (resident == "on")
        throw Error(ErrorKind::kResources,
                    strprintf("gpu.resident = \"on\": the patch data and buffers need %.2f GB "
                              "of GPU memory and the GPU has %.2f GB free; set gpu.resident = "
                              "\"auto\" or \"off\" to stage them through the host",
                              need / 1e9, dev->first / 1e9));
      log_line(
          "note: the patch data (%.2f GB with the buffers) do not fit in the GPU's %.2f GB "
          "free memory: they stay on the host and are staged per batch",
          need / 1e9, dev->first / 1e9);
    } else {
      resident_mode_ = true;
      log_line(
          "device-resident: the patch data (%.2f GB%s) stay on the GPU between steps; the "
          "host copy is updated for outputs, checkpoints and the totals of the log line%s",
          level_bytes / 1e9,
          ranks > 1 ? " per rank, about"
          : refined ? " on the root level"
                    : "",
          refined ? "; a regrid's flags and new families are made on the GPU (the host plans "
                    "it; a problem's own criterion, the Jeans length and the field criteria "
                    "flag on the host, with the levels copied back)"
          : self_gravity ? "; self-gravity's root density, cuFFT solve, potential and kicks "
                           "too"
                         : "");
    }
  }
  int batch = on_gpu ? batch_param : 0;
  if (resident_mode_ && batch == 0)  // no more than the level has: buffers are per group
    batch = static_cast<int>(std::min<long long>(4LL * executor_->preferred_batch(),
                                                 std::max<long long>(1, memory_.root_patches / 8)));
  pipeline_ = std::make_unique<exec::Pipeline>(*executor_, batch, hydro_->group_solver());
  hydro_->set_pipeline(pipeline_.get());
  schedule_ = {hydro_.get()};
  if (self_gravity) {
    gravity_ = std::make_unique<gravity::SelfGravity>(
        params_, model_, mesh_->geometry(), fields_.find(gravity::kPotentialField),
        fields_.find(gravity::kCorrectionField), on_gpu);
    gravity_->set_ranks(comm_, &partition_);
    if (params_.integer("amr.max_level") > 0) {
      poisson_ = std::make_unique<PoissonPass>(*gravity_);
      poisson_pipeline_ = std::make_unique<exec::Pipeline>(*executor_, batch, poisson_->sor());
      poisson_->set_pipeline(poisson_pipeline_.get());
    }
    using Role = GravityPass::Role;
    for (const Role role : {Role::kKickStart, Role::kSolve, Role::kKickEnd})
      gravity_passes_.push_back(
          std::make_unique<GravityPass>(*gravity_, role, poisson_.get(), &sor_stats_));
    schedule_ = {gravity_passes_[0].get(), hydro_.get(), gravity_passes_[1].get(),
                 gravity_passes_[2].get()};
  }
  refinement_ = RefinementParams::from_params(params_);
  subcycle_ = params_.boolean("amr.subcycle");
}

Simulation::~Simulation() = default;

void Simulation::fill_from_problem(mesh::Mesh& m) const {
  const int np = m.num_patches();
  ParallelErrors errors;  // problem code and the state check may throw
#pragma omp parallel for schedule(dynamic)
  for (int p = 0; p < np; ++p)
    errors.run(p, [&] {
      if (!m.holds(p)) return;  // several ranks: another rank's patch
      const double h = m.dx(m.patch(p).level);
      Real* u = m.current(p);
      const int nvar = model_.num_vars();
      std::vector<Real> c(nvar);
      for (int k = 0; k < mesh::kPatchSize; ++k)
        for (int j = 0; j < mesh::kPatchSize; ++j)
          for (int i = 0; i < mesh::kPatchSize; ++i) {
            const auto x = m.cell_center(p, i, j, k);
            const CellBox cell = CellBox::around(x, h);
            problem_->initial_state(cell, c.data());
            const int idx = (k * mesh::kPatchSize + j) * mesh::kPatchSize + i;
            if (model_.apply_floors(c.data()) == kernels::FloorResult::kUnphysical)
              throw Error(ErrorKind::kInput,
                          strprintf("problem '%s' gives a non-finite initial state at (%g, %g, %g)",
                                    problem_name_.c_str(), x[0], x[1], x[2]));
            for (int v = 0; v < nvar; ++v) u[v * mesh::kPatchCells + idx] = c[v];
          }
    });
  errors.rethrow();
}

void Simulation::install_problem_boundary(mesh::Mesh& m) const {
  if (!m.geometry().problem_boundaries()) return;
  const Problem* problem = problem_.get();
  m.set_problem_boundary({model_.num_vars(), [problem](const std::array<double, 3>& lo,
                                                       const std::array<double, 3>& hi, double t,
                                                       int dim, int side, Real* u) {
                            return problem->boundary_state(CellBox{lo, hi}, t, dim, side, u);
                          }});
}

void Simulation::adopt_mesh(std::unique_ptr<mesh::Mesh> next) {
  free_device();  // before the old mesh's pool goes (it may be page-locked)
  mesh_ = std::move(next);
  install_problem_boundary(*mesh_);
  repartition();
  verify_mesh("the initial mesh");
  registers_.build(*mesh_, partition_, comm_->rank());
  speeds_.resize(mesh_->num_levels());
  // From initial conditions the first step's speeds include what the discontinuities set
  // moving (a shock tube's fluid at rest has |v| + c = c, its rarefaction tail moves at
  // u* + c*: nearly twice that for Sod), so that the first root step, and the substeps of
  // the finer levels within it, stay within the stable Courant number.
  for (int level = 0; level < mesh_->num_levels(); ++level)
    speeds_[level] = level_max_speed(level, time_ == 0);
  level_steps_.resize(std::max<std::size_t>(level_steps_.size(), mesh_->num_levels()), 0);
}

void Simulation::verify_mesh(const char* when) const {
  if (!verify_mesh_) return;
  mesh_->check_invariants();
  // Several ranks: the families whose data this rank holds, and their children.
  const int rank = comm_->rank();
  const double mismatch = mesh::max_restriction_mismatch(
      *mesh_, comm_->size() == 1 ? std::function<bool(int)>() : [&](int p) {
        const mesh::PatchMeta& patch = mesh_->patch(p);
        return partition_.owns(rank, p) &&
               (patch.is_leaf() || partition_.owns(rank, patch.first_child));
      });
  if (mismatch > 1e-14)
    throw Error(
        ErrorKind::kInternal,
        strprintf("restriction inconsistent in %s: relative mismatch %.3e", when, mismatch));
}

void Simulation::initialize() {
  ScopedTimer t(timers_, Stage::kInit);
  // Level by level from the problem's function (Schive et al. 2010 §2.1), then restricted
  // downward so that every coarse cell is the average of what covers it.
  // Several ranks: each holds the data of its own families and of the others' that its
  // groups read (Simulation::repartition), and sets all of them from the problem: the
  // copies equal what an exchange would bring, bit for bit, so the flags of each pass
  // need no exchange. Errors of the problem's initial conditions or of the mesh's growth
  // are agreed, so that they stop all ranks alike.
  const bool ranks = comm_->size() > 1;
  if (ranks) hold_new_store();
  parallel::agreed(*comm_, [&] { fill_from_problem(*mesh_); });
  for (int pass = 0; pass < refinement_.max_level; ++pass) {
    const auto h = plan_hierarchy(*mesh_, refinement_, model_, *problem_, time_,
                                  ranks ? &partition_ : nullptr, ranks ? comm_ : nullptr);
    if (mesh_->has_hierarchy(h)) break;
    parallel::agreed(*comm_, [&] {
      check_mesh_growth(params_, memory_, mesh_->num_patches(), mesh_->pool_capacity_patches(), h,
                        true);
    });
    mesh_ = std::make_unique<mesh::Mesh>(mesh_->geometry(), fields_, h, !ranks);
    install_problem_boundary(*mesh_);
    if (ranks) hold_new_store();
    parallel::agreed(*comm_, [&] { fill_from_problem(*mesh_); });
  }
  // Several ranks: each restricts its own families and sends each average to the rank of
  // its parent, finest level first (as a step's restriction does).
  for (int level = mesh_->num_levels() - 1; level >= 1; --level) {
    if (ranks)
      restrict_level(level);
    else
      restrict_every_family(*mesh_, level);
  }
  adopt_mesh(std::move(mesh_));
  solve_gravity(true);
  log_gravity_setup();
  // The first step's time step respects the gravity speed too (later steps get it from
  // the kicks; a restart from its checkpoint).
  if (gravity_)
    for (int level = 0; level < mesh_->num_levels(); ++level) {
      const bool ranks = comm_->size() > 1;
      if (ranks && level > 0) exchange_buffers(level);  // the ghost layers' potential
      const double speed =
          gravity_->acceleration_speed(*mesh_, level, ranks ? &exchanges_[level].groups : nullptr);
      speeds_[level] = std::max(speeds_[level], comm_->max(speed));
    }
  initialized_ = true;
}

RunSummary Simulation::run(const RunControl& control) {
  if (!initialized_) initialize();
  check_output_dir_ = control.check_output_dir;
  const double t_end = params_.real("run.t_end");
  const long max_steps = static_cast<long>(params_.integer("run.max_steps"));
  const long log_every = static_cast<long>(params_.integer("run.log_interval"));
  const double log_seconds = params_.real("run.log_seconds");
  bool logged_step = false;
  const long regrid_every = static_cast<long>(params_.integer("amr.regrid_interval"));
  const double out_dt = params_.real("output.dt");
  const double ck_dt = params_.real("output.checkpoint_dt");
  const long ck_every = static_cast<long>(params_.integer("output.checkpoint_interval"));
  const bool checkpointing = ck_dt > 0 || ck_every > 0;
  const double wall_limit = parse_wall_time(params_.string("run.wall_time")).value_or(0);
  const double inf = std::numeric_limits<double>::infinity();
  log_line("patches per level: %s (%lld leaf cells)", level_summary().c_str(),
           mesh_->num_leaf_cells());
  parallel::forward_rank_messages(*comm_);  // the set-up's, from every rank

  if (comm_->rank() == 0) remove_stale_temporaries();
  if (resident_mode_) {
    // The first copy to the GPU belongs to the set-up, like the initial conditions.
    ScopedTimer t(timers_, Stage::kInit);
    ensure_device();
  }
  const bool history = params_.boolean("output.enabled") && params_.boolean("output.history");
  const long history_every = static_cast<long>(params_.integer("output.history_interval"));
  const double history_dt = params_.real("output.history_dt");
  if (history && !history_opened_) {
    history_opened_ = true;
    parallel::agreed(*comm_, [&] {
      if (comm_->rank() == 0)
        history_ = std::make_unique<io::HistoryFile>(
            io::history_file_name(params_.string("output.dir"), problem_name_), history_columns(),
            run_id_, problem_name_, restarted_ ? step_ : -1);
    });
    if (!restarted_) write_history_row(0.0);
  }
  next_history_ = history_dt > 0 ? (std::floor(time_ / history_dt) + 1) * history_dt : inf;
  RunSummary summary;
  if (!restarted_) {
    totals0_ = conserved_totals();
    write_plot(plot_index_++);
    last_plot_step_ = step_;
    next_plot_ = out_dt > 0 && params_.boolean("output.enabled") ? out_dt : inf;
    next_checkpoint_ = ck_dt > 0 ? ck_dt : inf;
  }
  watch_totals();
  const double wall0 = timers_.total();
  const double output0 = timers_.seconds(Stage::kOutput);
  const long long updates0 = cell_updates_;
  // The log line's rate covers the steps since the previous log line, end to end: all of
  // the loop's wall time except plot and checkpoint writing.
  double log_wall = wall0, log_output = output0, totals_wall = wall0;
  long long log_updates = updates0;
  const double time0 = time_;
  const long step0 = step_;
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - control.start).count();
  };
  double slowest_step = 0;  // over the last steps, for the wall-time budget
  double last_dt = 0;       // of the last step taken

  try {
    while (time_ < t_end && step_ < max_steps) {
      if (wall_limit > 0) {
        // Stop while a step and a checkpoint still fit: the next step is assumed as slow as
        // the slowest recent one, and the checkpoint as slow as the last (or 100 MB/s).
        const double rate = checkpoint_rate_ > 0 ? checkpoint_rate_ : 100e6;
        const double need = 1.25 * slowest_step + 1.5 * checkpoint_bytes() / rate + 1.0;
        if (agree(elapsed() + need > wall_limit)) {
          summary.stop = StopReason::kWallTime;
          log_line(
              "stopping before the wall-time limit %s: %.1f s elapsed, a step and a "
              "checkpoint need about %.1f s",
              params_.string("run.wall_time").c_str(), elapsed(), need);
          break;
        }
      }
      int limiting = 0;
      double dt = root_dt(&limiting);
      watch_.time_step(step_ + 1, dt, limiting);
      // GLM-MHD: ch is the largest fast speed of the step (the speed the time step comes
      // from), so that the psi waves are as fast as stability allows on every level.
      if (model_.has_magnetic_field())
        hydro_->set_glm(*std::max_element(speeds_.begin(), speeds_.end()), model_.glm_alpha());
      const double target = std::min(t_end, next_plot_);
      const bool hits_target = time_ + dt >= target;
      if (hits_target) dt = target - time_;
      const double w0 = timers_.total();
      const long long f0 = floored_, c0 = corrected_, r0 = reflux_withheld_;
      advance(0, time_, dt, 1.0, 1.0);
      last_dt = dt;
      time_ = hits_target ? target : time_ + dt;
      ++step_;
      const bool regridded = refinement_.max_level > 0 && step_ % regrid_every == 0 && regrid();
      if (gravity_ && mesh_->num_levels() > 1) {
        // Refluxing and restriction changed the coarse levels' density after their solves:
        // the root potential is solved again (a restart solves the same), and after a regrid
        // every refined level's, for the new patches (their prolonged potential is a guess).
        solve_gravity(regridded);
        // Each rank counts its own groups' solves.
        const long long unconverged = comm_->sum(sor_stats_.unconverged);
        if (unconverged > sor_unconverged_logged_) {
          log_line(
              "warning: step %ld: %lld patch-group SOR solves stopped at "
              "gravity.sor_max_iterations = %lld before reaching gravity.sor_tolerance",
              step_, unconverged - sor_unconverged_logged_,
              static_cast<long long>(params_.integer("gravity.sor_max_iterations")));
          sor_unconverged_logged_ = unconverged;
        }
      }
      const double w1 = timers_.total();
      slowest_step = std::max(0.9 * slowest_step, w1 - w0);
      const bool finishing = time_ >= t_end || step_ >= max_steps;
      // Step lines every log_every steps, or by wall time (log_seconds) when that is 0, the
      // first and the last step always; totals with each of them when the interval is in
      // steps, else about every minute (six step lines).
      // Decisions from wall-clock times are agreed between the ranks: the totals line is a
      // collective.
      bool totals_logged = false;
      const bool due = log_every > 0 ? step_ % log_every == 0
                                     : agree(!logged_step || w1 - log_wall >= log_seconds);
      if (due || finishing) {
        const double out = timers_.seconds(Stage::kOutput);
        const double busy = (w1 - log_wall) - (out - log_output);
        std::string repairs;
        if (corrected_ > c0) repairs += strprintf("  fofc %lld", corrected_ - c0);
        if (floored_ > f0) repairs += strprintf("  floors %lld", floored_ - f0);
        if (reflux_withheld_ > r0)
          repairs += strprintf("  reflux withheld %lld", reflux_withheld_ - r0);
        // The time left, at the pace of the loop so far (outputs included): to t_end, or to
        // max_steps if the run reaches that first.
        std::string eta;
        if (!finishing) {
          const double spent = w1 - wall0;
          double left = std::numeric_limits<double>::infinity();
          if (time_ > time0) left = spent * (t_end - time_) / (time_ - time0);
          if (step_ > step0)
            left = std::min(left, spent * double(max_steps - step_) / double(step_ - step0));
          if (std::isfinite(left)) eta = "  eta " + format_duration(left);
        }
        log_line(
            "step %7ld  t %.6e / %.4g (%.1f%%)  dt %.4e  cells %lld  %.3e cell-updates/s  "
            "patches %s%s%s",
            step_, time_, t_end, 100 * time_ / t_end, dt, mesh_->num_leaf_cells(),
            (cell_updates_ - log_updates) / std::max(busy, 1e-12), level_summary().c_str(),
            repairs.c_str(), eta.c_str());
        log_updates = cell_updates_;
        if (log_every > 0 || finishing || !logged_step ||
            agree(w1 - totals_wall >= 6 * log_seconds)) {
          log_totals_line();
          totals_wall = w1;
          totals_logged = true;
        }
        logged_step = true;
        log_wall = w1;
        log_output = out;
        parallel::forward_rank_messages(*comm_);
      }
      // History rows: by steps, by simulated time, or with the totals lines; the last step's
      // always.
      if (history && (finishing || (history_every > 0 && step_ % history_every == 0) ||
                      (history_dt > 0 && time_ >= next_history_) ||
                      (history_every == 0 && history_dt == 0 && totals_logged)))
        write_history_row(dt);
      while (history_dt > 0 && next_history_ <= time_) next_history_ += history_dt;
      if (time_ >= next_plot_ || (finishing && last_plot_step_ != step_)) {
        write_plot(plot_index_++);
        last_plot_step_ = step_;
        while (next_plot_ <= time_) next_plot_ += out_dt;
      }
      // Checkpoints never shorten a step, so they leave the solution unchanged.
      const bool due_time = time_ >= next_checkpoint_;
      while (next_checkpoint_ <= time_) next_checkpoint_ += ck_dt;
      if (due_time || (ck_every > 0 && step_ % ck_every == 0) || (finishing && checkpointing))
        summary.checkpoint = write_checkpoint();
      // A signal during the last step changes nothing: the run has finished.
      if (!finishing) {
        const int local = control.stop_signal ? control.stop_signal() : 0;
        if (const int sig = comm_->size() == 1 ? local : static_cast<int>(comm_->max(local))) {
          summary.stop = StopReason::kSignal;
          log_line("received signal %d (%s): stopping after step %ld", sig, strsignal(sig), step_);
          break;
        }
      }
    }
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kNumerical) write_failure_plot(e);
    throw;
  }
  // A run stopped early (wall time, signal) records its last step as a finished one does.
  if (history && summary.stop != StopReason::kFinished && last_history_step_ != step_)
    write_history_row(last_dt);
  summary.loop_seconds = timers_.total() - wall0;
  summary.output_seconds = timers_.seconds(Stage::kOutput) - output0;
  if (summary.stop != StopReason::kFinished) {
    if (last_checkpoint_step_ != step_) summary.checkpoint = write_checkpoint();
    if (summary.checkpoint.empty())
      summary.checkpoint =
          io::checkpoint_file_name(params_.string("output.dir"), problem_name_, step_);
    log_line(
        "checkpoint %s holds step %ld, t = %.9g; continue with: tessera run <file> "
        "--restart latest",
        summary.checkpoint.c_str(), step_, time_);
  } else if (last_plot_step_ != step_) {
    write_plot(plot_index_++);
    last_plot_step_ = step_;
  }

  summary.steps = step_;
  summary.time = time_;
  summary.wall_seconds = timers_.total() - wall0;
  const long long updates = cell_updates_ - updates0;
  const double pipeline_wall = timers_.seconds(Stage::kPrepare) + timers_.seconds(Stage::kSolve) +
                               timers_.seconds(Stage::kIdle) + timers_.seconds(Stage::kClose);
  summary.cell_updates_per_second =
      updates / std::max(summary.loop_seconds - summary.output_seconds, 1e-12);
  summary.pipeline_updates_per_second = updates / std::max(pipeline_wall, 1e-12);
  summary.plot_files = params_.boolean("output.enabled") ? plot_index_ : 0;

  log_run_summary(summary, updates, pipeline_wall);
  if (params_.boolean("output.enabled") && params_.boolean("output.history"))
    parallel::agreed(*comm_, [&] {
      if (comm_->rank() == 0) write_summary_json(summary);
    });
  return summary;
}

}  // namespace tessera::evolve
