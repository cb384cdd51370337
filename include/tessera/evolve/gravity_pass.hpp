// The passes of self-gravity (gravity/self_gravity.hpp): a level step of a self-gravitating
// run is kick(dt/2) - hydro - solve + kick(dt/2) (Strang splitting; kernels/gravity.hpp).
// Both work on the whole root level at once (LevelPass).
#pragma once

#include <string>

#include "tessera/core/timers.hpp"
#include "tessera/evolve/pass.hpp"
#include "tessera/gravity/self_gravity.hpp"

namespace tessera::evolve {

class GravityPass final : public LevelPass {
 public:
  // solve_first: solve for the potential of the current density before the kick (the pass
  // after the hydro step); otherwise kick with the potential of the last solve.
  GravityPass(gravity::SelfGravity& gravity, bool solve_first)
      : gravity_(gravity), solve_first_(solve_first) {}
  std::string name() const override {
    return solve_first_ ? "gravity (solve and kick)" : "gravity (kick)";
  }
  PassStats run(const LevelStep& s) override {
    ScopedTimer t(s.timers, Stage::kGravity);
    if (solve_first_) gravity_.solve(s.mesh);
    PassStats stats;
    stats.max_speed = gravity_.kick(s.mesh, 0.5 * s.dt);
    return stats;
  }

 private:
  gravity::SelfGravity& gravity_;
  bool solve_first_;
};

}  // namespace tessera::evolve
