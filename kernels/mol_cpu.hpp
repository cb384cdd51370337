// The patch-group solver on the CPU: one call advances one group on the calling thread
// (the stage bodies of mol_stages.hpp over the loops of loop_cpu.hpp).
#pragma once

#include <cstddef>

#include "kernels/scheme.hpp"

namespace tessera::kernels {

// Scratch owned by the caller, each array sized for the largest box (kMaxGhost).
struct MolScratch {
  Real* prim;  // [nvar][N^3] primitive variables of the stage input
  Real* u1;    // [nvar][N^3] stage-1 (rk2) or half-step (vl2) conserved state
  Real* flux;  // [3][nvar][N^3] face fluxes per direction; face i-1/2 stored at cell i
};

// Reals of scratch one thread needs for boxes of nvar variables.
std::size_t mol_scratch_reals(int nvar);
MolScratch mol_scratch_view(Real* storage, int nvar);

// in: [nvar][N^3] conserved state of the group with G = ghost_width(scheme.integrator)
// ghost layers, N = 16 + 2G (24 for rk2, 22 for vl2), nvar = solver_vars(scheme,
// params.scalars). out: [nvar][16^3] new interior; face_flux: [9][nvar][16^2] fluxes on
// the group's flux planes (group_layout.hpp), time-integrated as the update used them:
// the average of the two rk2 stages, the vl2 corrector's. in_vars: variables of `in`
// (nvar + 1 for the correcting pass of first-order flux correction: BoxArrays).
void mol_group_cpu(const Scheme& scheme, const MolParams& params, const Real* in, Real* out,
                   Real* face_flux, GroupResult* result, const MolScratch& scratch,
                   int in_vars = 0);

}  // namespace tessera::kernels
