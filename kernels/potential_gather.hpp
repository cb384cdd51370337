// A refined level's potential box for its Poisson solve and kicks, evaluated from tables
// (the groundwork of self-gravity on device-resident adaptive levels; docs/architecture.md,
// "Self-gravity"): the same values as gravity::gather_potential, which gathers the parent's
// potential with two ghost layers at a time weight (mesh::gather_box: time interpolation,
// cells beyond a non-periodic side copied from the nearest inside cell), continues it
// beyond the domain (linearly; next to an isolated root, the root's free-space potential),
// and interpolates the group's ghost layer from it (tensor-product quadratic, third order;
// Schive et al. 2010 §2.3) where no same-level neighbour gives it. The parent's box is made
// in passes over its 12^3 cells, each pass reading only cells the pass does not write, so
// that a thread block can make it in shared memory with a barrier between passes as the
// host makes it cell after cell. Compiled without contractions on the GPU: the host's bits.
#pragma once

#include "kernels/coarse_fine_gather.hpp"

namespace tessera::kernels {

// The parent's potential box: the parent patch and two ghost layers, [k][j][i], box cell
// (i, j, k) at parent-level cell corner - 2 + (i, j, k).
inline constexpr int kPotentialBox = kPatchSize + 4;
inline constexpr int kPotentialBoxCells = kPotentialBox * kPotentialBox * kPotentialBox;

// Where the box lies: the parent's first cell and its level's cells per axis (parent-level
// coordinates), which axes are periodic.
struct PotentialBoxPlace {
  int corner[3];
  int cells[3];
  bool periodic[3];
};

TESSERA_HD constexpr int potential_box_index(int i, int j, int k) {
  return (k * kPotentialBox + j) * kPotentialBox + i;
}

// Pass 0: box cell (i, j, k) from the parent level through `value(patch, cell)` (the
// time-interpolated potential of a patch's cell), coordinates beyond a non-periodic side
// clamped inside (coarse_at, with the coarse table of the group's parent).
template <class Value>
TESSERA_HD Real potential_box_cell(const Value& value, const int* patches, const int* clamp, int i,
                                   int j, int k) {
  const auto v = [&](int patch, int, int cell, bool) { return value(patch, cell); };
  return coarse_at(v, patches, clamp, 0, false, i - 2, j - 2, k - 2);
}

// Passes 1 to 3 (axis d = 0, 1, 2): beyond a non-periodic side the box continues the two
// inside cells next to it linearly along d (gravity's continue_linearly: a + dist (a - b)),
// for cell (i, j, k) of the box; a cell inside along d is left as it is. The domain's
// cells along d are the box cells [first, end) (first <= 2 and end >= 10: the parent lies
// inside), so the two cells a continuation reads are inside the box. Written without
// clamping `first` and `end` to the box: an earlier form that clamped them (min/max, then
// comparisons with the clamped bounds) continued the high side on the host but left it
// as pass 0 made it on an H200 (sm_90, CUDA 13.0), serial or parallel alike; the GPU test
// GpuKernelsNoFma.PotentialBoxContinuationEqualsTheHost guards this form.
TESSERA_HD inline void continue_potential_cell(Real* box, const PotentialBoxPlace& p, int d, int i,
                                               int j, int k) {
  if (p.periodic[d]) return;
  const int q = d == 0 ? i : (d == 1 ? j : k);
  const int first = 2 - p.corner[d];
  const int end = p.cells[d] + 2 - p.corner[d];
  int edge, step, dist;
  if (q < first) {
    edge = first;
    step = 1;
    dist = first - q;
  } else if (q >= end) {
    edge = end - 1;
    step = -1;
    dist = q - (end - 1);
  } else {
    return;
  }
  constexpr int n = kPotentialBox;
  const int stride = d == 0 ? 1 : (d == 1 ? n : n * n);
  const int at = potential_box_index(i, j, k);
  const Real a = box[at + (edge - q) * stride];
  const Real b = box[at + (edge + step - q) * stride];
  box[at] = a + Real(dist) * (a - b);
}

// Pass 4, a parent on the root level of an isolated solve only: a box cell just outside
// the domain (at most one cell beyond it along every axis that it is beyond, none of them
// periodic) takes the root's free-space potential there, `exterior(gi, gj, gk)` (root
// cell coordinates, -1 .. n).
template <class Exterior>
TESSERA_HD void exterior_potential_cell(Real* box, const PotentialBoxPlace& p,
                                        const Exterior& exterior, int i, int j, int k) {
  const int g[3] = {p.corner[0] - 2 + i, p.corner[1] - 2 + j, p.corner[2] - 2 + k};
  bool outside = false, layer = true;
  for (int d = 0; d < 3; ++d) {
    const bool out = g[d] < 0 || g[d] >= p.cells[d];
    if (out && p.periodic[d]) layer = false;  // a periodic image: as it is
    if (out) outside = true;
    if (g[d] < -1 || g[d] > p.cells[d]) layer = false;
  }
  if (outside && layer) box[potential_box_index(i, j, k)] = Real(exterior(g[0], g[1], g[2]));
}

// Passes 5 to 7 (axis d), after pass 4: the layer two cells beyond a non-periodic side
// continues the exterior layer and the inside cell linearly along d (2 a1 - a0).
TESSERA_HD inline void continue_exterior_cell(Real* box, const PotentialBoxPlace& p, int d, int i,
                                              int j, int k) {
  constexpr int n = kPotentialBox;
  if (p.periodic[d]) return;
  int idx[3] = {i, j, k};
  const int q = p.corner[d] - 2 + idx[d];
  if (q != -2 && q != p.cells[d] + 1) return;
  const int step = q < 0 ? 1 : -1;  // inward
  int a1[3] = {i, j, k}, a0[3] = {i, j, k};
  a1[d] += step;
  a0[d] += 2 * step;
  if (a0[d] < 0 || a0[d] >= n) return;
  box[potential_box_index(i, j, k)] = 2 * box[potential_box_index(a1[0], a1[1], a1[2])] -
                                      box[potential_box_index(a0[0], a0[1], a0[2])];
}

// The ghost value of the group's box cell b (relative to the group's first cell, -1 .. 16
// per axis) from the parent's finished box: gravity's interpolate_potential, in its order.
TESSERA_HD inline Real interpolate_potential_cell(const Real* box, const int b[3]) {
  int c[3];
  Real w[3][3];
  for (int d = 0; d < 3; ++d) {
    const int coarse = floor_half(b[d]);
    const bool upper = b[d] - 2 * coarse == 1;
    c[d] = coarse + 2;
    w[d][0] = upper ? Real(-3) / 32 : Real(5) / 32;
    w[d][1] = Real(15) / 16;
    w[d][2] = upper ? Real(5) / 32 : Real(-3) / 32;
  }
  Real value = 0;
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 3; ++j) {
      Real row = 0;
      for (int i = 0; i < 3; ++i)
        row += w[0][i] * box[potential_box_index(c[0] + i - 1, c[1] + j - 1, c[2] + k - 1)];
      value += w[1][j] * w[2][k] * row;
    }
  return value;
}

// The potential correction's prolonged change at the group's fine cell f (0 .. 15 per
// axis) from the parent's box (gravity's add_coarse_change, which interpolates the whole
// group axis by axis, detail::interpolate_group_potential): along x, then y, then z, each a
// sum of three products from zero, so that evaluated per cell it has the group pass's bits.
TESSERA_HD inline Real interpolate_group_cell(const Real* box, const int f[3]) {
  const auto w = [](int fine, int i) {
    const bool upper = fine & 1;
    if (i == 1) return Real(15) / 16;
    return (i == 0) == upper ? Real(-3) / 32 : Real(5) / 32;
  };
  const int c[3] = {f[0] / 2 + 1, f[1] / 2 + 1, f[2] / 2 + 1};
  Real out = 0;
  for (int k = 0; k < 3; ++k) {
    Real axy = 0;
    for (int j = 0; j < 3; ++j) {
      Real ax = 0;
      for (int i = 0; i < 3; ++i)
        ax += w(f[0], i) * box[potential_box_index(c[0] + i, c[1] + j, c[2] + k)];
      axy += w(f[1], j) * ax;
    }
    out += w(f[2], k) * axy;
  }
  return out;
}

}  // namespace tessera::kernels
