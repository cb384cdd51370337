// The refinement criteria evaluated per cell (evolve/refinement.cpp flags on the host; a
// device-resident adaptive mesh flags on the GPU with the same functions, compiled
// without contractions, so both give the same flags bit for bit): Löhner's estimator
// (Löhner 1987, as in FLASH and GAMER), the relative gradient, and the reach of a flagged
// cell into the neighbouring patches (amr.flag_buffer).
#pragma once

#include <math.h>

#include "kernels/physics_kinds.hpp"
#include "tessera/core/real.hpp"

namespace tessera::kernels {

// Löhner's estimator unrolled for fixed strides: the numerator and denominator sums, the
// estimator being sqrt(num / den) (0 where den = 0). No division or square root here, so
// that a row of cells vectorises on the host.
template <int SX, int SY, int SZ>
TESSERA_HD inline void lohner_sums(const double* q, double filter, double& num_out,
                                   double& den_out) {
  const double c = q[0];
  double num = 0, den = 0;
  auto diag = [&](int s) {
    const double up = q[s], dn = q[-s];
    const double d2 = up - 2 * c + dn;
    const double dd = fabs(up - c) + fabs(c - dn) + filter * (fabs(up) + 2 * fabs(c) + fabs(dn));
    num += d2 * d2;
    den += dd * dd;
  };
  auto cross = [&](int sa, int sb) {
    const double pp = q[sa + sb], pm = q[sa - sb], mp = q[-sa + sb], mm = q[-sa - sb];
    const double d2 = 0.25 * (pp - pm - mp + mm);
    const double dd = 0.25 * (fabs(pp - mp) + fabs(pm - mm)) +
                      filter * 0.25 * (fabs(pp) + fabs(pm) + fabs(mp) + fabs(mm));
    num += d2 * d2;
    den += dd * dd;
  };
  diag(SX), cross(SX, SY), cross(SX, SZ);
  cross(SY, SX), diag(SY), cross(SY, SZ);
  cross(SZ, SX), cross(SZ, SY), diag(SZ);
  num_out = num;
  den_out = den;
}

// Whether sqrt(num / den) exceeds the threshold. Where num and threshold^2 den differ by
// more than 1e-9 relative (all values normal and finite), the rounding of the division
// and the square root (a few 1e-16) cannot change the comparison, so neither is computed.
TESSERA_HD inline bool lohner_exceeds(double num, double den, double threshold) {
  const double l2 = threshold * threshold, t = l2 * den;
  if (l2 > 1e-300 && den > 1e-300 && t > 1e-300 && t < 1e300 && num < 1e300) {
    if (num < t * (1 - 1e-9)) return false;
    if (num > t * (1 + 1e-9)) return true;
  }
  const double r = den > 0 ? sqrt(num / den) : 0;
  return r > threshold;
}

// max_d |q(+1) - q(-1)| / (2 |q|) at q[0] with strides s.
TESSERA_HD inline double relative_gradient(const double* q, const int s[3]) {
  const double c = fabs(q[0]);
  double g = fabs(q[s[0]] - q[-s[0]]);
  const double g1 = fabs(q[s[1]] - q[-s[1]]), g2 = fabs(q[s[2]] - q[-s[2]]);
  if (g < g1) g = g1;
  if (g < g2) g = g2;
  return c > 0 ? 0.5 * g / c : 0;
}

// The criteria a patch of one level is flagged with on the device (those that read only
// density and pressure; the others are the host's): index 0 for a leaf (the refine
// thresholds), 1 for a refined patch (the derefine thresholds, lower: hysteresis).
struct FlagCriteria {
  bool lohner_density = false, lohner_pressure = false, gradient = false, density = false;
  double lohner[2] = {0, 0}, gradient_threshold[2] = {0, 0}, density_threshold[2] = {0, 0};
  double filter = 0;
  int flag_buffer = 0;
};

// The offsets along one axis that a flagged cell at index i (0..7) of its patch reaches:
// bit 0 for the patch below, 1 for its own, 2 for the one above (within flag_buffer cells).
TESSERA_HD inline int flag_reach_axis(int i, int flag_buffer) {
  return 2 | (i < flag_buffer ? 1 : 0) | (i >= 8 - flag_buffer ? 4 : 0);
}

// Bits of the 27 patches (bit (dz+1) 9 + (dy+1) 3 + (dx+1)) that a flagged cell with the
// reaches r (flag_reach_axis per axis) marks: its own patch and every neighbour within
// flag_buffer cells of it.
TESSERA_HD inline unsigned flag_marks(const int r[3]) {
  unsigned marks = 0;
  for (int dz = 0; dz < 3; ++dz)
    for (int dy = 0; dy < 3; ++dy)
      for (int dx = 0; dx < 3; ++dx)
        if ((r[0] >> dx & 1) && (r[1] >> dy & 1) && (r[2] >> dz & 1))
          marks |= 1u << ((dz * 3 + dy) * 3 + dx);
  return marks;
}

}  // namespace tessera::kernels
