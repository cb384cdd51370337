// The relaxing-TVD group solver on the CPU (relaxing_tvd.hpp over loop_cpu.hpp).
#include "kernels/rtvd_cpu.hpp"

#include "kernels/loop_cpu.hpp"
#include "kernels/relaxing_tvd.hpp"

namespace tessera::kernels {

std::size_t rtvd_scratch_reals(int nvar) {
  return (5 * std::size_t(nvar) + 1) * box_cells(kGhostRtvd);
}

void rtvd_group_cpu(Physics physics, TvdLimiter limiter, const RtvdParams& p, const Real* in,
                    Real* out, Real* face_flux, GroupResult* result, Real* scratch) {
  const int nvar = physics_vars(physics) + p.scalars;
  const std::size_t n = std::size_t(nvar) * box_cells(kGhostRtvd);
  const RtvdArrays a{in,
                     scratch,
                     scratch + n,
                     scratch + 2 * n,
                     scratch + 3 * n,
                     scratch + 4 * n,
                     out,
                     face_flux,
                     result,
                     1,
                     nvar,
                     scratch + 5 * n};
  dispatch_rtvd(physics, limiter, [&](auto types) { run_rtvd(types, CpuGroupLoop{}, a, p); });
}

}  // namespace tessera::kernels
