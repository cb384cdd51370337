// Piecewise-constant and piecewise-linear (PLM) reconstruction of primitive variables.
// PLM with the generalized minmod limiter: Wang, Abel & Kaehler 2009, eqs. 9-11
// (theta = 1: minmod, theta = 2: monotonized central); van Leer's harmonic limiter
// (van Leer 1974). All limiters keep face values between the neighbouring cell values,
// so positive densities and pressures reconstruct to positive face states.
#pragma once

#include "kernels/hydro_state.hpp"

namespace tessera::kernels {

TESSERA_HD inline Real sign_of(Real a) {
  return a > 0 ? Real(1) : (a < 0 ? Real(-1) : Real(0));
}

// minmod(a, b, c) of Wang et al. eq. 11.
TESSERA_HD inline Real minmod3(Real a, Real b, Real c) {
  const Real m = min_of(fabs(a), min_of(fabs(b), fabs(c)));
  return Real(0.25) * (sign_of(a) + sign_of(b)) * fabs(sign_of(a) + sign_of(c)) * m;
}

struct LimiterMinmod {
  TESSERA_HD static Real slope(Real dl, Real dr) { return minmod3(dl, dr, Real(0.5) * (dl + dr)); }
};

struct LimiterMc {
  TESSERA_HD static Real slope(Real dl, Real dr) {
    return minmod3(Real(2) * dl, Real(2) * dr, Real(0.5) * (dl + dr));
  }
};

struct LimiterVanLeer {
  TESSERA_HD static Real slope(Real dl, Real dr) {
    const Real prod = dl * dr;
    return prod > 0 ? Real(2) * prod / (dl + dr) : Real(0);
  }
};

// Donor cell: first order; one ghost cell would suffice, kept for tests and robustness.
struct ReconPcm {
  static constexpr const char* kName = "pcm";
  static constexpr int kReach = 1;  // cells read on each side of a face
  TESSERA_HD static void face_states(const Prim& wm2, const Prim& wm1, const Prim& w0,
                                     const Prim& wp1, Prim& left, Prim& right) {
    (void)wm2, (void)wp1;
    left = wm1;
    right = w0;
  }
};

// Face i-1/2 between cells i-1 and i: the left state comes from cell i-1 (stencil
// i-2, i-1, i), the right state from cell i (stencil i-1, i, i+1).
template <class Limiter>
struct ReconPlm {
  static constexpr int kReach = 2;  // cells read on each side of a face
  TESSERA_HD static Real left_value(Real am2, Real am1, Real a0) {
    return am1 + Real(0.5) * Limiter::slope(am1 - am2, a0 - am1);
  }
  TESSERA_HD static Real right_value(Real am1, Real a0, Real ap1) {
    return a0 - Real(0.5) * Limiter::slope(a0 - am1, ap1 - a0);
  }
  TESSERA_HD static void face_states(const Prim& wm2, const Prim& wm1, const Prim& w0,
                                     const Prim& wp1, Prim& left, Prim& right) {
    left.rho = left_value(wm2.rho, wm1.rho, w0.rho);
    right.rho = right_value(wm1.rho, w0.rho, wp1.rho);
    for (int d = 0; d < 3; ++d) {
      left.v[d] = left_value(wm2.v[d], wm1.v[d], w0.v[d]);
      right.v[d] = right_value(wm1.v[d], w0.v[d], wp1.v[d]);
    }
    left.p = left_value(wm2.p, wm1.p, w0.p);
    right.p = right_value(wm1.p, w0.p, wp1.p);
  }
};

}  // namespace tessera::kernels
