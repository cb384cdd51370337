#include "tessera/evolve/mol_solver.hpp"

#include "kernels/mol_cpu.hpp"
#include "tessera/core/error.hpp"

namespace tessera::evolve {

MolSolver::MolSolver(const kernels::Scheme& scheme, const kernels::MolParams& params)
    : scheme_(scheme), params_(params) {
  if (!kernels::supports_riemann(scheme.physics, scheme.riemann))
    throw Error(ErrorKind::kInternal,
                "the MOL solver was given a Riemann solver its physics "
                "does not have");
}

std::size_t MolSolver::host_scratch_reals() const {
  return kernels::mol_scratch_reals(nvar());
}

void MolSolver::solve_host(const Real* in, Real* out, Real* flux, kernels::GroupResult* result,
                           Real* scratch) const {
  kernels::mol_group_cpu(scheme_, params_, in, out, flux, result,
                         kernels::mol_scratch_view(scratch, nvar()));
}

}  // namespace tessera::evolve
