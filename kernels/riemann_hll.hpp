// HLL flux (Harten, Lax & van Leer 1983) with Einfeldt wave speeds (HLLE); Toro 2009
// eq. 10.21. Wang, Abel & Kaehler 2009 eq. 12 is the symmetric special case
// S_L = -S_R = -lambda_0 (see riemann_llf.hpp).
#pragma once

#include "kernels/riemann_wavespeeds.hpp"

namespace tessera::kernels {

struct RiemannHll {
  TESSERA_HD static Cons flux(const Prim& l, const Prim& r, Real gamma) {
    const WaveSpeeds s = einfeldt_speeds(l, r, gamma);
    const Real bp = max_of(s.right, Real(0));
    const Real bm = min_of(s.left, Real(0));
    const Cons ul = prim_to_cons(l, gamma), ur = prim_to_cons(r, gamma);
    const Cons fl = physical_flux(l, ul), fr = physical_flux(r, ur);
    const Real idb = Real(1) / (bp - bm);
    const Real bpbm = bp * bm;
    Cons f;
    f.dens = (bp * fl.dens - bm * fr.dens + bpbm * (ur.dens - ul.dens)) * idb;
    for (int d = 0; d < 3; ++d)
      f.mom[d] = (bp * fl.mom[d] - bm * fr.mom[d] + bpbm * (ur.mom[d] - ul.mom[d])) * idb;
    f.engy = (bp * fl.engy - bm * fr.engy + bpbm * (ur.engy - ul.engy)) * idb;
    return f;
  }
};

}  // namespace tessera::kernels
