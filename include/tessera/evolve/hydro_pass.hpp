// The hydro pass: the method-of-lines solver (mol_solver.hpp) on every field of the
// physics and the passive scalars, refluxed at coarse-fine faces.
#pragma once

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
    solver_.set_dt_over_dx(Real(s.dt / s.mesh.dx(s.level)));
    return solver_;
  }
  const MolSolver& mol() const { return solver_; }

 private:
  MolSolver solver_;
};

}  // namespace tessera::evolve
