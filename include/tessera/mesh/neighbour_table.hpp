// Where each patch group finds the cells around it: for every family of the mesh, the
// source of each of the 4x4x4 patch-sized blocks around the group (the group itself is
// blocks 0..1 per axis) -- a patch of the same level (periodic images included), the
// coarser level, or a non-periodic domain side. Every neighbour walk reads it (the prepare
// stage, flagging and its buffer, the device gather tables, the gravity gathers and the
// potential correction, div B), so "which patch holds the data a group needs" is answered
// in one place. With a decomposition (parallel/partition.hpp) the same rows say which of
// those patches live on another rank: the exchange plan.
//
// The rows are not stored: a block lies in one of the 27 family positions around the group,
// which the forest links per family (Forest::family_neighbour), so a row is 64 short reads
// of those links. Stored, the rows were 256 bytes per family (a third of the replicated
// forest's memory, every rank holding every family's) and rebuilt at every regrid for the
// families around each change. What a walk cannot get from one link is kept per family: the
// non-periodic sides the group touches and whether any block is on the coarser level.
#pragma once

#include <array>
#include <cstdint>

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

// A view of a forest (valid while the forest is alive and unchanged).
class NeighbourTable {
 public:
  using Row = std::array<int, kGroupBlocks>;
  explicit NeighbourTable(const Forest& forest) : forest_(&forest) {}

  // The 64 block sources of the group whose first patch is `first_patch`.
  Row row(int first_patch) const;
  int block(int first_patch, int bx, int by, int bz) const;
  // The same-level neighbour of patch p at offset (dx, dy, dz) in {-1, 0, 1}^3, or
  // kBlockCoarse / kBlockBoundary.
  int neighbour(int p, int dx, int dy, int dz) const {
    const int c = p % 8;
    return block(p - c, (c & 1) + dx, ((c >> 1) & 1) + dy, ((c >> 2) & 1) + dz);
  }
  // Non-periodic domain sides the group touches: bit 2 d + s (s = 0 low, 1 high).
  int sides(int first_patch) const;
  // Whether any block of the group is kBlockCoarse (its ghost zones read the coarser level
  // around its parent): kept per family, so the partition's costs and the exchange plans
  // ask one byte per group instead of walking its 64 blocks.
  bool reads_coarse(int first_patch) const;

  // Every group's rows and flags equal (tests).
  bool operator==(const NeighbourTable& other) const;

 private:
  const Forest* forest_;
};

// A family's flags as Forest keeps them: the sides (bits 0-5, as NeighbourTable::sides)
// and bit 6 set when a block reads the coarser level.
inline constexpr std::uint8_t kFamilyReadsCoarse = 1 << 6;

}  // namespace tessera::mesh
