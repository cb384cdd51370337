// The relaxing-TVD scheme (kernels/relaxing_tvd.hpp; hydro.scheme = "relaxing_tvd") as a
// GroupSolver: adiabatic and isothermal gas with passive scalars, 3 ghost layers, one
// dimensionally split sweep per step (forward or backward, set per level step).
#pragma once

#include "kernels/relaxing_tvd.hpp"
#include "tessera/exec/group_solver.hpp"

namespace tessera::evolve {

class RelaxingTvdSolver final : public exec::GroupSolver {
 public:
  // Throws Error(kInternal) for MHD (the parameters are checked before: physics::Model).
  RelaxingTvdSolver(kernels::Physics physics, kernels::TvdLimiter limiter,
                    const kernels::MolParams& params);

  // The level's dt / dx and the sweep order (x -> y -> z when forward), before each step.
  void set_step(Real dt_over_dx, bool forward) {
    params_.dt_over_dx = dt_over_dx;
    params_.forward = forward;
  }
  const kernels::RtvdParams& params() const { return params_; }
  kernels::TvdLimiter limiter() const { return limiter_; }
  int nvar() const { return kernels::physics_vars(physics_) + params_.scalars; }

  exec::GroupShape shape() const override {
    const int n = nvar();
    return {kernels::kGhostRtvd, n, n, n};
  }
  std::size_t host_scratch_reals() const override;
  // On the CPU: the state between sweeps, the four relaxed-flux arrays of the box and one
  // floor mark per box cell (kernels::RtvdArrays::marks); the GPU's fused sweeps keep the
  // fluxes in shared memory and need only the state and the marks.
  std::size_t device_scratch_reals() const override {
    return shape().in_reals() + kernels::box_cells(kernels::kGhostRtvd);
  }
  void solve_host(const Real* in, Real* out, Real* flux, kernels::GroupResult* result,
                  Real* scratch) const override;
  void solve_device(const exec::DeviceBatch& b, void* stream) const override;  // ..._cuda.cu
  std::string variable_name(int v) const override { return kernels::conserved_name(physics_, v); }

 private:
  kernels::Physics physics_;
  kernels::TvdLimiter limiter_;
  kernels::RtvdParams params_;
};

}  // namespace tessera::evolve
