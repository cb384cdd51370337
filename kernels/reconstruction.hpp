// Piecewise-constant and piecewise-linear (PLM) reconstruction of primitive variables.
// PLM with the generalized minmod limiter: Wang, Abel & Kaehler 2009, eqs. 9-11
// (theta = 1: minmod, theta = 2: monotonized central); van Leer's harmonic limiter
// (van Leer 1974). These limiters keep face values between the neighbouring cell values,
// so positive densities and pressures reconstruct to positive face states.
// ReconPlmMcEp relaxes the MC limiter at smooth extrema (below); it reads three cells on
// each side of a face.
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

// MC slopes that keep second order at smooth extrema (hydro.limiter = "mc_ep"). A TVD
// limiter sets the slope to zero at every extremum and clips it beside one (the 2|dl|,
// 2|dr| bounds), so a smooth wave loses accuracy there; with SSP-RK2, which limits at both
// stages, the linear-wave convergence order stays near 1.7 at 20-50 cells per wavelength.
// Following the extremum-preserving limiters of Colella & Sekora 2008 and Sekora &
// Colella 2009 (arXiv:0903.4200), where the data are smooth, which a second difference
// tells, the face values may leave the range of the three cells by a bound set by the
// second differences:
//   slope = sign(dc) min(|dc|, 2 (M - a0 + delta), 2 (a0 - m + delta)),
// dc the central difference, m and M the least and largest of a(-1), a0, a(+1). With
// delta = 0 this is the MC limiter exactly. delta > 0 only where the second differences
// of cells -1, 0 and +1 have one sign and differ by at most a factor kSmoothRatio (a
// smeared discontinuity has second differences of both signs, or of very different sizes
// beside it); then delta is a quarter of the smallest of them, which is what the central
// slope needs at a smooth extremum (|dc| <= |d2|/2 there, and beside one the central slope
// leaves the range by at most |d2|/4). Our formulation; the cited limiters act on PPM
// parabolas and MUSCL slopes in the same spirit. In smooth regions the scheme is then
// Fromm's (unlimited central slopes). Variables that must stay positive (density,
// pressure) get at most half their smallest neighbour value as delta, so their face
// values stay above half of it.
struct ReconPlmMcEp {
  static constexpr int kReach = 3;  // cells read on each side of a face
  static constexpr Real kSmoothRatio = 2;

  // Slope of cell 0 from cells -2 .. +2.
  TESSERA_HD static Real slope(Real am2, Real am1, Real a0, Real ap1, Real ap2, bool positive) {
    const Real dl = a0 - am1, dr = ap1 - a0, dc = Real(0.5) * (dl + dr);
    const Real d2m = am2 - Real(2) * am1 + a0, d2c = dr - dl, d2p = a0 - Real(2) * ap1 + ap2;
    Real delta = 0;
    if ((d2m > 0 && d2c > 0 && d2p > 0) || (d2m < 0 && d2c < 0 && d2p < 0)) {
      const Real lo = min_of(fabs(d2c), min_of(fabs(d2m), fabs(d2p)));
      const Real hi = max_of(fabs(d2c), max_of(fabs(d2m), fabs(d2p)));
      if (hi <= kSmoothRatio * lo) delta = Real(0.25) * lo;
    }
    const Real m = min_of(am1, min_of(a0, ap1)), big = max_of(am1, max_of(a0, ap1));
    if (positive) delta = max_of(Real(0), min_of(delta, Real(0.5) * m));
    const Real bound = min_of(Real(2) * (big - a0 + delta), Real(2) * (a0 - m + delta));
    return sign_of(dc) * min_of(fabs(dc), bound);
  }
  // Face values at face i-1/2 from cells i-3 .. i+2 (a[0] .. a[5]).
  TESSERA_HD static void face_values(const Real* a, bool positive, Real& left, Real& right) {
    left = a[2] + Real(0.5) * slope(a[0], a[1], a[2], a[3], a[4], positive);
    right = a[3] - Real(0.5) * slope(a[1], a[2], a[3], a[4], a[5], positive);
  }
};

// Left and right states of every variable of a face (reconstruction is component-wise).
template <class Recon, int N>
TESSERA_HD inline void face_states(const State<N>& wm2, const State<N>& wm1, const State<N>& w0,
                                   const State<N>& wp1, State<N>& left, State<N>& right) {
  for (int v = 0; v < N; ++v) Recon::face_values(wm2[v], wm1[v], w0[v], wp1[v], left[v], right[v]);
}

}  // namespace tessera::kernels
