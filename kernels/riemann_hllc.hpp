// HLLC fluxes, which restore the waves HLL smears: one specialization per physics.
//
// Adiabatic: Toro, Spruce & Speares 1994; Toro 2009 §10.4, eqs. 10.37-10.39 for the star
// states and 10.26 for the flux, with Einfeldt wave speeds (Batten et al. 1997 show these
// keep HLLC positivity-preserving).
//
// Isothermal: there is no entropy wave, but the transverse velocities still jump across
// the contact. The star region has the HLL density and normal momentum on both sides and
// the contact moves with S_M = F^hll_rho / rho^hll; the transverse momentum fluxes are the
// HLL mass flux times the upwind transverse velocity (the B -> 0 limit of the isothermal
// HLLD of Mignone 2007, J. Comput. Phys. 225, 1427, eqs. 20-27).
#pragma once

#include "kernels/physics_adiabatic.hpp"
#include "kernels/physics_isothermal.hpp"

namespace tessera::kernels {

template <class Phys>
struct RiemannHllc;

template <>
struct RiemannHllc<HydroAdiabatic> {
  using P = HydroAdiabatic;
  using Vars = P::Vars;
  // U*_K of Toro eq. 10.39.
  TESSERA_HD static Vars star_state(const Vars& w, const Vars& u, Real s, Real sstar) {
    const Real fac = w[P::kRho] * (s - w[P::kVelX]) / (s - sstar);
    Vars us;
    us[P::kDens] = fac;
    us[P::kMomX] = fac * sstar;
    us[P::kMomY] = fac * w[P::kVelX + 1];
    us[P::kMomZ] = fac * w[P::kVelX + 2];
    us[P::kEngy] =
        fac * (u[P::kEngy] / w[P::kRho] +
               (sstar - w[P::kVelX]) * (sstar + w[P::kPres] / (w[P::kRho] * (s - w[P::kVelX]))));
    return us;
  }

  TESSERA_HD static Vars flux(const Vars& l, const Vars& r, const P::Params& p) {
    const WaveSpeeds s = P::hll_speeds(l, r, p);
    const Vars ul = P::prim_to_cons(l, p), ur = P::prim_to_cons(r, p);
    if (s.left >= 0) return P::flux(l, ul, p);
    if (s.right <= 0) return P::flux(r, ur, p);
    // Contact speed, Toro eq. 10.37.
    const Real ml = l[P::kRho] * (s.left - l[P::kVelX]);
    const Real mr = r[P::kRho] * (s.right - r[P::kVelX]);
    const Real sstar =
        (r[P::kPres] - l[P::kPres] + ml * l[P::kVelX] - mr * r[P::kVelX]) / (ml - mr);
    const bool use_left = sstar >= 0;
    const Vars& w = use_left ? l : r;
    const Vars& u = use_left ? ul : ur;
    const Real sk = use_left ? s.left : s.right;
    const Vars us = star_state(w, u, sk, sstar);
    Vars f = P::flux(w, u, p);
    for (int v = 0; v < P::kNumVars; ++v) f[v] += sk * (us[v] - u[v]);
    return f;
  }
};

template <>
struct RiemannHllc<HydroIsothermal> {
  using P = HydroIsothermal;
  using Vars = P::Vars;
  TESSERA_HD static Vars flux(const Vars& l, const Vars& r, const P::Params& p) {
    const WaveSpeeds s = P::hll_speeds(l, r, p);
    const Vars ul = P::prim_to_cons(l, p), ur = P::prim_to_cons(r, p);
    const Vars fl = P::flux(l, ul, p), fr = P::flux(r, ur, p);
    if (s.left >= 0) return fl;
    if (s.right <= 0) return fr;
    const Real idb = Real(1) / (s.right - s.left);
    Vars f;
    // Mass and normal momentum: the HLL fluxes (Mignone 2007 eq. 21 with B = 0).
    for (int v = P::kDens; v <= P::kMomX; ++v)
      f[v] = (s.right * fl[v] - s.left * fr[v] + s.right * s.left * (ur[v] - ul[v])) * idb;
    // Transverse momentum carried by the mass flux with the velocity of the side the
    // contact S_M = F_rho / rho_hll leaves behind; sign(S_M) = sign(F_rho) as rho_hll > 0.
    const Vars& up = f[P::kDens] >= 0 ? l : r;
    for (int d = 1; d < 3; ++d) f[P::kMomX + d] = f[P::kDens] * up[P::kVelX + d];
    return f;
  }
};

}  // namespace tessera::kernels
