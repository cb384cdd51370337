// CPU loops of the method-of-lines hydro solver: one call advances one patch group.
#pragma once

#include <cstddef>
#include <string>

#include "kernels/group_layout.hpp"
#include "kernels/mol_hydro.hpp"

namespace tessera::kernels {

enum class Reconstruction { kPcm, kPlmMinmod, kPlmMc, kPlmVanLeer };
enum class RiemannSolver { kHll, kHllc, kLlf };

// Run-time scheme choice, mapped to template instantiations at the launch site.
struct Scheme {
  Reconstruction recon = Reconstruction::kPlmMc;
  RiemannSolver riemann = RiemannSolver::kHllc;
  Integrator integrator = Integrator::kRk2;  // sets the ghost width of the input box
};

// Reals of scratch one thread needs (see MolScratch).
std::size_t mol_scratch_reals();
MolScratch mol_scratch_view(Real* storage);

// in: [5][N^3] conserved state of the group with G = ghost_width(scheme.integrator)
// ghost layers, N = 16 + 2G (24 for rk2, 22 for vl2).
// out: [5][16^3] new interior; face_flux: [9][5][16^2] fluxes on the group's flux planes
// (group_layout.hpp), time-integrated as the update used them: the average of the two
// rk2 stages, the vl2 corrector's.
void mol_hydro_group_cpu(const Scheme& scheme, const MolParams& params, const Real* in, Real* out,
                         Real* face_flux, GroupResult* result, const MolScratch& scratch);

}  // namespace tessera::kernels
