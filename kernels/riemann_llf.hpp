// Local Lax-Friedrichs (Rusanov) flux exactly as Wang, Abel & Kaehler 2009 eq. 12:
// F = (F_l + F_r - lambda_0 (u_r - u_l)) / 2 with lambda_0 the largest |v_x +- c_s|.
// The most diffusive and most robust of the solvers.
#pragma once

#include "kernels/hydro_state.hpp"

namespace tessera::kernels {

struct RiemannLlf {
  TESSERA_HD static Cons flux(const Prim& l, const Prim& r, Real gamma) {
    const Real cl = sound_speed(l, gamma), cr = sound_speed(r, gamma);
    const Real lam = max_of(max_of(fabs(l.v[0]) + cl, fabs(r.v[0]) + cr), Real(0));
    const Cons ul = prim_to_cons(l, gamma), ur = prim_to_cons(r, gamma);
    const Cons fl = physical_flux(l, ul), fr = physical_flux(r, ur);
    Cons f;
    f.dens = Real(0.5) * (fl.dens + fr.dens - lam * (ur.dens - ul.dens));
    for (int d = 0; d < 3; ++d)
      f.mom[d] = Real(0.5) * (fl.mom[d] + fr.mom[d] - lam * (ur.mom[d] - ul.mom[d]));
    f.engy = Real(0.5) * (fl.engy + fr.engy - lam * (ur.engy - ul.engy));
    return f;
  }
};

}  // namespace tessera::kernels
