// The relaxing-TVD group solver on the CPU: one call advances one group on the calling
// thread (relaxing_tvd.hpp over the loops of loop_cpu.hpp).
#pragma once

#include <cstddef>

#include "kernels/scheme.hpp"

namespace tessera::kernels {

enum class TvdLimiter;
struct RtvdParams;

// Reals of scratch one thread needs for boxes of nvar variables: the state between sweeps
// and the four relaxed-flux arrays.
std::size_t rtvd_scratch_reals(int nvar);

// in: [nvar][22^3] conserved state of the group with 3 ghost layers (nvar = the physics'
// variables and params.scalars); out: [nvar][16^3] new interior; face_flux:
// [9][nvar][16^2] the full-step fluxes on the group's flux planes; scratch:
// rtvd_scratch_reals(nvar) Reals.
void rtvd_group_cpu(Physics physics, TvdLimiter limiter, const RtvdParams& params, const Real* in,
                    Real* out, Real* face_flux, GroupResult* result, Real* scratch);

}  // namespace tessera::kernels
