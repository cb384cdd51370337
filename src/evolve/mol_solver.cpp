#include "tessera/evolve/mol_solver.hpp"

#include "kernels/mol_cpu.hpp"
#include "tessera/core/error.hpp"

namespace tessera::evolve {

MolSolver::MolSolver(const kernels::Scheme& scheme, const kernels::MolParams& params, Fofc fofc)
    : scheme_(scheme), params_(params), fofc_(fofc) {
  params_.flag_unphysical = fofc == Fofc::kDetect;
  params_.floor_first_stage = fofc == Fofc::kOff;
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
                         kernels::mol_scratch_view(scratch, nvar()), shape().in_vars);
}

namespace {

template <class Phys>
void scan_flagged(const kernels::PhysicsParams& params, const Real* out, std::vector<int>& cells) {
  const auto& p = kernels::params_of<Phys>(params);
  for (int c = 0; c < kernels::kGroupCells; ++c) {
    typename Phys::Vars u;
    for (int v = 0; v < Phys::kNumVars; ++v) u[v] = out[v * kernels::kGroupCells + c];
    if (Phys::apply_floors(u, p) != kernels::FloorResult::kOk) cells.push_back(c);
  }
}

}  // namespace

// The detecting pass left its flagged cells as they came, unphysical: the floors find
// them again (the kernel's own test).
void MolSolver::flagged_cells(const Real* out, std::vector<int>& cells) const {
  switch (scheme_.physics) {
    case kernels::Physics::kIsothermal:
      return scan_flagged<kernels::HydroIsothermal>(params_.phys, out, cells);
    case kernels::Physics::kMhd:
      return scan_flagged<kernels::MhdGlm>(params_.phys, out, cells);
    case kernels::Physics::kAdiabatic:
      return scan_flagged<kernels::HydroAdiabatic>(params_.phys, out, cells);
  }
}

}  // namespace tessera::evolve
