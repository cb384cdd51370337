#include "tessera/evolve/simulation.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

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

kernels::Scheme scheme_from_params(const Params& p, const physics::Model& model) {
  kernels::Scheme s;
  s.physics = model.physics();
  const std::string& limiter = p.string("hydro.limiter");
  if (p.string("hydro.reconstruction") == "pcm")
    s.recon = kernels::Reconstruction::kPcm;
  else if (p.string("hydro.reconstruction") == "ppm")
    s.recon = kernels::Reconstruction::kPpm;
  else if (p.string("hydro.reconstruction") == "ppm_char")
    s.recon = kernels::Reconstruction::kPpmChar;
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
    if (params_.string("hydro.reconstruction").starts_with("ppm") &&
        params_.string("hydro.integrator") == "rk2")
      log_line(
          "note: PPM with rk2 is a centred scheme where the flow is smooth, and SSP-RK2 lets "
          "its modes grow slowly: in long runs of smooth, low-amplitude flow use "
          "hydro.integrator = \"vl2\" or PLM (docs/user_guide.md, hydro.reconstruction)");
  }
  // Device residency: the default for GPU runs whose data fit, adaptive ones on one rank.
  const bool on_gpu = executor_->name() != std::string("cpu");
  const int batch_param = static_cast<int>(params_.integer("gpu.groups_per_batch"));
  const bool self_gravity = params_.boolean("gravity.enabled");
  choose_residency(comm);
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

Simulation::TermsSent Simulation::correction_terms_sent() const {
  return {terms_sent_, gravity_ ? gravity_->device_terms_sent() : 0};
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
      std::vector<std::size_t> families;
      for (const auto& level : h) families.push_back(level.size());
      check_mesh_growth(params_, memory_, mesh_->num_patches(), mesh_->pool_capacity_patches(),
                        families, true);
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

}  // namespace tessera::evolve
