// Piecewise-constant and piecewise-linear (PLM) reconstruction of primitive variables.
// PLM with the generalized minmod limiter: Wang, Abel & Kaehler 2009, eqs. 9-11
// (theta = 1: minmod, theta = 2: monotonized central); van Leer's harmonic limiter
// (van Leer 1974). All limiters keep face values between the neighbouring cell values,
// so positive densities and pressures reconstruct to positive face states.
#pragma once

#include "kernels/state.hpp"

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
  // Face values of one variable at face i-1/2 from cells i-2 .. i+1.
  TESSERA_HD static void face_values(Real am2, Real am1, Real a0, Real ap1, Real& left,
                                     Real& right) {
    (void)am2, (void)ap1;
    left = am1;
    right = a0;
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
  TESSERA_HD static void face_values(Real am2, Real am1, Real a0, Real ap1, Real& left,
                                     Real& right) {
    left = left_value(am2, am1, a0);
    right = right_value(am1, a0, ap1);
  }
};

// Left and right states of every variable of a face (reconstruction is component-wise).
template <class Recon, int N>
TESSERA_HD inline void face_states(const State<N>& wm2, const State<N>& wm1, const State<N>& w0,
                                   const State<N>& wp1, State<N>& left, State<N>& right) {
  for (int v = 0; v < N; ++v) Recon::face_values(wm2[v], wm1[v], w0[v], wp1[v], left[v], right[v]);
}

}  // namespace tessera::kernels
