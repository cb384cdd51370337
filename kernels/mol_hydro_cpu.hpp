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
};

// Reals of scratch one thread needs (see MolScratch).
std::size_t mol_scratch_reals();
MolScratch mol_scratch_view(Real* storage);

// in: [5][24^3] conserved state of the group with 4 ghost layers.
// out: [5][16^3] new interior; face_flux: [9][5][16^2] time-averaged fluxes on the
// group's flux planes (group_layout.hpp).
void mol_hydro_group_cpu(const Scheme& scheme, const MolParams& params, const Real* in, Real* out,
                         Real* face_flux, GroupResult* result, const MolScratch& scratch);

}  // namespace tessera::kernels
