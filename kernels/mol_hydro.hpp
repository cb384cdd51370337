// Method-of-lines hydro on one patch group: PLM/PCM reconstruction of primitives, an
// HLL-family flux at every face, SSP-RK2 in time (Wang, Abel & Kaehler 2009, eq. 8:
// u1 = u0 + dt L(u0), u2 = (u0 + u1 + dt L(u1)) / 2), unsplit in 3D.
// Both stages run in one pass over a (16+2*4)^3 box: stage 1 updates the interior plus
// two ghost layers so that stage 2 has the stencil it needs; the fluxes on the patch
// faces (outer faces and sibling interfaces) are averaged over the two stages, which is the
// time-integrated flux the update used (what coarse-fine flux correction needs). Functions here are
// TESSERA_HD so the CPU loops (mol_hydro_cpu.cpp) and device kernels share them.
#pragma once

#include "kernels/group_layout.hpp"
#include "kernels/hydro_state.hpp"

namespace tessera::kernels {

struct MolParams {
  EosParams eos;
  Real dt_over_dx;
};

// Scratch owned by the caller, each array of box_cells(kGhostRk2) entries per variable.
struct MolScratch {
  Real* prim;  // [5][N^3] primitive variables of the stage input
  Real* u1;    // [5][N^3] stage-1 conserved state
  Real* dudt;  // [5][N^3] minus the flux divergence (times dx)
  Real* flux;  // [5][N^3] face fluxes of one direction; face i-1/2 stored at cell i
};

TESSERA_HD inline Cons load_cons(const Real* u, int n3, int idx) {
  return {u[idx], {u[n3 + idx], u[2 * n3 + idx], u[3 * n3 + idx]}, u[4 * n3 + idx]};
}

TESSERA_HD inline void store_cons(Real* u, int n3, int idx, const Cons& c) {
  u[idx] = c.dens;
  u[n3 + idx] = c.mom[0];
  u[2 * n3 + idx] = c.mom[1];
  u[3 * n3 + idx] = c.mom[2];
  u[4 * n3 + idx] = c.engy;
}

TESSERA_HD inline Prim load_prim(const Real* w, int n3, int idx) {
  return {w[idx], {w[n3 + idx], w[2 * n3 + idx], w[3 * n3 + idx]}, w[4 * n3 + idx]};
}

TESSERA_HD inline void store_prim(Real* w, int n3, int idx, const Prim& p) {
  w[idx] = p.rho;
  w[n3 + idx] = p.v[0];
  w[2 * n3 + idx] = p.v[1];
  w[3 * n3 + idx] = p.v[2];
  w[4 * n3 + idx] = p.p;
}

// Flux through face idx-1/2 along `dir` (stride = index distance between neighbours).
template <class Recon, class Riemann>
TESSERA_HD inline Cons face_flux(const Real* w, int n3, int idx, int stride, int dir, Real gamma) {
  const Prim wm2 = rotate_to(load_prim(w, n3, idx - 2 * stride), dir);
  const Prim wm1 = rotate_to(load_prim(w, n3, idx - stride), dir);
  const Prim w0 = rotate_to(load_prim(w, n3, idx), dir);
  const Prim wp1 = rotate_to(load_prim(w, n3, idx + stride), dir);
  Prim left, right;
  Recon::face_states(wm2, wm1, w0, wp1, left, right);
  return rotate_from(Riemann::flux(left, right, gamma), dir);
}

// Largest |v_d| + c_s of a cell: the signal speed the CFL condition uses.
TESSERA_HD inline Real max_signal_speed(const Prim& w, Real gamma) {
  const Real c = sound_speed(w, gamma);
  return max_of(fabs(w.v[0]), max_of(fabs(w.v[1]), fabs(w.v[2]))) + c;
}

}  // namespace tessera::kernels
