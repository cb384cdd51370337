// Signal-speed estimates shared by the HLL-family solvers: Einfeldt (1988) bounds from
// the Roe-averaged state, as in Toro 2009 §10.6 (eqs. 10.52-10.53). States are rotated
// so that v[0] is the face-normal velocity.
#pragma once

#include "kernels/hydro_state.hpp"

namespace tessera::kernels {

struct WaveSpeeds {
  Real left;   // S_L
  Real right;  // S_R
};

TESSERA_HD inline WaveSpeeds einfeldt_speeds(const Prim& l, const Prim& r, Real gamma) {
  const Real sl = sqrt(l.rho), sr = sqrt(r.rho);
  const Real isum = Real(1) / (sl + sr);
  Real v2 = 0;
  Real vroe[3];
  for (int d = 0; d < 3; ++d) {
    vroe[d] = (sl * l.v[d] + sr * r.v[d]) * isum;
    v2 += vroe[d] * vroe[d];
  }
  const Real gm1 = gamma - Real(1);
  const Real hl = (gamma / gm1) * l.p / l.rho +
                  Real(0.5) * (l.v[0] * l.v[0] + l.v[1] * l.v[1] + l.v[2] * l.v[2]);
  const Real hr = (gamma / gm1) * r.p / r.rho +
                  Real(0.5) * (r.v[0] * r.v[0] + r.v[1] * r.v[1] + r.v[2] * r.v[2]);
  const Real hroe = (sl * hl + sr * hr) * isum;
  const Real croe = sqrt(max_of(gm1 * (hroe - Real(0.5) * v2), Real(0)));
  const Real cl = sound_speed(l, gamma), cr = sound_speed(r, gamma);
  return {min_of(l.v[0] - cl, vroe[0] - croe), max_of(r.v[0] + cr, vroe[0] + croe)};
}

}  // namespace tessera::kernels
