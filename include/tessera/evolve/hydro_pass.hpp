// The hydro pass: the method-of-lines solver (mol_solver.hpp), or the relaxing-TVD one
// (relaxing_tvd_solver.hpp), on every field of the physics and the passive scalars,
// refluxed at coarse-fine faces.
#pragma once

#include <cmath>
#include <memory>

#include "tessera/evolve/mol_solver.hpp"
#include "tessera/evolve/relaxing_tvd_solver.hpp"
#include "tessera/exec/pass.hpp"

namespace tessera::evolve {

class HydroPass final : public exec::GroupPass {
 public:
  // The solver's variables are the first fields of the registry (physics::Model::fields).
  // fofc: first-order flux correction (hydro.fofc; kernels/mol_stages.hpp).
  HydroPass(const kernels::Scheme& scheme, const kernels::MolParams& params, bool fofc = false)
      : solver_(scheme, params, fofc ? MolSolver::Fofc::kDetect : MolSolver::Fofc::kOff),
        corrector_(scheme, params, MolSolver::Fofc::kCorrect),
        fofc_(fofc) {}
  // The relaxing-TVD scheme with `limiter` in place of the MOL solver (hydro.scheme).
  HydroPass(const kernels::Scheme& scheme, const kernels::MolParams& params,
            kernels::TvdLimiter limiter)
      : solver_(scheme, params),
        corrector_(scheme, params, MolSolver::Fofc::kCorrect),
        rtvd_(std::make_unique<RelaxingTvdSolver>(scheme.physics, limiter, params)) {}

  std::string name() const override { return "hydro"; }
  exec::FieldRange inputs() const override { return {0, solver_.nvar()}; }
  exec::FieldRange outputs() const override { return {0, solver_.nvar()}; }
  bool refluxes() const override { return true; }
  const exec::GroupSolver& solver(const exec::LevelStep& s) override {
    const double dt_over_dx = s.dt / s.mesh.dx(s.level);
    if (rtvd_) {
      // Forward (x -> y -> z) and backward sweeps alternate from one step of the level to
      // the next (kernels/relaxing_tvd.hpp).
      rtvd_->set_step(Real(dt_over_dx), s.level_step % 2 == 0);
      return *rtvd_;
    }
    configure(solver_, dt_over_dx);
    return solver_;
  }
  bool corrects() const override { return fofc_ && !rtvd_; }
  const exec::GroupSolver* correcting_solver(const exec::LevelStep& s,
                                             bool flag_unphysical) override {
    if (!corrects()) return nullptr;
    configure(corrector_, s.dt / s.mesh.dx(s.level));
    corrector_.set_flag_unphysical(flag_unphysical);
    return &corrector_;
  }
  // GLM-MHD: the cleaning speed ch of the root step about to be taken (the largest fast
  // speed on the mesh) and the parabolic parameter alpha (mhd.glm_alpha).
  void set_glm(double ch, double alpha) {
    glm_speed_ = ch;
    glm_alpha_ = alpha;
  }
  const MolSolver& mol() const { return solver_; }
  const MolSolver& corrector() const { return corrector_; }
  // The solver the pass runs (what its pipeline is built for).
  const exec::GroupSolver& group_solver() const {
    return rtvd_ ? static_cast<const exec::GroupSolver&>(*rtvd_) : solver_;
  }

 private:
  void configure(MolSolver& s, double dt_over_dx) const {
    s.set_dt_over_dx(Real(dt_over_dx));
    // Mixed GLM cleaning (Mignone & Tzeferacos 2010 eq. 27): psi *= exp(-alpha ch dt/dx).
    s.set_glm(Real(glm_speed_), Real(std::exp(-glm_alpha_ * glm_speed_ * dt_over_dx)));
  }

  MolSolver solver_;
  MolSolver corrector_;  // FOFC's correcting pass
  bool fofc_ = false;
  std::unique_ptr<RelaxingTvdSolver> rtvd_;
  double glm_speed_ = 1;
  double glm_alpha_ = 0;
};

}  // namespace tessera::evolve
