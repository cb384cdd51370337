#include "tessera/evolve/simulation.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/io/plot_output.hpp"
#include "tessera/mesh/geometry.hpp"

namespace tessera::evolve {

namespace {

kernels::Scheme scheme_from_params(const Params& p) {
  kernels::Scheme s;
  const std::string& limiter = p.string("hydro.limiter");
  if (p.string("hydro.reconstruction") == "pcm")
    s.recon = kernels::Reconstruction::kPcm;
  else if (limiter == "minmod")
    s.recon = kernels::Reconstruction::kPlmMinmod;
  else if (limiter == "vanleer")
    s.recon = kernels::Reconstruction::kPlmVanLeer;
  else
    s.recon = kernels::Reconstruction::kPlmMc;
  const std::string& rs = p.string("hydro.riemann");
  s.riemann = rs == "hll"   ? kernels::RiemannSolver::kHll
              : rs == "llf" ? kernels::RiemannSolver::kLlf
                            : kernels::RiemannSolver::kHllc;
  return s;
}

// Batches of a few groups per thread keep the staging buffers in cache on the CPU.
int cpu_groups_per_batch() {
  return 4 * omp_get_max_threads();
}

}  // namespace

Simulation::Simulation(Params params) : params_(std::move(params)) {
  if (params_.integer("run.threads") > 0)
    omp_set_num_threads(static_cast<int>(params_.integer("run.threads")));
  problem_name_ = params_.string("problem.name");
  mesh_ = std::make_unique<mesh::Mesh>(mesh::geometry_from_params(params_), kernels::kNumHydroVars);
  problem_ = create_problem(params_);
  executor_ = make_cpu_executor();
  pipeline_ = std::make_unique<Pipeline>(*executor_, cpu_groups_per_batch());
  args_.scheme = scheme_from_params(params_);
  args_.params.eos = {Real(params_.real("hydro.gamma")), Real(params_.real("hydro.density_floor")),
                      Real(params_.real("hydro.pressure_floor"))};
}

Simulation::~Simulation() = default;

void Simulation::initialize() {
  ScopedTimer t(timers_, Stage::kInit);
  auto& m = *mesh_;
  const int np = m.num_patches();
#pragma omp parallel for schedule(dynamic)
  for (int p = 0; p < np; ++p) {
    const double h = m.dx(m.patch(p).level);
    Real* u = m.current(p);
    for (int k = 0; k < mesh::kPatchSize; ++k)
      for (int j = 0; j < mesh::kPatchSize; ++j)
        for (int i = 0; i < mesh::kPatchSize; ++i) {
          const auto x = m.cell_center(p, i, j, k);
          CellBox cell;
          for (int d = 0; d < 3; ++d) cell.lo[d] = x[d] - 0.5 * h, cell.hi[d] = x[d] + 0.5 * h;
          kernels::Cons c = problem_->initial_state(cell);
          const int idx = (k * mesh::kPatchSize + j) * mesh::kPatchSize + i;
          if (kernels::apply_floors(c, args_.params.eos) == kernels::FloorResult::kUnphysical)
            throw Error(ErrorKind::kInput,
                        strprintf("problem '%s' gives a non-finite initial state at (%g, %g, %g)",
                                  problem_name_.c_str(), x[0], x[1], x[2]));
          const Real vals[5] = {c.dens, c.mom[0], c.mom[1], c.mom[2], c.engy};
          for (int v = 0; v < 5; ++v) u[v * mesh::kPatchCells + idx] = vals[v];
        }
  }
  initialized_ = true;
}

double Simulation::initial_max_speed() const {
  const auto& m = *mesh_;
  double s = 0;
  const int np = m.num_patches();
#pragma omp parallel for reduction(max : s)
  for (int p = 0; p < np; ++p) {
    const Real* u = m.current(p);
    for (int c = 0; c < mesh::kPatchCells; ++c) {
      const int n = mesh::kPatchCells;
      const kernels::Cons cu = {u[c], {u[n + c], u[2 * n + c], u[3 * n + c]}, u[4 * n + c]};
      const auto w = kernels::cons_to_prim(cu, args_.params.eos);
      s = std::max(s, double(kernels::max_signal_speed(w, args_.params.eos.gamma)));
    }
  }
  return s;
}

double Simulation::stable_dt(double max_speed) const {
  if (!(max_speed > 0) || !std::isfinite(max_speed))
    throw Error(ErrorKind::kNumerical,
                strprintf("step %ld: maximum signal speed is %g, no stable time step exists", step_,
                          max_speed));
  return params_.real("hydro.cfl") * mesh_->dx(0) / max_speed;
}

std::array<double, 5> Simulation::conserved_totals() const {
  const auto& m = *mesh_;
  std::array<double, 5> tot{};
  for (int p = 0; p < m.num_patches(); ++p) {
    if (!m.patch(p).is_leaf()) continue;
    const double h = m.dx(m.patch(p).level), vol = h * h * h;
    const Real* u = m.current(p);
    for (int v = 0; v < 5; ++v) {
      double s = 0;
      for (int c = 0; c < mesh::kPatchCells; ++c) s += u[v * mesh::kPatchCells + c];
      tot[v] += s * vol;
    }
  }
  return tot;
}

std::optional<double> Simulation::density_l1_error() const {
  const auto& m = *mesh_;
  const auto& geo = m.geometry();
  double err = 0, volume = 0;
  for (int p = 0; p < m.num_patches(); ++p) {
    if (!m.patch(p).is_leaf()) continue;
    const double h = m.dx(m.patch(p).level);
    const Real* u = m.current(p);
    for (int k = 0; k < mesh::kPatchSize; ++k)
      for (int j = 0; j < mesh::kPatchSize; ++j)
        for (int i = 0; i < mesh::kPatchSize; ++i) {
          const auto x = m.cell_center(p, i, j, k);
          CellBox cell;
          for (int d = 0; d < 3; ++d) cell.lo[d] = x[d] - 0.5 * h, cell.hi[d] = x[d] + 0.5 * h;
          const auto exact = problem_->analytic_density(cell, time_);
          if (!exact) return std::nullopt;
          err +=
              std::fabs(u[(k * mesh::kPatchSize + j) * mesh::kPatchSize + i] - *exact) * h * h * h;
        }
  }
  for (int d = 0; d < 3; ++d) volume = (d == 0 ? 1 : volume) * (geo.xmax[d] - geo.xmin[d]);
  return err / volume;
}

void Simulation::write_plot(int index) {
  if (!params_.boolean("output.enabled")) return;
  ScopedTimer t(timers_, Stage::kOutput);
  const std::string dir = params_.string("output.dir");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(ErrorKind::kIo, "output.dir '" + dir + "': cannot create: " + ec.message());
  const std::string path = io::plot_file_name(dir, problem_name_, index);
  io::write_plot_file(path, io::make_plot_file(*mesh_, args_.params.eos, problem_name_,
                                               static_cast<int>(step_), time_, params_.to_toml()));
  log_line("wrote %s", path.c_str());
}

RunSummary Simulation::run() {
  if (!initialized_) initialize();
  const double t_end = params_.real("run.t_end");
  const long max_steps = static_cast<long>(params_.integer("run.max_steps"));
  const long log_every = static_cast<long>(params_.integer("run.log_interval"));
  const double out_dt = params_.real("output.dt");
  const long long cells = mesh_->num_leaf_cells();
  const auto totals0 = conserved_totals();

  RunSummary summary;
  int plot_index = 0;
  write_plot(plot_index++);
  long last_plot_step = step_;
  double next_plot = out_dt > 0 ? out_dt : std::numeric_limits<double>::infinity();
  double max_speed = initial_max_speed();
  const double wall0 = timers_.total();
  long long updates = 0;

  while (time_ < t_end && step_ < max_steps) {
    double dt = stable_dt(max_speed);
    double target = std::min(t_end, next_plot);
    const bool hits_target = time_ + dt >= target;
    if (hits_target) dt = target - time_;
    args_.params.dt_over_dx = Real(dt / mesh_->dx(0));
    const double w0 = timers_.total();
    const LevelStepStats stats = pipeline_->advance_level(*mesh_, 0, args_, step_ + 1, timers_);
    const double w1 = timers_.total();
    time_ = hits_target ? target : time_ + dt;
    ++step_;
    updates += cells;
    max_speed = stats.max_speed;
    if (step_ % log_every == 0 || time_ >= t_end)
      log_line("step %7ld  t %.6e  dt %.4e  cells %lld  %.3e cell-updates/s%s", step_, time_, dt,
               cells, cells / std::max(w1 - w0, 1e-12),
               stats.floored ? strprintf("  floors %lld", stats.floored).c_str() : "");
    if (time_ >= next_plot) {
      write_plot(plot_index++);
      last_plot_step = step_;
      while (next_plot <= time_) next_plot += out_dt;
    }
  }
  if (last_plot_step != step_) write_plot(plot_index++);

  summary.steps = step_;
  summary.time = time_;
  summary.wall_seconds = timers_.total() - wall0;
  const double solve_wall = timers_.seconds(Stage::kPrepare) + timers_.seconds(Stage::kSolve) +
                            timers_.seconds(Stage::kClose);
  summary.cell_updates_per_second = updates / std::max(solve_wall, 1e-12);
  summary.plot_files = params_.boolean("output.enabled") ? plot_index : 0;

  const auto totals1 = conserved_totals();
  log_line("finished: %ld steps, t = %.9g, %.3e cell-updates/s (prepare+solve+close, %d threads)",
           step_, time_, summary.cell_updates_per_second, omp_get_max_threads());
  static const char* kNames[5] = {"mass", "momentum x", "momentum y", "momentum z", "energy"};
  for (int v = 0; v < 5; ++v)
    log_line("total %-10s %+.15e (change %+.3e)", kNames[v], totals1[v], totals1[v] - totals0[v]);
  if (const auto err = density_l1_error())
    log_line("L1 density error vs analytic solution: %.6e", *err);
  log_line("timing breakdown:\n%s", timers_.breakdown().c_str());
  return summary;
}

}  // namespace tessera::evolve
