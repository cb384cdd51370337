// The hydro pass: the method-of-lines solver (mol_solver.hpp) on every field of the
// physics and the passive scalars, refluxed at coarse-fine faces.
#pragma once

#include <cmath>

#include "tessera/evolve/mol_solver.hpp"
#include "tessera/evolve/pass.hpp"

namespace tessera::evolve {

class HydroPass final : public GroupPass {
 public:
  // The solver's variables are the first fields of the registry (physics::Model::fields).
  HydroPass(const kernels::Scheme& scheme, const kernels::MolParams& params)
      : solver_(scheme, params) {}

  std::string name() const override { return "hydro"; }
  FieldRange inputs() const override { return {0, solver_.nvar()}; }
  FieldRange outputs() const override { return {0, solver_.nvar()}; }
  bool refluxes() const override { return true; }
  const GroupSolver& solver(const LevelStep& s) override {
    const double dt_over_dx = s.dt / s.mesh.dx(s.level);
    solver_.set_dt_over_dx(Real(dt_over_dx));
    // Mixed GLM cleaning (Mignone & Tzeferacos 2010 eq. 27): psi *= exp(-alpha ch dt/dx).
    solver_.set_glm(Real(glm_speed_), Real(std::exp(-glm_alpha_ * glm_speed_ * dt_over_dx)));
    return solver_;
  }
  // GLM-MHD: the cleaning speed ch of the root step about to be taken (the largest fast
  // speed on the mesh) and the parabolic parameter alpha (mhd.glm_alpha).
  void set_glm(double ch, double alpha) {
    glm_speed_ = ch;
    glm_alpha_ = alpha;
  }
  const MolSolver& mol() const { return solver_; }

 private:
  MolSolver solver_;
  double glm_speed_ = 1;
  double glm_alpha_ = 0;
};

}  // namespace tessera::evolve
