// The root potential's layouts (tessera/gravity/root_boxes.hpp): the whole ghosted grid, and
// the boxes around the root families a rank holds. Every cell a family's box holds must
// land at a place of its own in that box, the box must hold exactly the family and one
// cell around it, a cell outside the domain is read from the box of the nearest family
// inside, and a family without a box reads the NaN after the boxes.
#include "tessera/gravity/root_boxes.hpp"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace tessera::gravity {
namespace {

constexpr int kF = RootBoxes::kFamilyCells;

TEST(RootBoxes, WholeGridIsTheGhostedIndex) {
  const RootBoxes b{48, 32, 16};
  EXPECT_EQ(b.size(), std::size_t(50) * 34 * 18);
  EXPECT_EQ(b.at(-1, -1, -1), 0u);
  EXPECT_EQ(b.at(0, 0, 0), std::size_t(1 * 34 + 1) * 50 + 1);
  EXPECT_EQ(b.at(48, 32, 16), b.size() - 1);
  EXPECT_EQ(b.at(5, 7, 3, 40, 20, 10), b.at(5, 7, 3));  // the family does not matter
}

TEST(RootBoxes, EachFamilysBoxHoldsItsCellsAndOneAround) {
  // A 48 x 32 x 16 root: 3 x 2 x 1 families, of which this rank holds three, in the order
  // of its boxes: (2, 0, 0), (0, 1, 0), (1, 1, 0).
  const int n0 = 48, n1 = 32, n2 = 16;
  std::vector<int> slot(6, -1);
  slot[2] = 0;  // family (2, 0, 0)
  slot[3] = 1;  // (0, 1, 0)
  slot[4] = 2;  // (1, 1, 0)
  const RootBoxes b{n0, n1, n2, slot.data(), 3};
  EXPECT_EQ(b.size(), 3 * RootBoxes::kBoxCells + 1);
  const int held[3][3] = {{2, 0, 0}, {0, 1, 0}, {1, 1, 0}};
  for (int s = 0; s < 3; ++s) {
    std::set<std::size_t> seen;
    const int c[3] = {held[s][0] * kF, held[s][1] * kF, held[s][2] * kF};
    for (int k = c[2] - 1; k <= c[2] + kF; ++k)
      for (int j = c[1] - 1; j <= c[1] + kF; ++j)
        for (int i = c[0] - 1; i <= c[0] + kF; ++i) {
          // Seen from any cell of the family.
          const std::size_t a = b.at(i, j, k, c[0] + 3, c[1] + 15, c[2] + 7);
          ASSERT_GE(a, std::size_t(s) * RootBoxes::kBoxCells) << i << " " << j << " " << k;
          ASSERT_LT(a, std::size_t(s + 1) * RootBoxes::kBoxCells) << i << " " << j << " " << k;
          seen.insert(a);
          // Along x the box's rows are contiguous: the rows the potential moves in.
          if (i > c[0] - 1) {
            ASSERT_EQ(a, b.at(i - 1, j, k, c[0], c[1], c[2]) + 1);
          }
        }
    EXPECT_EQ(seen.size(), RootBoxes::kBoxCells) << "box " << s << ": cells share a place";
    // The box is [z][y][x] from the cell below the family's first: the rows of x, then y.
    constexpr int n = RootBoxes::kBox;
    EXPECT_EQ(b.at(c[0] - 1, c[1] - 1, c[2] - 1, c[0], c[1], c[2]), s * RootBoxes::kBoxCells);
    EXPECT_EQ(b.at(c[0] + 4, c[1] + 5, c[2] + 6, c[0], c[1], c[2]),
              s * RootBoxes::kBoxCells + (std::size_t(7) * n + 6) * n + 5);
  }
  // Inside the domain a cell is read from its own family's box; a cell of the layer
  // outside from the nearest family inside: (-1, 20, 5) from (0, 1, 0)'s, (48, -1, 16)
  // from (2, 0, 0)'s.
  EXPECT_EQ(b.at(20, 20, 5), b.at(20, 20, 5, 16, 16, 0));
  EXPECT_EQ(b.at(-1, 20, 5), b.at(-1, 20, 5, 0, 16, 0));
  EXPECT_LT(b.at(-1, 20, 5), 2 * RootBoxes::kBoxCells);
  EXPECT_EQ(b.at(48, -1, 16), b.at(48, -1, 16, 32, 0, 0));
  EXPECT_LT(b.at(48, -1, 16), RootBoxes::kBoxCells);
  // Families without a box: the NaN after the boxes.
  EXPECT_EQ(b.at(3, 3, 3), 3 * RootBoxes::kBoxCells);
  EXPECT_EQ(b.at(47, 31, 15, 0, 0, 0), 3 * RootBoxes::kBoxCells);
}

}  // namespace
}  // namespace tessera::gravity
