// Ghost cells of a patch group that come from the coarser level, evaluated cell by cell
// (device-resident adaptive levels, docs/architecture.md, "Data residency"): the same
// values as the host's prepare stage, which gathers the parent's neighbourhood once per
// group (mesh::gather_box: time interpolation between the parent level's previous and
// current state, cells beyond a non-periodic side copied from the nearest inside cell)
// and prolongs each ghost block (mesh::prolong_region: minmod-limited linear slopes per
// coarse cell, Schive et al. 2010 §2.1; injection for a coarse cell one of whose fine
// cells in the box would not be admissible). The gather kernel evaluates it per cell on
// the GPU, gather_group_host on the CPU; tests/unit/test_resident_gather.cpp compares the
// latter with prepare_group bit for bit.
#pragma once

#include "kernels/admissible.hpp"
#include "kernels/exact_ops.hpp"
#include "kernels/group_layout.hpp"
#include "kernels/reconstruction.hpp"

namespace tessera::kernels {

// The parent level's neighbourhood of a group: the patch of each 8^3 coarse block
// (bx, by, bz) in {-1, 0, 1}^3 around the group's parent (the parent is block 0), index
// (bx+1) + 3 (by+1) + 9 (bz+1); -1 beyond a non-periodic side (never read: such cells
// are clamped inside).
inline constexpr int kCoarseBlocks = 27;
// Per group, per dimension: the first and last coarse cell inside the domain, relative to
// the parent's first cell (far outside the box along a periodic dimension).
inline constexpr int kCoarseClamp = 6;
// The gather table's block code of a block on the coarser level.
inline constexpr int kGatherCoarse = -2;

inline constexpr int kMaxGatherFields = 32;

// How each field is prolonged (mesh::Prolongation's order) and whether it has one time
// level (its current state is read at every time weight); the admissibility check of
// the injection fallback (off: none).
struct ProlongFields {
  int nvar = 0;
  signed char kind[kMaxGatherFields] = {};  // 0 limited linear, 1 injection, 2 linear
  signed char one_level[kMaxGatherFields] = {};
  AdmissibleState admissible;
};
inline constexpr signed char kProlongLimited = 0, kProlongInjection = 1, kProlongLinear = 2;

// floor(x / 2) for any sign.
TESSERA_HD constexpr int floor_half(int x) {
  return x >= 0 ? x / 2 : -((1 - x) / 2);
}

// Coarse cell (x, y, z), relative to the parent's first cell, of field v, through
// `value(patch, v, cell, one_level)` (the time-interpolated value of a patch's cell);
// coordinates beyond a non-periodic side are clamped, one dimension at a time as
// gather_box does (which composes to a clamp of each).
template <class Value>
TESSERA_HD Real coarse_at(const Value& value, const int* patches, const int* clamp, int v,
                          bool one_level, int x, int y, int z) {
  const int r0[3] = {x, y, z};
  const int bstride[3] = {1, 3, 9}, cstride[3] = {1, kPatchSize, kPatchSize * kPatchSize};
  int block = 0, local = 0;
  for (int d = 0; d < 3; ++d) {
    int r = r0[d] < clamp[2 * d] ? clamp[2 * d] : r0[d];
    r = r > clamp[2 * d + 1] ? clamp[2 * d + 1] : r;
    const int b = (r + kPatchSize) / kPatchSize - 1;  // -1..1 (r >= -8)
    block += (b + 1) * bstride[d];
    local += (r - b * kPatchSize) * cstride[d];
  }
  return value(patches[block], v, local, one_level);
}

// The prolonged value of field v at fine cell f (relative to the group's first cell) and
// its coarse cell's value (`mid`), with prolong_region's operations in its order.
template <class Value>
TESSERA_HD Real prolonged(const Value& value, const int* patches, const int* clamp,
                          const ProlongFields& pf, int v, const int f[3], Real& mid) {
  const int r[3] = {floor_half(f[0]), floor_half(f[1]), floor_half(f[2])};
  const bool one = pf.one_level[v] != 0;
  mid = coarse_at(value, patches, clamp, v, one, r[0], r[1], r[2]);
  const int kind = pf.kind[v];
  if (kind == kProlongInjection) return mid;
  Real q[3];
  for (int d = 0; d < 3; ++d) {
    int lo[3] = {r[0], r[1], r[2]}, hi[3] = {r[0], r[1], r[2]};
    --lo[d], ++hi[d];
    const Real below = coarse_at(value, patches, clamp, v, one, lo[0], lo[1], lo[2]);
    const Real above = coarse_at(value, patches, clamp, v, one, hi[0], hi[1], hi[2]);
    q[d] = kind == kProlongLimited
               ? mul_rn(Real(0.25), LimiterMinmod::slope(mid - below, above - mid))
               : mul_rn(Real(0.125), above - below);
  }
  Real out = mid;
  out += f[0] - 2 * r[0] ? q[0] : -q[0];
  out += f[1] - 2 * r[1] ? q[1] : -q[1];
  out += f[2] - 2 * r[2] ? q[2] : -q[2];
  return out;
}

// Whether the fine cells of f's coarse cell take its coarse values (injection): one of
// them inside the box ([-ghost, 16 + ghost)^3, the region prolong_region checks, since
// the ghost blocks are cut at multiples of 8) is not admissible.
template <class Value>
TESSERA_HD bool coarse_cell_injects(const Value& value, const int* patches, const int* clamp,
                                    const ProlongFields& pf, int ghost, const int f[3]) {
  if (!pf.admissible) return false;
  const int r[3] = {floor_half(f[0]), floor_half(f[1]), floor_half(f[2])};
  const int nv = pf.nvar < kAdmissibleVars ? pf.nvar : kAdmissibleVars;
  for (int o = 0; o < 8; ++o) {
    const int c[3] = {2 * r[0] + (o & 1), 2 * r[1] + ((o >> 1) & 1), 2 * r[2] + ((o >> 2) & 1)};
    bool inside = true;
    for (int d = 0; d < 3; ++d) inside = inside && c[d] >= -ghost && c[d] < kGroupSize + ghost;
    if (!inside) continue;
    Real u[kAdmissibleVars] = {};
    Real mid;
    for (int v = 0; v < nv; ++v) u[v] = prolonged(value, patches, clamp, pf, v, c, mid);
    if (!pf.admissible(u, 1)) return true;
  }
  return false;
}

// A regrid's new family (mesh::prolong_family, evaluated per fine cell on the device): the
// state at fine cell f (relative to the family's first cell) from the parent level's
// current data, `store(v, x)` receiving field v. prolong_family prolongs each child over
// its own cells, which hold all eight fine cells of each of their coarse cells: the
// injection check looks at those eight (no ghost layer).
template <class Value, class Store>
TESSERA_HD void prolong_new_cell(const Value& value, const int* patches, const int* clamp,
                                 const ProlongFields& pf, const int f[3], const Store& store) {
  const bool inject = coarse_cell_injects(value, patches, clamp, pf, 0, f);
  for (int v = 0; v < pf.nvar; ++v) {
    Real mid;
    const Real x = prolonged(value, patches, clamp, pf, v, f, mid);
    store(v, inject ? mid : x);
  }
}

}  // namespace tessera::kernels
