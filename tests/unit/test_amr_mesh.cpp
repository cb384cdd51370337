// Mesh hierarchy operations of AMR: building refined levels, prolongation and
// restriction round trips, invariant checks, and the Löhner estimator.
#include <gtest/gtest.h>

#include <cmath>

#include "tessera/core/error.hpp"
#include "tessera/evolve/refinement.hpp"
#include "tessera/mesh/mesh.hpp"
#include "tessera/mesh/prolongation.hpp"

namespace tessera::mesh {
namespace {

Geometry box_geometry(Boundary bc, int n = 32) {
  Geometry g;
  g.xmin = {0, 0, 0};
  g.xmax = {1, 1, 1};
  g.root_cells = {n, n, n};
  g.dx0 = 1.0 / n;
  for (auto& d : g.boundary) d = {bc, bc};
  return g;
}

template <class F>
void fill_level(Mesh& m, int level, F&& f) {
  for (int g : m.groups(level))
    for (int c = 0; c < kFamilySize; ++c) {
      Real* u = m.current(g + c);
      for (int k = 0; k < kPatchSize; ++k)
        for (int j = 0; j < kPatchSize; ++j)
          for (int i = 0; i < kPatchSize; ++i) {
            const auto x = m.cell_center(g + c, i, j, k);
            for (int v = 0; v < m.nvar(); ++v)
              u[v * kPatchCells + (k * kPatchSize + j) * kPatchSize + i] = Real(f(x, v));
          }
    }
}

Hierarchy refine_all(const Mesh& m) {
  Hierarchy h(1);
  for (int g : m.groups(0))
    for (int c = 0; c < kFamilySize; ++c) h[0].push_back(m.patch(g + c).coord());
  return h;
}

double smooth(std::array<double, 3> x, int v) {
  return 2 + v + std::sin(2 * M_PI * x[0]) * std::cos(4 * M_PI * x[1]) + 0.3 * std::sin(6 * x[2]);
}

TEST(AmrMesh, RefineEverythingThenDerefineEverythingRestoresTheRootData) {
  const Geometry geo = box_geometry(Boundary::kPeriodic);
  Mesh root(geo, 5);
  fill_level(root, 0, smooth);
  Mesh fine(geo, 5, refine_all(root));
  ASSERT_EQ(fine.num_levels(), 2);
  fine.check_invariants();
  for (int p = 0; p < root.num_patches(); ++p)
    std::copy(root.current(p), root.current(p) + root.patch_reals(), fine.current(p));
  CoarseBox scratch;
  for (int g : fine.groups(1)) prolong_family(fine, g, scratch);
  EXPECT_LT(max_restriction_mismatch(fine), 1e-15);
  for (int g : fine.groups(1)) restrict_family(fine, g);
  double worst = 0;
  for (int p = 0; p < root.num_patches(); ++p)
    for (std::size_t i = 0; i < root.patch_reals(); ++i)
      worst = std::max(worst, std::fabs(double(fine.current(p)[i] - root.current(p)[i])) /
                                  std::fabs(double(root.current(p)[i])));
  EXPECT_LE(worst, 1e-14);
}

TEST(AmrMesh, ProlongationIsExactForLinearDataAwayFromBoundaries) {
  const Geometry geo = box_geometry(Boundary::kOutflow);
  Mesh m(geo, 1, refine_all(Mesh(geo, 1)));
  auto linear = [](std::array<double, 3> x, int) { return 1 + 0.5 * x[0] - 0.25 * x[1] + x[2]; };
  fill_level(m, 0, linear);
  CoarseBox scratch;
  for (int g : m.groups(1)) prolong_family(m, g, scratch);
  const double h = m.dx(1);
  int checked = 0;
  for (int g : m.groups(1))
    for (int c = 0; c < kFamilySize; ++c)
      for (int k = 0; k < kPatchSize; ++k)
        for (int j = 0; j < kPatchSize; ++j)
          for (int i = 0; i < kPatchSize; ++i) {
            const auto x = m.cell_center(g + c, i, j, k);
            // Limiters flatten slopes in the outermost coarse cells (no outer neighbour).
            if (std::min({x[0], x[1], x[2]}) < 2 * h || std::max({x[0], x[1], x[2]}) > 1 - 2 * h)
              continue;
            EXPECT_NEAR(m.current(g + c)[(k * kPatchSize + j) * kPatchSize + i], linear(x, 0),
                        1e-13);
            ++checked;
          }
  EXPECT_GT(checked, 100000);
}

TEST(AmrMesh, CheckInvariantsRejectsImproperNesting) {
  const Geometry geo = box_geometry(Boundary::kOutflow);
  // Level 1 under a single root patch; level 2 under the corner patch of that family,
  // whose neighbours on level 1 mostly do not exist.
  Hierarchy h = {{{1, 1, 1}}, {{2, 2, 2}}};
  Mesh m(geo, 1, h);
  ASSERT_EQ(m.num_levels(), 3);
  try {
    m.check_invariants();
    FAIL() << "improper nesting not detected";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("proper nesting"), std::string::npos) << e.what();
  }
  // Refining all of level 0 first makes the same level-2 family properly nested.
  Mesh all(geo, 1, refine_all(Mesh(geo, 1)));
  Hierarchy ok = all.hierarchy();
  ok.push_back({{2, 2, 2}});
  EXPECT_NO_THROW(Mesh(geo, 1, ok).check_invariants());
}

TEST(AmrMesh, MeshRejectsChildrenOfMissingParents) {
  const Geometry geo = box_geometry(Boundary::kOutflow);
  Hierarchy h = {{}, {{0, 0, 0}}};
  EXPECT_THROW(Mesh(geo, 1, h), Error);
}

TEST(AmrMesh, LeafCellsCountEachRegionOnce) {
  const Geometry geo = box_geometry(Boundary::kPeriodic);
  Mesh m(geo, 1, {{{0, 0, 0}}});
  // One root patch replaced by 8 finer patches: 8x the cells in that region.
  EXPECT_EQ(m.num_leaf_cells(), 32LL * 32 * 32 - 512 + 8 * 512);
  EXPECT_EQ(m.num_leaf_cells(1), 8 * 512);
}

TEST(Lohner, ZeroForLinearDataLargeAtAJump) {
  double linear[3][3][3], step[3][3][3];
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 3; ++i) {
        linear[k][j][i] = 1 + i + 2 * j - k;
        step[k][j][i] = i == 2 ? 10 : 1;
      }
  EXPECT_NEAR(evolve::lohner_estimator(linear, 0.01), 0, 1e-12);
  EXPECT_GT(evolve::lohner_estimator(step, 0.01), 0.8);
  EXPECT_LE(evolve::lohner_estimator(step, 0.01), 1.0);
}

}  // namespace
}  // namespace tessera::mesh
