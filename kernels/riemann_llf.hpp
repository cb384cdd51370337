// Local Lax-Friedrichs (Rusanov) flux exactly as Wang, Abel & Kaehler 2009 eq. 12:
// F = (F_l + F_r - lambda_0 (u_r - u_l)) / 2 with lambda_0 the largest |v_x| + c_s of the
// two states (|v_x| + c_f for MHD). The most diffusive and most robust of the solvers. Any physics
// policy.
#pragma once

#include "kernels/state.hpp"

namespace tessera::kernels {

template <class Phys>
struct RiemannLlf {
  using Vars = typename Phys::Vars;
  TESSERA_HD static Vars flux(const Vars& l, const Vars& r, const typename Phys::Params& p) {
    const Real cl = Phys::fast_speed(l, p), cr = Phys::fast_speed(r, p);
    const Real lam = max_of(max_of(fabs(l[Phys::kVelX]) + cl, fabs(r[Phys::kVelX]) + cr), Real(0));
    const Vars ul = Phys::prim_to_cons(l, p), ur = Phys::prim_to_cons(r, p);
    const Vars fl = Phys::flux(l, ul, p), fr = Phys::flux(r, ur, p);
    Vars f;
    for (int v = 0; v < Phys::kNumVars; ++v)
      f[v] = Real(0.5) * (fl[v] + fr[v] - lam * (ur[v] - ul[v]));
    return f;
  }
};

}  // namespace tessera::kernels
