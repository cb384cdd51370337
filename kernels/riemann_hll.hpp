// HLL flux (Harten, Lax & van Leer 1983) with the physics' Einfeldt wave speeds (HLLE);
// Toro 2009 eq. 10.21. Wang, Abel & Kaehler 2009 eq. 12 is the symmetric special case
// S_L = -S_R = -lambda_0 (see riemann_llf.hpp). Any physics policy.
#pragma once

#include "kernels/state.hpp"

namespace tessera::kernels {

template <class Phys>
struct RiemannHll {
  using Vars = typename Phys::Vars;
  TESSERA_HD static Vars flux(const Vars& l, const Vars& r, const typename Phys::Params& p) {
    const WaveSpeeds s = Phys::hll_speeds(l, r, p);
    const Real bp = max_of(s.right, Real(0));
    const Real bm = min_of(s.left, Real(0));
    const Vars ul = Phys::prim_to_cons(l, p), ur = Phys::prim_to_cons(r, p);
    const Vars fl = Phys::flux(l, ul, p), fr = Phys::flux(r, ur, p);
    const Real idb = Real(1) / (bp - bm);
    const Real bpbm = bp * bm;
    Vars f;
    for (int v = 0; v < Phys::kNumVars; ++v)
      f[v] = (bp * fl[v] - bm * fr[v] + bpbm * (ur[v] - ul[v])) * idb;
    return f;
  }
};

}  // namespace tessera::kernels
