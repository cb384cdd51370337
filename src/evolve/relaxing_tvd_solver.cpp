#include "tessera/evolve/relaxing_tvd_solver.hpp"

#include "kernels/rtvd_cpu.hpp"
#include "tessera/core/error.hpp"

namespace tessera::evolve {

RelaxingTvdSolver::RelaxingTvdSolver(kernels::Physics physics, kernels::TvdLimiter limiter,
                                     const kernels::MolParams& params)
    : physics_(physics), limiter_(limiter) {
  if (physics == kernels::Physics::kMhd)
    throw Error(ErrorKind::kInternal, "the relaxing-TVD solver was given MHD");
  params_.phys = params.phys;
  params_.dt_over_dx = params.dt_over_dx;
  params_.scalars = params.scalars;
}

std::size_t RelaxingTvdSolver::host_scratch_reals() const {
  return kernels::rtvd_scratch_reals(nvar());
}

void RelaxingTvdSolver::solve_host(const Real* in, Real* out, Real* flux,
                                   kernels::GroupResult* result, Real* scratch) const {
  kernels::rtvd_group_cpu(physics_, limiter_, params_, in, out, flux, result, scratch);
}

}  // namespace tessera::evolve
