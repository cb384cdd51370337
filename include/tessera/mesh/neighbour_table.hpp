// Where each patch group finds the cells around it: for every family of the mesh, the
// source of each of the 4x4x4 patch-sized blocks around the group (the group itself is
// blocks 0..1 per axis) -- a patch of the same level (periodic images included), the
// coarser level, or a non-periodic domain side. Built once per mesh structure (the mesh
// rebuilds it at construction, regrid and canonicalisation); every neighbour walk reads it
// (the prepare stage, flagging and its buffer, the device gather tables, the gravity
// gathers and the potential correction, div B), so "which patch holds the data a group
// needs" is answered in one place. With a decomposition (parallel/partition.hpp) the same
// rows say which of those patches live on another rank: the exchange plan.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/resident_gather.hpp"

namespace tessera::mesh {

class Forest;

// Blocks per group, index (bx+1) + 4 (by+1) + 16 (bz+1) for b in {-1..2}^3: the layout of
// the device gather tables (kernels::kGatherBlocks).
inline constexpr int kGroupBlocks = kernels::kGatherBlocks;
constexpr int group_block(int bx, int by, int bz) {
  return (bx + 1) + 4 * (by + 1) + 16 * (bz + 1);
}

// A block's source when it is not a patch (patch indices are >= 0).
inline constexpr int kBlockBoundary = -1;  // beyond a non-periodic domain side
inline constexpr int kBlockCoarse = -2;    // inside the domain, on the coarser level

class NeighbourTable {
 public:
  // Rows for every family of `m`, indexed by the family's first patch / 8.
  void build(const Forest& m);
  // After a regrid: the table resized to the pool and the rows of `families` (first
  // patches whose links or slots changed) rebuilt; every other row stays as it was.
  void update(const Forest& m, const std::vector<int>& families);

  // The 64 block sources of the group whose first patch is `first_patch`.
  const int* row(int first_patch) const {
    return blocks_.data() + std::size_t(first_patch / 8) * kGroupBlocks;
  }
  int block(int first_patch, int bx, int by, int bz) const {
    return row(first_patch)[group_block(bx, by, bz)];
  }
  // The same-level neighbour of patch p at offset (dx, dy, dz) in {-1, 0, 1}^3, or
  // kBlockCoarse / kBlockBoundary.
  int neighbour(int p, int dx, int dy, int dz) const {
    const int c = p % 8;
    return block(p - c, (c & 1) + dx, ((c >> 1) & 1) + dy, ((c >> 2) & 1) + dz);
  }
  // Non-periodic domain sides the group touches: bit 2 d + s (s = 0 low, 1 high).
  int sides(int first_patch) const { return sides_[first_patch / 8]; }
  // Whether any block of the group is kBlockCoarse (its ghost zones read the coarser level
  // around its parent): kept with the row, so the partition's costs and the exchange plans
  // ask one byte per group instead of scanning its 64 blocks.
  bool reads_coarse(int first_patch) const { return coarse_[first_patch / 8] != 0; }
  // Families the table has rows for (the mesh's pool slots / 8).
  int families() const { return static_cast<int>(sides_.size()); }

  bool operator==(const NeighbourTable&) const = default;

 private:
  void build_row(const Forest& m, int first);
  std::vector<int> blocks_;           // [family][kGroupBlocks]
  std::vector<int> sides_;            // [family]
  std::vector<std::uint8_t> coarse_;  // [family]: 1 where a block is kBlockCoarse
};

}  // namespace tessera::mesh
