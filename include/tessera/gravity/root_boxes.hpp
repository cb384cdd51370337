// Where a rank keeps the root potential and its ghost layer (docs/architecture.md,
// "Self-gravity on several ranks"), on the host and on the GPU alike: one rank (and every
// rank of the gathered solve) holds the whole ghosted grid, [n2 + 2][n1 + 2][n0 + 2]; with
// the solve cut into slabs, a rank holds only the (2 kN + 2)^3 box around each root family
// it holds (a family's 16^3 cells and one cell around them), the boxes in the order of the
// held families among the root groups, followed by one NaN. A rank's kicks read one cell
// around its patches, and a refined level's boundary values the layer outside an isolated
// domain next to the root patches it holds: all within those boxes. The whole grid of a
// 1024^3 root is 17 GB for the two solves kept; the boxes of a rank's 256^3 share, 0.4 GB.
#pragma once

#include <cstddef>

#include "tessera/core/real.hpp"
#include "tessera/mesh/patch.hpp"

namespace tessera::gravity {

struct RootBoxes {
  static constexpr int kFamilyCells = 2 * mesh::kPatchSize;  // a family's cells per axis
  static constexpr int kBox = kFamilyCells + 2;
  static constexpr std::size_t kBoxCells = std::size_t(kBox) * kBox * kBox;

  int n0 = 0, n1 = 0, n2 = 0;  // root cells per axis
  // Boxes: [family (fz * (n1 / 16) + fy) * (n0 / 16) + fx] -> its box, -1 where this rank
  // holds none; null: the whole ghosted grid.
  const int* slot = nullptr;
  std::size_t boxes = 0;

  // The values held: the whole ghosted grid, or the boxes and the NaN after them.
  std::size_t size() const {
    return slot ? boxes * kBoxCells + 1 : std::size_t(n0 + 2) * (n1 + 2) * (n2 + 2);
  }
  // Root cell (i, j, k) (-1 .. n, ghost layer included) as the box of the family of root
  // cell (fi, fj, fk) holds it (it must lie within one cell of that family); the NaN after
  // the boxes where this rank holds no box there.
  TESSERA_HD std::size_t at(int i, int j, int k, int fi, int fj, int fk) const {
    if (!slot) return (std::size_t(k + 1) * (n1 + 2) + (j + 1)) * (n0 + 2) + (i + 1);
    constexpr int f = kFamilyCells;
    const int a = fi / f, b = fj / f, c = fk / f;
    const int s = slot[(std::size_t(c) * (n1 / f) + b) * (n0 / f) + a];
    if (s < 0) return boxes * kBoxCells;
    return std::size_t(s) * kBoxCells +
           (std::size_t(k - c * f + 1) * kBox + (j - b * f + 1)) * kBox + (i - a * f + 1);
  }
  // Root cell (i, j, k) from the box of the family that holds it or, for a cell of the
  // layer outside the domain, of the family of the nearest cell inside.
  TESSERA_HD std::size_t at(int i, int j, int k) const {
    return at(i, j, k,
              i < 0     ? 0
              : i >= n0 ? n0 - 1
                        : i,
              j < 0     ? 0
              : j >= n1 ? n1 - 1
                        : j,
              k < 0     ? 0
              : k >= n2 ? n2 - 1
                        : k);
  }
};

}  // namespace tessera::gravity
