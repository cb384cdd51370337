// The refined levels' Poisson solver as a GroupSolver (exec/group_solver.hpp): red-black
// SOR per patch group (kernels/poisson_sor.hpp; Schive et al. 2010 §2.3 and §3.2), run by
// the same prepare/solve/close pipeline and executors as the hydro solver.
//
// Input box: the density and the potential, 18^3 each (one ghost layer; only the
// potential's ghost cells are read, as the Dirichlet boundary). Output: the potential's
// 16^3 interior. Per-group results: iterations taken, and whether they ran out.
#pragma once

#include "kernels/poisson_sor.hpp"
#include "tessera/exec/group_solver.hpp"

namespace tessera::gravity {

class SorSolver final : public exec::GroupSolver {
 public:
  explicit SorSolver(const kernels::SorParams& params) : params_(params) {}

  // The level's 4 pi G h^2 and the mean density subtracted (periodic), before each solve.
  void set_level(Real source_scale, Real mean) {
    params_.source_scale = source_scale;
    params_.mean = mean;
  }
  // Every parameter at once (the level's, and a smoothing pass's iteration limit).
  void set_params(const kernels::SorParams& params) { params_ = params; }
  const kernels::SorParams& params() const { return params_; }

  exec::GroupShape shape() const override { return {1, 2, 1, 0}; }
  // The potential box being relaxed and the source.
  std::size_t host_scratch_reals() const override {
    return std::size_t(kernels::box_cells(1)) + kernels::kGroupCells;
  }
  std::size_t device_scratch_reals() const override { return 0; }
  void solve_host(const Real* in, Real* out, Real* flux, kernels::GroupResult* result,
                  Real* scratch) const override;
  void solve_device(const exec::DeviceBatch& b, void* stream) const override;  // .cu
  std::string variable_name(int v) const override { return v == 0 ? "rho" : "phi"; }

 private:
  kernels::SorParams params_;
};

}  // namespace tessera::gravity
