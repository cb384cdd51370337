// Helpers shared by the forest's source files (forest.cpp: construction and lookups;
// forest_changes.cpp: regrids; forest_invariants.cpp): the Morton keys of the canonical
// order, the opposite link and the text naming a patch in errors.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/mesh/forest.hpp"

namespace tessera::mesh::detail {

// Spreads the low 21 bits of v so that bit b lands on bit 3b.
inline std::uint64_t spread_bits(std::uint64_t v) {
  v &= 0x1fffff;
  v = (v | v << 32) & 0x1f00000000ffffULL;
  v = (v | v << 16) & 0x1f0000ff0000ffULL;
  v = (v | v << 8) & 0x100f00f00f00f00fULL;
  v = (v | v << 4) & 0x10c30c30c30c30c3ULL;
  v = (v | v << 2) & 0x1249249249249249ULL;
  return v;
}

// Interleaves the bits of (x, y, z): groups close on this curve are close in space,
// which keeps neighbour data in cache and gives the later MPI decomposition its order
// (space-filling curve, as in Zabelok, Arslanbekov & Kolobov 2015).
inline std::uint64_t morton_key(std::uint32_t x, std::uint32_t y, std::uint32_t z) {
  return spread_bits(x) | spread_bits(y) << 1 | spread_bits(z) << 2;
}

// Canonical position of a family: the Morton key of its coordinate (its first patch's
// coordinate halved; for a refined level that is the parent's coordinate). A patch of
// the family adds its child index c = x + 2y + 4z, the next three Morton bits.
inline std::uint64_t family_key(const PatchMeta& first) {
  const PatchCoord pc = first.coord();
  return morton_key(pc[0] / 2, pc[1] / 2, pc[2] / 2);
}

constexpr int opposite(int n) {
  return 26 - n;
}

inline std::string coord_text(int level, PatchCoord pc) {
  return "level " + std::to_string(level) + " patch (" + std::to_string(pc[0]) + ", " +
         std::to_string(pc[1]) + ", " + std::to_string(pc[2]) + ")";
}

}  // namespace tessera::mesh::detail
