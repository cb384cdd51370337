// Method-of-lines hydro on one patch group: PLM/PCM reconstruction of primitives and an
// HLL-family flux at every face, unsplit in 3D, with one of two time integrators
// (hydro.integrator; ghost widths in group_layout.hpp):
//
// - rk2: SSP-RK2 (Wang, Abel & Kaehler 2009, eq. 8: u1 = u0 + dt L(u0),
//   u2 = (u0 + u1 + dt L(u1)) / 2) in one pass over a (16+2*4)^3 box: stage 1 updates the
//   interior plus two ghost layers so that stage 2 has the stencil it needs. The fluxes on
//   the patch faces (outer faces and sibling interfaces) are averaged over the two stages.
// - vl2: the van Leer predictor-corrector of Stone & Gardiner 2009 (New Astronomy 14,
//   139; Athena's "vl2") over a (16+2*3)^3 box: a donor-cell (PCM) predictor
//   u^{n+1/2} = u^n - dt/2 div F(PCM states of u^n) on the interior plus two ghost layers,
//   then the corrector u^{n+1} = u^n - dt div F(reconstructed states of u^{n+1/2}) on
//   the interior. The patch-face fluxes are the corrector's, with weight 1.
//
// Either way the returned face fluxes are the time-integrated flux the update used (what
// coarse-fine flux correction needs). Functions here are TESSERA_HD so the CPU loops
// (mol_hydro_cpu.cpp) and device kernels share them.
#pragma once

#include "kernels/group_layout.hpp"
#include "kernels/hydro_state.hpp"

namespace tessera::kernels {

struct MolParams {
  EosParams eos;
  Real dt_over_dx;
};

// Scratch owned by the caller, each array of box_cells(kMaxGhost) entries per variable
// (enough for every integrator; a box of N^3 < that uses the first entries).
struct MolScratch {
  Real* prim;  // [5][N^3] primitive variables of the stage input
  Real* u1;    // [5][N^3] stage-1 (rk2) or half-step (vl2) conserved state
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
// Reads Recon::kReach cells on each side of the face, no more: the vl2 predictor runs
// donor cell up to one cell from the edge of the box.
template <class Recon, class Riemann>
TESSERA_HD inline Cons face_flux(const Real* w, int n3, int idx, int stride, int dir, Real gamma) {
  const Prim wm1 = rotate_to(load_prim(w, n3, idx - stride), dir);
  const Prim w0 = rotate_to(load_prim(w, n3, idx), dir);
  Prim left, right;
  if constexpr (Recon::kReach == 1) {
    Recon::face_states(wm1, wm1, w0, w0, left, right);  // outer arguments unused
  } else {
    const Prim wm2 = rotate_to(load_prim(w, n3, idx - 2 * stride), dir);
    const Prim wp1 = rotate_to(load_prim(w, n3, idx + stride), dir);
    Recon::face_states(wm2, wm1, w0, wp1, left, right);
  }
  return rotate_from(Riemann::flux(left, right, gamma), dir);
}

// u + coef * du: an Euler step with coef = dt/dx (or dt/(2 dx) for the vl2 predictor)
// and du = minus the flux divergence times dx.
TESSERA_HD inline Cons euler_step(const Cons& u, Real coef, const Cons& du) {
  Cons r;
  r.dens = u.dens + coef * du.dens;
  for (int d = 0; d < 3; ++d) r.mom[d] = u.mom[d] + coef * du.mom[d];
  r.engy = u.engy + coef * du.engy;
  return r;
}

// Final SSP-RK2 stage (Wang et al. 2009 eq. 8): (u0 + u1 + coef * du(u1)) / 2.
TESSERA_HD inline Cons rk2_final(const Cons& u0, const Cons& u1, Real coef, const Cons& du) {
  Cons r;
  r.dens = Real(0.5) * (u0.dens + u1.dens + coef * du.dens);
  for (int d = 0; d < 3; ++d) r.mom[d] = Real(0.5) * (u0.mom[d] + u1.mom[d] + coef * du.mom[d]);
  r.engy = Real(0.5) * (u0.engy + u1.engy + coef * du.engy);
  return r;
}

// Largest |v_d| + c_s of a cell: the signal speed the CFL condition uses.
TESSERA_HD inline Real max_signal_speed(const Prim& w, Real gamma) {
  const Real c = sound_speed(w, gamma);
  return max_of(fabs(w.v[0]), max_of(fabs(w.v[1]), fabs(w.v[2]))) + c;
}

}  // namespace tessera::kernels
