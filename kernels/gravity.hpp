// Self-gravity source terms on one cell (docs/architecture.md, "Self-gravity").
//
// Gravity enters the Euler (and MHD) equations as the sources rho g in the momentum
// equation and rho v.g in the energy equation, g = -grad phi; density has none. A run
// splits them from the hydro step in Strang fashion (Schive et al. 2010 §2.3, after Trac &
// Pen 2003: the two gravity operators around the flux operators): a half-step "kick" with
// g(t^n), the hydro step, the Poisson solve with rho^{n+1}, a half-step kick with g(t^{n+1}).
// Over the step the momentum gains dt (rho^n g^n + rho^{n+1} g^{n+1}) / 2, the average of
// the old and new forces, which makes the coupling second order in time.
//
// Energy formulation: the gas energy E (thermal + kinetic [+ magnetic]) is evolved, and a
// kick changes it by exactly the change of the kinetic energy, so that the kick leaves the
// thermal (and magnetic) energy untouched: dE = (|m'|^2 - |m|^2) / (2 rho)
//                                             = dt g.(m + m') / 2,
// the work of g on the average momentum of the kick. E + (1/2) int rho phi is then
// conserved to the truncation error of the scheme (not to round-off: the source form is
// not a flux divergence); runs log it.
#pragma once

#include <cstddef>

#include "tessera/core/real.hpp"

namespace tessera::kernels {

// Central-difference acceleration g = -grad phi at a cell (second order): phi_m[d] and
// phi_p[d] are the potentials of the neighbours below and above along axis d. The
// difference is taken in the potential's own precision (T: double for the root solve's
// potential) and only then rounded to Real: in single precision, phi's differences
// across two cells can be far below the round-off of phi itself.
template <class T>
TESSERA_HD inline void gravity_acceleration(const T phi_m[3], const T phi_p[3], T inv_2h,
                                            Real g[3]) {
  for (int d = 0; d < 3; ++d) g[d] = Real((phi_m[d] - phi_p[d]) * inv_2h);
}

// One kick of length dt on the conserved state u[v * stride] (density 0, momentum 1..3,
// energy 4 when `energy`): m += dt rho g, E += dt g.(m_old + m_new) / 2.
TESSERA_HD inline void gravity_kick(Real* u, std::size_t stride, const Real g[3], Real dt,
                                    bool energy) {
  const Real rho = u[0];
  Real work = 0;
  for (int d = 0; d < 3; ++d) {
    const Real m0 = u[(1 + d) * stride];
    const Real m1 = m0 + dt * rho * g[d];
    u[(1 + d) * stride] = m1;
    work += g[d] * (m0 + m1);
  }
  if (energy) u[4 * stride] += Real(0.5) * dt * work;
}

}  // namespace tessera::kernels
