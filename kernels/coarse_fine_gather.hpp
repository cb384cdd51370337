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

// Field v of coarse cell r (`mid`) and its three slopes (`q`, none for injection), with
// prolong_region's operations in its order: the eight fine cells of r share them.
struct CoarseSlopes {
  Real mid = 0;
  Real q[3] = {};
};

template <class Value>
TESSERA_HD CoarseSlopes coarse_slopes(const Value& value, const int* patches, const int* clamp,
                                      const ProlongFields& pf, int v, const int r[3]) {
  CoarseSlopes s;
  const bool one = pf.one_level[v] != 0;
  s.mid = coarse_at(value, patches, clamp, v, one, r[0], r[1], r[2]);
  const int kind = pf.kind[v];
  if (kind == kProlongInjection) return s;
  for (int d = 0; d < 3; ++d) {
    int lo[3] = {r[0], r[1], r[2]}, hi[3] = {r[0], r[1], r[2]};
    --lo[d], ++hi[d];
    const Real below = coarse_at(value, patches, clamp, v, one, lo[0], lo[1], lo[2]);
    const Real above = coarse_at(value, patches, clamp, v, one, hi[0], hi[1], hi[2]);
    s.q[d] = kind == kProlongLimited
                 ? mul_rn(Real(0.25), LimiterMinmod::slope(s.mid - below, above - s.mid))
                 : mul_rn(Real(0.125), above - below);
  }
  return s;
}

// Fine cell f (relative to the group's first cell) of coarse cell r = floor(f / 2), from
// r's slopes.
TESSERA_HD inline Real prolong_from(const CoarseSlopes& s, int kind, const int f[3],
                                    const int r[3]) {
  if (kind == kProlongInjection) return s.mid;
  Real out = s.mid;
  out += f[0] - 2 * r[0] ? s.q[0] : -s.q[0];
  out += f[1] - 2 * r[1] ? s.q[1] : -s.q[1];
  out += f[2] - 2 * r[2] ? s.q[2] : -s.q[2];
  return out;
}

// The fields the admissibility check reads (AdmissibleState::vars), within the registry's.
TESSERA_HD inline int admissible_vars(const ProlongFields& pf) {
  const int n = pf.admissible.vars();
  return n < pf.nvar ? n : pf.nvar;
}

// Whether the fine cells of coarse cell r take its coarse values (injection): one of them
// inside the box ([-ghost, 16 + ghost)^3, the region prolong_region checks, since the
// ghost blocks are cut at multiples of 8) is not admissible; s holds r's slopes of the
// first admissible_vars(pf) fields.
TESSERA_HD inline bool slopes_inject(const CoarseSlopes* s, const ProlongFields& pf, int ghost,
                                     const int r[3]) {
  const int nv = admissible_vars(pf);
  if (nv == 0) return false;
  for (int o = 0; o < 8; ++o) {
    const int c[3] = {2 * r[0] + (o & 1), 2 * r[1] + ((o >> 1) & 1), 2 * r[2] + ((o >> 2) & 1)};
    bool inside = true;
    for (int d = 0; d < 3; ++d) inside = inside && c[d] >= -ghost && c[d] < kGroupSize + ghost;
    if (!inside) continue;
    Real u[kAdmissibleVars] = {};
    for (int v = 0; v < kAdmissibleVars; ++v)
      if (v < nv) u[v] = prolong_from(s[v], pf.kind[v], c, r);
    if (!pf.admissible(u, 1)) return true;
  }
  return false;
}

// Fields [first, first + count) of fine cell f (relative to the group's first cell) from
// the coarser level, `store(v, x)` receiving field v in increasing v: the limited (or
// linear) prolongation, or the coarse value for every field where slopes_inject(). Each
// field's slopes are computed once, for the check and the value: the check's eight fine
// cells share their coarse cell's slopes, so a ghost cell reads each coarse cell of its
// stencil once per field, not nine times.
template <class Value, class Store>
TESSERA_HD void prolong_ghost_cell(const Value& value, const int* patches, const int* clamp,
                                   const ProlongFields& pf, int ghost, const int f[3], int first,
                                   int count, const Store& store) {
  const int r[3] = {floor_half(f[0]), floor_half(f[1]), floor_half(f[2])};
  const int nv = admissible_vars(pf), end = first + count;
  CoarseSlopes s[kAdmissibleVars];
  for (int v = 0; v < kAdmissibleVars; ++v)
    if (v < nv) s[v] = coarse_slopes(value, patches, clamp, pf, v, r);
  const bool inject = slopes_inject(s, pf, ghost, r);
  for (int v = 0; v < kAdmissibleVars; ++v)
    if (v < nv && v >= first && v < end)
      store(v, inject ? s[v].mid : prolong_from(s[v], pf.kind[v], f, r));
  for (int v = first > nv ? first : nv; v < end; ++v) {
    const CoarseSlopes sv = coarse_slopes(value, patches, clamp, pf, v, r);
    store(v, inject ? sv.mid : prolong_from(sv, pf.kind[v], f, r));
  }
}

// A regrid's new family (mesh::prolong_family, evaluated per fine cell on the device): the
// state at fine cell f (relative to the family's first cell) from the parent level's
// current data, `store(v, x)` receiving field v. prolong_family prolongs each child over
// its own cells, which hold all eight fine cells of each of their coarse cells: the
// injection check looks at those eight (no ghost layer).
template <class Value, class Store>
TESSERA_HD void prolong_new_cell(const Value& value, const int* patches, const int* clamp,
                                 const ProlongFields& pf, const int f[3], const Store& store) {
  prolong_ghost_cell(value, patches, clamp, pf, 0, f, 0, pf.nvar, store);
}

}  // namespace tessera::kernels
