// The neighbour table (mesh/neighbour_table.hpp) against the patch lookup: every block of
// every group is the patch found by coordinates, or the coarser level inside the domain,
// or a boundary beyond a non-periodic side, and the group's flag of coarse blocks agrees;
// it follows regrids and canonicalisation.
#include <gtest/gtest.h>

#include "../nested_mesh.hpp"
#include "../test_fields.hpp"
#include "tessera/core/error.hpp"
#include "tessera/mesh/mesh.hpp"

namespace tessera::mesh {
namespace {

using testing::nested_mesh;
using testing::NestedSpec;
using testing::plain_fields;

// The table's answer recomputed by coordinates (the lookup, not the neighbour links the
// table is built from); counts the blocks of each kind [patch, coarse, boundary].
void expect_table_matches_lookup(const Mesh& m, std::array<int, 3>& kinds) {
  const NeighbourTable& t = m.neighbours();
  for (int level = 0; level < m.num_levels(); ++level)
    for (const int g : m.groups(level)) {
      const PatchCoord base = m.patch(g).coord();
      bool coarse = false;
      for (int bz = -1; bz <= 2; ++bz)
        for (int by = -1; by <= 2; ++by)
          for (int bx = -1; bx <= 2; ++bx) {
            PatchCoord pc = {base[0] + bx, base[1] + by, base[2] + bz};
            int want = m.find_patch(level, pc);
            if (want == kNoPatch) want = m.wrap(level, pc) ? kBlockCoarse : kBlockBoundary;
            ASSERT_EQ(t.block(g, bx, by, bz), want)
                << "level " << level << " group " << g << " block " << bx << by << bz;
            ++kinds[want >= 0 ? 0 : want == kBlockCoarse ? 1 : 2];
            coarse |= want == kBlockCoarse;
          }
      EXPECT_EQ(t.reads_coarse(g), coarse) << "level " << level << " group " << g;
      // Patch neighbours are the blocks seen from the patch.
      for (int c = 0; c < kFamilySize; ++c)
        for (int n = 0; n < 27; ++n) {
          const int q = t.neighbour(g + c, n % 3 - 1, (n / 3) % 3 - 1, n / 9 - 1);
          const int link = m.neighbour_patch(g + c, n);
          ASSERT_EQ(q >= 0 ? q : kNoPatch, link);
        }
      const auto cells = m.level_cells(level);
      int sides = 0;
      for (int d = 0; d < 3; ++d)
        if (!m.geometry().periodic(d)) {
          sides |= (m.patch(g).corner[d] == 0) << (2 * d);
          sides |= (m.patch(g).corner[d] + 16 == cells[d]) << (2 * d + 1);
        }
      EXPECT_EQ(t.sides(g), sides);
    }
}

TEST(NeighbourTable, EveryBlockIsThePatchTheLookupFinds) {
  for (const Boundary bc : {Boundary::kOutflow, Boundary::kPeriodic}) {
    NestedSpec spec;
    spec.bc = bc;
    spec.centre = {0.1, 0.45, 0.55};  // the refined region crosses the x = 0 side
    const Mesh m = nested_mesh(spec, plain_fields(1));
    ASSERT_EQ(m.num_levels(), 3);
    std::array<int, 3> kinds{};
    expect_table_matches_lookup(m, kinds);
    EXPECT_GT(kinds[0], 0);
    EXPECT_GT(kinds[1], 0);  // coarse-fine faces
    EXPECT_EQ(kinds[2] > 0, bc == Boundary::kOutflow);
  }
}

TEST(NeighbourTable, FollowsRegridsAndCanonicalisation) {
  NestedSpec a, b;
  a.bc = b.bc = Boundary::kPeriodic;
  b.centre = {0.42, 0.45, 0.5};  // overlapping: some families stay, the others change slots
  Mesh m = nested_mesh(a, plain_fields(1));
  const Mesh target = nested_mesh(b, plain_fields(1));
  m.apply_hierarchy(target.hierarchy());
  ASSERT_FALSE(m.is_canonical());  // slots reused: the table must follow them
  m.check_invariants();            // includes the table against a fresh build
  std::array<int, 3> kinds{};
  expect_table_matches_lookup(m, kinds);
  m.canonicalize();
  m.check_invariants();
  expect_table_matches_lookup(m, kinds);
  EXPECT_EQ(m.neighbours(), target.neighbours());
}

// The flags (sides, coarse reads) are kept per family slot: canonicalisation must move
// them with their families. A family at the domain's corner is added after one in the
// middle, so it takes the later slot and canonicalisation swaps the two; their flags
// differ (the corner's touches three outflow sides).
TEST(NeighbourTable, FlagsMoveWithTheirFamiliesWhenCanonicalised) {
  Geometry geo;
  geo.xmin = {0, 0, 0};
  geo.xmax = {1, 1, 1};
  geo.root_cells = {64, 64, 64};
  geo.dx0 = 1.0 / 64;
  for (auto& d : geo.boundary) d = {Boundary::kOutflow, Boundary::kOutflow};
  Forest f(geo, Hierarchy{{{4, 4, 4}}});
  HierarchyChange add;
  add.added = {{{0, 0, 0}}};
  add.removed = {{}};
  f.apply_changes(add);
  ASSERT_FALSE(f.is_canonical());
  const int corner = f.groups(1)[0];
  ASSERT_EQ(f.patch(corner).corner, (std::array<int, 3>{0, 0, 0}));
  EXPECT_EQ(f.neighbours().sides(corner), 0b010101);
  ASSERT_FALSE(f.canonicalize().empty());
  f.check_invariants();  // every family's flags against a fresh computation
  const int moved = f.groups(1)[0];
  ASSERT_EQ(f.patch(moved).corner, (std::array<int, 3>{0, 0, 0}));
  EXPECT_EQ(f.neighbours().sides(moved), 0b010101);
  EXPECT_EQ(f.neighbours().sides(f.groups(1)[1]), 0);
  EXPECT_TRUE(f.neighbours().reads_coarse(moved));
}

}  // namespace
}  // namespace tessera::mesh
