// The method-of-lines solver (kernels/mol_stages.hpp) as a GroupSolver: every physics,
// reconstruction, Riemann solver and integrator, with passive scalars.
#pragma once

#include "kernels/scheme.hpp"
#include "tessera/exec/group_solver.hpp"

namespace tessera::evolve {

class MolSolver final : public exec::GroupSolver {
 public:
  // First-order flux correction (kernels/mol_stages.hpp): off; the detecting pass, which
  // flags the cells a step leaves unphysical; or the correcting pass, whose input boxes
  // carry the flags as one more variable.
  enum class Fofc { kOff, kDetect, kCorrect };
  // Throws Error(kInternal) for a Riemann solver the physics does not have (the
  // parameters are checked before: physics::Model).
  MolSolver(const kernels::Scheme& scheme, const kernels::MolParams& params,
            Fofc fofc = Fofc::kOff);
  Fofc fofc() const { return fofc_; }

  const kernels::Scheme& scheme() const { return scheme_; }
  const kernels::MolParams& params() const { return params_; }
  // The level's dt / dx, set before each level step.
  void set_dt_over_dx(Real dt_over_dx) { params_.dt_over_dx = dt_over_dx; }
  // GLM-MHD: the cleaning speed ch of the root step and psi's decay factor of the level
  // step (kernels/physics_mhd.hpp).
  void set_glm(Real ch, Real psi_decay) {
    params_.phys.mhd.ch = ch;
    params_.phys.mhd.psi_decay = psi_decay;
  }
  int nvar() const { return kernels::solver_vars(scheme_, params_.scalars); }
  // Whether the step flags the cells it leaves unphysical instead of flooring them (set
  // for the detecting pass; a correcting pass that is not the last flags too).
  void set_flag_unphysical(bool flag) { params_.flag_unphysical = flag; }

  exec::GroupShape shape() const override {
    const int n = nvar();
    return {kernels::ghost_width(scheme_), fofc_ == Fofc::kCorrect ? n + 1 : n, n, n};
  }
  int flag_reach() const override { return kernels::flag_reach(scheme_); }
  std::size_t host_scratch_reals() const override;
  // The primitives, the stage state and three flux arrays of the box.
  std::size_t device_scratch_reals() const override {
    return 5 * std::size_t(nvar()) * kernels::box_cells(shape().ghost);
  }
  void flagged_cells(const Real* out, std::vector<int>& cells) const override;
  void solve_host(const Real* in, Real* out, Real* flux, kernels::GroupResult* result,
                  Real* scratch) const override;
  void solve_device(const exec::DeviceBatch& b, void* stream) const override;  // mol_solver_cuda.cu
  std::string variable_name(int v) const override {
    return kernels::conserved_name(scheme_.physics, v);
  }

 private:
  kernels::Scheme scheme_;
  kernels::MolParams params_;
  Fofc fofc_ = Fofc::kOff;
};

}  // namespace tessera::evolve
