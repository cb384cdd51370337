#include "tessera/mesh/neighbour_table.hpp"

#include <algorithm>

#include "tessera/mesh/forest.hpp"

namespace tessera::mesh {

void NeighbourTable::build(const Forest& m) {
  const int families = m.num_patches() / kFamilySize;
  blocks_.assign(std::size_t(families) * kGroupBlocks, kBlockBoundary);
  sides_.assign(families, 0);
  coarse_.assign(families, 0);
  for (int level = 0; level < m.num_levels(); ++level)
    for (const int first : m.groups(level)) build_row(m, first);
}

void NeighbourTable::update(const Forest& m, const std::vector<int>& families) {
  const int n = m.num_patches() / kFamilySize;
  blocks_.resize(std::size_t(n) * kGroupBlocks, kBlockBoundary);
  sides_.resize(n, 0);
  coarse_.resize(n, 0);
  for (const int first : families)
    if (first < m.num_patches() && m.patch(first).level >= 0) build_row(m, first);
}

void NeighbourTable::build_row(const Forest& m, int first) {
  const auto& geo = m.geometry();
  const PatchMeta& base = m.patch(first);
  const int level = base.level;
  const auto cells = m.level_cells(level);
  int* row = blocks_.data() + std::size_t(first / kFamilySize) * kGroupBlocks;
  int& sides = sides_[first / kFamilySize];
  std::uint8_t& coarse = coarse_[first / kFamilySize];
  sides = 0;
  coarse = 0;
  for (int d = 0; d < 3; ++d) {
    if (geo.periodic(d)) continue;
    if (base.corner[d] == 0) sides |= 1 << (2 * d);
    if (base.corner[d] + 2 * kPatchSize == cells[d]) sides |= 1 << (2 * d + 1);
  }
  for (int bz = -1; bz <= 2; ++bz)
    for (int by = -1; by <= 2; ++by)
      for (int bx = -1; bx <= 2; ++bx) {
        int src = m.block_patch(first, bx, by, bz);
        if (src == kNoPatch) {
          PatchCoord pc = base.coord();
          pc[0] += bx, pc[1] += by, pc[2] += bz;
          src = m.wrap(level, pc) ? kBlockCoarse : kBlockBoundary;
        }
        row[group_block(bx, by, bz)] = src;
        coarse |= src == kBlockCoarse;
      }
}

}  // namespace tessera::mesh
