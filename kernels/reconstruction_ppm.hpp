// The piecewise-parabolic method (hydro.reconstruction = "ppm") in primitive variables, for
// the method-of-lines integrators: each cell's parabola gives its two face values; there is
// no characteristic tracing (the time integrator supplies the second order in time).
//
// - Face values: the fourth-order interpolant of the cell averages on a uniform grid,
//   a(j+1/2) = 7/12 (a(j) + a(j+1)) - 1/12 (a(j-1) + a(j+2))   (Colella & Woodward 1984,
//   eq. 1.6 with equal widths; Colella & Sekora 2008, eq. 16).
// - Where that value is not between its two cells, it is rebuilt from second differences
//   that preserve a smooth extremum (Colella & Sekora 2008, eqs. 17-18, with C = 1.25):
//   a(j+1/2) = (a(j) + a(j+1))/2 - D/6, D = S min(C |d2(j)|, C |d2(j+1)|, |3 (a(j) - 2
//   a(j+1/2) + a(j+1))|) when the three share the sign S, else 0.
// - The parabola of cell j (edges a-, a+) is limited as Colella & Sekora 2008 eqs. 19-23
//   with the roundoff guards of McCorquodale & Colella 2011 (CAMCoS 6, 1), eq. 27: at an
//   extremum of the parabola or of the cell averages, the parabola's second derivative
//   d2f = 6 (a- - 2 a + a+) is compared with the cells' second differences; if they all
//   share a sign the extremum is smooth and the parabola is scaled by
//   rho = S min(C |d2(j-1)|, C |d2(j)|, C |d2(j+1)|, |d2f|) / d2f, otherwise flattened
//   (rho = 0). Away from extrema, an edge that would make the parabola overshoot the
//   cell's range is moved (Colella & Woodward 1984, eq. 1.10).
// - Variables that must stay positive (density, pressure) fall back to the cell value on
//   both edges when the limited parabola reaches zero or below (a constant state in that
//   cell, as the first-order scheme: positive wherever the cells are).
// The same algorithm as Athena++'s uniform-grid PPM (Stone et al. 2020, ApJS 249, 4);
// every face reads cells i-3 .. i+2, the stencil of the mc_ep slopes, so the ghost
// widths are theirs (group_layout.hpp).
#pragma once

#include "kernels/reconstruction.hpp"

namespace tessera::kernels {

struct ReconPpm {
  static constexpr const char* kName = "ppm";
  static constexpr int kReach = 3;  // cells read on each side of a face
  // The vl2 predictor's reconstruction (mol_stages.hpp, IntegratorVl2): PLM with the
  // extremum-preserving mc_ep slopes, not donor cell, whose error would dominate PPM's.
  using Vl2Predictor = ReconPlmMcEp;
  static constexpr Real kC = 1.25;  // Colella & Sekora 2008, "C > 1" of eqs. 18 and 22
  static constexpr Real kRoundoff = 1e-12;

  TESSERA_HD static bool same_sign(Real a, Real b, Real c) {
    return (a > 0 && b > 0 && c > 0) || (a < 0 && b < 0 && c < 0);
  }

  // The value at the face between cells 0 and +1 from cells -1 .. +2.
  TESSERA_HD static Real edge(Real am1, Real a0, Real ap1, Real ap2) {
    const Real seventh = Real(7) / Real(12), twelfth = Real(1) / Real(12);
    Real e = seventh * (a0 + ap1) - twelfth * (am1 + ap2);
    if ((e - a0) * (ap1 - e) < 0) {
      const Real d2f = Real(3) * (a0 - Real(2) * e + ap1);
      const Real d2l = am1 - Real(2) * a0 + ap1, d2r = a0 - Real(2) * ap1 + ap2;
      Real d = 0;
      if (same_sign(d2f, d2l, d2r))
        d = sign_of(d2f) * min_of(kC * fabs(d2l), min_of(kC * fabs(d2r), fabs(d2f)));
      e = Real(0.5) * (a0 + ap1) - d / Real(6);
    }
    return e;
  }

  // Limited edges (minus: the low face, plus: the high face) of cell 0's parabola from
  // cells -2 .. +2, before the positivity fallback.
  TESSERA_HD static void parabola(Real am2, Real am1, Real a0, Real ap1, Real ap2, Real& minus,
                                  Real& plus) {
    minus = edge(am2, am1, a0, ap1);
    plus = edge(am1, a0, ap1, ap2);
    const Real dm = a0 - minus, dp = plus - a0;
    if (dm * dp <= 0 || (ap1 - a0) * (a0 - am1) <= 0) {
      // An extremum: smooth if the parabola's and the cells' second differences agree.
      const Real d2f = Real(6) * (minus - Real(2) * a0 + plus);
      const Real d2m = am2 - Real(2) * am1 + a0, d2c = am1 - Real(2) * a0 + ap1;
      const Real d2p = a0 - Real(2) * ap1 + ap2;
      Real lim = 0;
      if (same_sign(d2m, d2c, d2p) && (d2f > 0) == (d2c > 0) && d2f != 0)
        lim = sign_of(d2f) *
              min_of(min_of(kC * fabs(d2m), kC * fabs(d2c)), min_of(kC * fabs(d2p), fabs(d2f)));
      // A second derivative at roundoff level carries no information: flatten.
      const Real scale =
          max_of(max_of(fabs(am2), fabs(am1)), max_of(fabs(a0), max_of(fabs(ap1), fabs(ap2))));
      const Real rho = fabs(d2f) > kRoundoff * scale ? lim / d2f : Real(0);
      if (rho <= Real(1) - kRoundoff) {
        minus = a0 - rho * dm;
        plus = a0 + rho * dp;
      }
    } else {
      if (fabs(dm) >= Real(2) * fabs(dp)) minus = a0 - Real(2) * dp;
      if (fabs(dp) >= Real(2) * fabs(dm)) plus = a0 + Real(2) * dm;
    }
  }

  // Cell 0's face values (minus, plus) with the positivity fallback.
  TESSERA_HD static void cell_faces(Real am2, Real am1, Real a0, Real ap1, Real ap2, bool positive,
                                    Real& minus, Real& plus) {
    parabola(am2, am1, a0, ap1, ap2, minus, plus);
    if (positive && !(minus > 0 && plus > 0)) minus = plus = a0;
  }

  // Face values at face i-1/2 from cells i-3 .. i+2 (a[0] .. a[5]): the left state is the
  // high edge of cell i-1, the right state the low edge of cell i.
  TESSERA_HD static void face_values(const Real* a, bool positive, Real& left, Real& right) {
    Real unused;
    cell_faces(a[0], a[1], a[2], a[3], a[4], positive, unused, left);
    cell_faces(a[1], a[2], a[3], a[4], a[5], positive, right, unused);
  }
};

}  // namespace tessera::kernels
