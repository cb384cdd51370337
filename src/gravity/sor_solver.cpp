#include "tessera/gravity/sor_solver.hpp"

#include <algorithm>

namespace tessera::gravity {

void SorSolver::solve_host(const Real* in, Real* out, Real*, kernels::GroupResult* result,
                           Real* scratch) const {
  constexpr int n = kernels::kSorBox, g = kernels::kGroupSize;
  constexpr int n3 = n * n * n;
  Real* phi = scratch;
  Real* src = scratch + n3;
  std::copy(in + n3, in + 2 * n3, phi);
  for (int k = 0; k < g; ++k)
    for (int j = 0; j < g; ++j)
      for (int i = 0; i < g; ++i)
        src[(k * g + j) * g + i] =
            params_.source_scale * (in[((k + 1) * n + (j + 1)) * n + (i + 1)] - params_.mean);
  bool converged = false;
  const int iterations = kernels::sor_relax_host(phi, src, params_, &converged);
  for (int k = 0; k < g; ++k)
    for (int j = 0; j < g; ++j)
      std::copy_n(phi + ((k + 1) * n + (j + 1)) * n + 1, g, out + (k * g + j) * g);
  *result = {Real(0), 0, -1, iterations, converged ? 0 : 1, 0};
}

}  // namespace tessera::gravity
