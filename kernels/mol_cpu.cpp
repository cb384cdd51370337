// The patch-group solver on the CPU: the scheme is dispatched (scheme.hpp) to the
// integrator's stage body (mol_stages.hpp) over the CPU loops (loop_cpu.hpp).
#include "kernels/mol_cpu.hpp"

#include "kernels/loop_cpu.hpp"

namespace tessera::kernels {

std::size_t mol_scratch_reals(int nvar) {
  return 5 * std::size_t(nvar) * box_cells(kMaxGhost);
}

MolScratch mol_scratch_view(Real* storage, int nvar) {
  const std::size_t n = std::size_t(nvar) * box_cells(kMaxGhost);
  return {storage, storage + n, storage + 2 * n};
}

void mol_group_cpu(const Scheme& sc, const MolParams& p, const Real* in, Real* out, Real* face_flux,
                   GroupResult* result, const MolScratch& s, int in_vars) {
  const BoxArrays a{
      in, s.prim, s.u1, s.flux, out, face_flux, result, 1, solver_vars(sc, p.scalars), in_vars};
  dispatch_scheme(sc, [&](auto types) { run_integrator(types, CpuGroupLoop{}, a, p); });
}

}  // namespace tessera::kernels
