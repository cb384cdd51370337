// The passes of self-gravity (gravity/self_gravity.hpp): a level step of a self-gravitating
// run is kick(dt/2) - hydro - solve - kick(dt/2) (Strang splitting; kernels/gravity.hpp).
// The root level solves with the FFT (a LevelPass on the whole level); a refined level with
// red-black SOR per patch group (PoissonPass, a GroupPass through its own pipeline), its
// ghost layer interpolated from the coarser level's potential at the end of the step.
#pragma once

#include <string>

#include "tessera/core/timers.hpp"
#include "tessera/exec/pass.hpp"
#include "tessera/gravity/self_gravity.hpp"
#include "tessera/gravity/sor_solver.hpp"

namespace tessera::evolve {

// The refined levels' Poisson solve (gravity/sor_solver.hpp): reads the density and the
// potential (gravity::gather_potential at the step's end weight), writes the potential,
// whose previous values stay in the other slot (exchanges_outputs) for the finer levels'
// ghost values in time.
class PoissonPass final : public exec::GroupPass {
 public:
  explicit PoissonPass(const gravity::SelfGravity& gravity)
      : gravity_(gravity), solver_(gravity.sor_params()) {}
  std::string name() const override { return "gravity (SOR)"; }
  exec::FieldRange inputs() const override { return {gravity_.phi_field(), 1}; }
  int input_count() const override { return 2; }
  exec::FieldRange outputs() const override { return {gravity_.phi_field(), 1}; }
  bool refluxes() const override { return false; }
  bool exchanges_outputs() const override { return true; }
  const exec::GroupSolver& solver(const exec::LevelStep& s) override {
    const double h = s.mesh.dx(s.level);
    kernels::SorParams p = gravity_.sor_params();
    p.source_scale = Real(gravity_.four_pi_g() * h * h);
    p.mean = Real(gravity_.mean_density());
    if (smoothing_ > 0) {
      // A smoothing pass of the multigrid cycle: a fixed number of red-black Gauss-Seidel
      // iterations (omega = 1; over-relaxation speeds up the smooth modes of one group's
      // solve, which the coarser levels correct here, and damps the rough ones less).
      p.max_iterations = smoothing_;
      p.tolerance = 0;
      p.omega = 1;
    }
    solver_.set_params(p);
    return solver_;
  }
  bool prepare(const exec::LevelStep& s, int first_patch, int, Real* box) override {
    constexpr std::size_t n3 = kernels::box_cells(1);
    gravity::gather_potential(s.mesh, gravity_.phi_field(), first_patch, s.coarse_weight_end, box,
                              box + n3, !sibling_ghosts_, gravity_.source_field(), &gravity_);
    return true;
  }
  // A device-resident level: the boxes gathered on the GPU from the level's potential
  // tables, as prepare() gathers them on the host.
  const exec::DeviceGather* resident_gather(const exec::LevelStep& s) override {
    return s.resident ? gravity_.device_gather(s.mesh, *s.resident, s.level, s.coarse_weight_end,
                                               !sibling_ghosts_)
                      : nullptr;
  }
  // Whether the next runs take the ghost values on faces shared with a same-level group
  // from that group's potential (sibling relaxation, Schive et al. 2010 §2.3) instead of
  // from the coarser level.
  void set_sibling_ghosts(bool on) { sibling_ghosts_ = on; }
  // Whether the next runs only smooth (this many iterations, Gauss-Seidel) instead of
  // solving each group to the tolerance; 0: solve.
  void set_smoothing(int iterations) { smoothing_ = iterations; }
  const gravity::SorSolver& sor() const { return solver_; }

 private:
  const gravity::SelfGravity& gravity_;
  gravity::SorSolver solver_;
  bool sibling_ghosts_ = false;
  int smoothing_ = 0;
};

// What the SOR solves of a run did, for the log and the benchmark.
struct SorStats {
  long long solves = 0, groups = 0, iterations = 0, unconverged = 0;
  double seconds = 0;
  Timers timers;  // the Poisson pipeline's stages (prepare, solve, idle, close)
};

// A level step of a self-gravitating run has three gravity passes: the kick at its start
// (with the potential at the step's start), the solve after the hydro step, and the kick at
// its end (with the new potential). The solve and the kick after it are separate passes so
// that, on several ranks, a refined level's kick (whose ghost layer holds the same-level
// neighbours' new potential) comes after the exchange that delivers it.
class GravityPass final : public exec::LevelPass {
 public:
  enum class Role { kKickStart, kSolve, kKickEnd };
  // `poisson`: the refined levels' solve (null in runs without refinement).
  GravityPass(gravity::SelfGravity& gravity, Role role, PoissonPass* poisson, SorStats* sor)
      : gravity_(gravity), role_(role), poisson_(poisson), sor_(sor) {}
  std::string name() const override {
    return role_ == Role::kSolve ? "gravity (solve)" : "gravity (kick)";
  }
  // A refined level's kick reads its neighbours' potential (and the coarser level's); the
  // root's reads the root solve's own copy, and a solve reads only the coarser level,
  // which does not change during the finer level's steps.
  bool reads_neighbours(int level) const override { return level > 0 && role_ != Role::kSolve; }
  exec::PassStats run(const exec::LevelStep& s) override {
    ScopedTimer t(s.timers, Stage::kGravity);
    exec::PassStats stats;
    // A device-resident level (one rank) is solved and kicked on the GPU.
    if (role_ == Role::kSolve) {
      if (s.level == 0)
        gravity_.solve(s.mesh, s.resident);
      else
        solve_refined(s);
      return stats;
    }
    const double dt = 0.5 * s.dt;
    if (s.level == 0)
      stats.max_speed = gravity_.kick(s.mesh, dt, s.groups, s.resident);
    else
      stats.max_speed = gravity_.kick_refined(
          s.mesh, s.level, dt, role_ == Role::kKickEnd ? s.coarse_weight_end : s.coarse_weight,
          s.groups, s.resident);
    return stats;
  }
  // The SOR solve of refined level s.level (its ghost layer at s.coarse_weight_end), or with
  // `smoothing` > 0 that many Gauss-Seidel iterations per group (a multigrid smoothing
  // pass, which is not meant to converge: not counted as unconverged); s.groups only.
  void solve_refined(const exec::LevelStep& s, bool sibling_ghosts = false, int smoothing = 0) {
    poisson_->set_sibling_ghosts(sibling_ghosts);
    poisson_->set_smoothing(smoothing);
    // Its own timers: the hydro pipeline's stages stay the hydro's.
    exec::LevelStep own{s.mesh,      s.level,      s.dt,       s.coarse_weight,    s.step,
                        s.registers, sor_->timers, s.resident, s.coarse_weight_end};
    own.groups = s.groups;
    own.time = s.time;
    const auto t0 = Timers::Clock::now();
    const exec::PassStats r = poisson_->run(own);
    poisson_->set_sibling_ghosts(false);
    poisson_->set_smoothing(0);
    sor_->seconds += std::chrono::duration<double>(Timers::Clock::now() - t0).count();
    ++sor_->solves;
    sor_->groups += r.groups;
    sor_->iterations += r.iterations;
    if (smoothing == 0) sor_->unconverged += r.unconverged;
  }

 private:
  gravity::SelfGravity& gravity_;
  Role role_;
  PoissonPass* poisson_;
  SorStats* sor_;
};

}  // namespace tessera::evolve
