// HLLC flux (Toro, Spruce & Speares 1994) restoring the contact wave; Toro 2009 §10.4,
// eqs. 10.37-10.39 for the star states and 10.26 for the flux, with Einfeldt wave speeds
// (Batten et al. 1997 show these keep HLLC positivity-preserving).
#pragma once

#include "kernels/riemann_wavespeeds.hpp"

namespace tessera::kernels {

struct RiemannHllc {
  // U*_K of Toro eq. 10.39.
  TESSERA_HD static Cons star_state(const Prim& w, const Cons& u, Real s, Real sstar) {
    const Real fac = w.rho * (s - w.v[0]) / (s - sstar);
    Cons us;
    us.dens = fac;
    us.mom[0] = fac * sstar;
    us.mom[1] = fac * w.v[1];
    us.mom[2] = fac * w.v[2];
    us.engy = fac * (u.engy / w.rho + (sstar - w.v[0]) * (sstar + w.p / (w.rho * (s - w.v[0]))));
    return us;
  }

  TESSERA_HD static Cons flux(const Prim& l, const Prim& r, Real gamma) {
    const WaveSpeeds s = einfeldt_speeds(l, r, gamma);
    const Cons ul = prim_to_cons(l, gamma), ur = prim_to_cons(r, gamma);
    if (s.left >= 0) return physical_flux(l, ul);
    if (s.right <= 0) return physical_flux(r, ur);
    // Contact speed, Toro eq. 10.37.
    const Real ml = l.rho * (s.left - l.v[0]);
    const Real mr = r.rho * (s.right - r.v[0]);
    const Real sstar = (r.p - l.p + ml * l.v[0] - mr * r.v[0]) / (ml - mr);
    const bool use_left = sstar >= 0;
    const Prim& w = use_left ? l : r;
    const Cons& u = use_left ? ul : ur;
    const Real sk = use_left ? s.left : s.right;
    const Cons us = star_state(w, u, sk, sstar);
    Cons f = physical_flux(w, u);
    f.dens += sk * (us.dens - u.dens);
    for (int d = 0; d < 3; ++d) f.mom[d] += sk * (us.mom[d] - u.mom[d]);
    f.engy += sk * (us.engy - u.engy);
    return f;
  }
};

}  // namespace tessera::kernels
