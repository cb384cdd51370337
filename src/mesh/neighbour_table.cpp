#include "tessera/mesh/neighbour_table.hpp"

#include "tessera/mesh/forest.hpp"

namespace tessera::mesh {

namespace {

// Where a block at offset b (-1 .. 2 per axis) of a group lies: the family position f
// around the group (-1 .. 1 per axis, as neighbour_index) and the child within it.
struct BlockPlace {
  int family, child;
  int f[3];
};

constexpr BlockPlace place(int bx, int by, int bz) {
  BlockPlace p{0, 0, {0, 0, 0}};
  const int b[3] = {bx, by, bz};
  for (int d = 0; d < 3; ++d) {
    p.f[d] = b[d] < 0 ? -1 : b[d] > 1 ? 1 : 0;
    p.child |= (b[d] - 2 * p.f[d]) << d;
  }
  p.family = neighbour_index(p.f[0], p.f[1], p.f[2]);
  return p;
}

// A block with no patch of the level: beyond a non-periodic side the group touches, or
// on the coarser level.
int missing(const BlockPlace& p, int sides) {
  for (int d = 0; d < 3; ++d)
    if ((p.f[d] < 0 && (sides >> (2 * d)) & 1) || (p.f[d] > 0 && (sides >> (2 * d + 1)) & 1))
      return kBlockBoundary;
  return kBlockCoarse;
}

}  // namespace

NeighbourTable::Row NeighbourTable::row(int first_patch) const {
  const Forest::FamilyLinks links = forest_->family_links(first_patch);
  const int sides = forest_->family_flags(first_patch);
  Row r;
  for (int bz = -1; bz <= 2; ++bz)
    for (int by = -1; by <= 2; ++by)
      for (int bx = -1; bx <= 2; ++bx) {
        const BlockPlace p = place(bx, by, bz);
        const int q = links[p.family];
        r[group_block(bx, by, bz)] = q != kNoPatch ? q + p.child : missing(p, sides);
      }
  return r;
}

int NeighbourTable::block(int first_patch, int bx, int by, int bz) const {
  const BlockPlace p = place(bx, by, bz);
  const int q = forest_->family_neighbour(first_patch, p.family);
  return q != kNoPatch ? q + p.child : missing(p, forest_->family_flags(first_patch));
}

int NeighbourTable::sides(int first_patch) const {
  return forest_->family_flags(first_patch) & ~kFamilyReadsCoarse;
}

bool NeighbourTable::reads_coarse(int first_patch) const {
  return (forest_->family_flags(first_patch) & kFamilyReadsCoarse) != 0;
}

bool NeighbourTable::operator==(const NeighbourTable& other) const {
  const Forest& a = *forest_;
  const Forest& b = *other.forest_;
  if (a.num_levels() != b.num_levels()) return false;
  for (int level = 0; level < a.num_levels(); ++level) {
    if (a.groups(level).size() != b.groups(level).size()) return false;
    for (const int g : a.groups(level)) {
      if (g >= b.num_patches() || b.patch(g).level != level) return false;
      if (row(g) != other.row(g) || a.family_flags(g) != b.family_flags(g)) return false;
    }
  }
  return true;
}

}  // namespace tessera::mesh
