// Mesh hierarchy operations of AMR: building refined levels, prolongation and
// restriction round trips, invariant checks, and the Löhner estimator.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

#include "../mesh_rebuild.hpp"
#include "../test_fields.hpp"
#include "tessera/core/error.hpp"
#include "tessera/evolve/refinement.hpp"
#include "tessera/mesh/mesh.hpp"
#include "tessera/mesh/prolongation.hpp"
#include "tessera/physics/fields.hpp"

using tessera::physics::hydro_fields;
using tessera::physics::mhd_fields;

namespace tessera::mesh {
namespace {

using testing::box_geometry;
using testing::plain_fields;

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
  Mesh root(geo, hydro_fields(true, 0));
  fill_level(root, 0, smooth);
  Mesh fine(geo, hydro_fields(true, 0), refine_all(root));
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
  Mesh m(geo, plain_fields(1), refine_all(Mesh(geo, plain_fields(1))));
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
  Mesh m(geo, plain_fields(1), h);
  ASSERT_EQ(m.num_levels(), 3);
  try {
    m.check_invariants();
    FAIL() << "improper nesting not detected";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("proper nesting"), std::string::npos) << e.what();
  }
  // Refining all of level 0 first makes the same level-2 family properly nested.
  Mesh all(geo, plain_fields(1), refine_all(Mesh(geo, plain_fields(1))));
  Hierarchy ok = all.hierarchy();
  ok.push_back({{2, 2, 2}});
  EXPECT_NO_THROW(Mesh(geo, plain_fields(1), ok).check_invariants());
}

TEST(AmrMesh, MeshRejectsChildrenOfMissingParents) {
  const Geometry geo = box_geometry(Boundary::kOutflow);
  Hierarchy h = {{}, {{0, 0, 0}}};
  EXPECT_THROW(Mesh(geo, plain_fields(1), h), Error);
}

TEST(AmrMesh, LeafCellsCountEachRegionOnce) {
  const Geometry geo = box_geometry(Boundary::kPeriodic);
  Mesh m(geo, plain_fields(1), {{{0, 0, 0}}});
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

// The flagging loop compares Löhner's sums with the threshold without dividing where the
// answer is clear; it must give the answer of sqrt(num / den) > threshold everywhere,
// also for num a few ulps either side of threshold^2 den, den = 0, and extreme values.
TEST(Refinement, LohnerComparisonEqualsTheEstimatorComparison) {
  auto direct = [](double num, double den, double threshold) {
    return (den > 0 ? std::sqrt(num / den) : 0.0) > threshold;
  };
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  long long checked = 0, near = 0;
  for (int i = 0; i < 200000; ++i) {
    const double threshold = i % 50 == 0 ? 0.0 : std::pow(10.0, -4 * u(rng));
    const double den = i % 97 == 0 ? 0.0 : std::pow(10.0, 12 * u(rng) - 6);
    double num = std::pow(10.0, 16 * u(rng) - 10);
    if (i % 2 == 0) {  // at the threshold, up to 64 ulps either side
      num = threshold * threshold * den;
      const int steps = int(128 * u(rng)) - 64;
      for (int s = 0; s < std::abs(steps); ++s)
        num = std::nextafter(num, steps > 0 ? INFINITY : 0.0);
      ++near;
    }
    ASSERT_EQ(evolve::lohner_exceeds(num, den, threshold), direct(num, den, threshold))
        << "num " << num << " den " << den << " threshold " << threshold;
    ++checked;
  }
  for (double num : {0.0, 1e-320, 1.0, 1e308, double(NAN), double(INFINITY)})
    for (double den : {0.0, 1e-320, 1.0, 1e308, double(NAN), double(INFINITY)})
      for (double threshold : {0.0, 1e-160, 0.5, 1e160})
        EXPECT_EQ(evolve::lohner_exceeds(num, den, threshold), direct(num, den, threshold))
            << "num " << num << " den " << den << " threshold " << threshold;
  EXPECT_EQ(checked, 200000);
  EXPECT_GT(near, 90000);
}

}  // namespace
}  // namespace tessera::mesh

namespace tessera::mesh {
namespace {

// A random properly nested hierarchy: a level-L patch is refined with probability
// `fraction` if all its neighbours exist on level L (so its children are nested).
Hierarchy random_hierarchy(const Geometry& geo, int max_level, double fraction, unsigned seed) {
  std::srand(seed);
  Mesh m(geo, plain_fields(1));
  for (int level = 0; level < max_level; ++level) {
    std::vector<PatchCoord> refined;
    for (int g : m.groups(level))
      for (int c = 0; c < kFamilySize; ++c) {
        if (std::rand() >= fraction * RAND_MAX) continue;
        const PatchCoord pc = m.patch(g + c).coord();
        bool nested = true;
        for (int n = 0; n < 27 && nested; ++n) {
          PatchCoord q = {pc[0] + n % 3 - 1, pc[1] + (n / 3) % 3 - 1, pc[2] + n / 9 - 1};
          nested = !m.wrap(level, q) || m.find_patch(level, q) != kNoPatch;
        }
        if (nested) refined.push_back(pc);
      }
    if (refined.empty()) break;
    Hierarchy h = m.hierarchy();
    h.push_back(refined);
    m = Mesh(geo, plain_fields(1), h);
  }
  return m.hierarchy();
}

// Every patch of `a` has its twin in `b` (same level and corner), with the same links by
// coordinate and the same data in the current time level.
void expect_same_mesh(const Mesh& a, const Mesh& b) {
  ASSERT_EQ(a.num_levels(), b.num_levels());
  ASSERT_EQ(a.num_patches(), b.num_patches());
  EXPECT_EQ(a.hierarchy(), b.hierarchy());
  auto coord_of = [](const Mesh& m, int p) {
    return p == kNoPatch ? std::array<int, 4>{-1, 0, 0, 0}
                         : std::array<int, 4>{m.patch(p).level, m.patch(p).corner[0],
                                              m.patch(p).corner[1], m.patch(p).corner[2]};
  };
  const auto oa = a.canonical_order(), ob = b.canonical_order();
  ASSERT_EQ(oa.size(), ob.size());
  int differing = 0;
  for (std::size_t i = 0; i < oa.size(); ++i) {
    const auto &pa = a.patch(oa[i]), &pb = b.patch(ob[i]);
    ASSERT_EQ(coord_of(a, oa[i]), coord_of(b, ob[i]));
    EXPECT_EQ(coord_of(a, pa.parent), coord_of(b, pb.parent));
    EXPECT_EQ(coord_of(a, pa.first_child), coord_of(b, pb.first_child));
    for (int n = 0; n < 27; ++n)
      EXPECT_EQ(coord_of(a, a.neighbour_patch(oa[i], n)), coord_of(b, b.neighbour_patch(ob[i], n)));
    if (std::memcmp(a.current(oa[i]), b.current(ob[i]), a.patch_reals() * sizeof(Real)) != 0)
      ++differing;
  }
  EXPECT_EQ(differing, 0) << "patches whose data differ";
}

using testing::rebuild;

// prolong_region (slopes once per coarse cell, as the prepare stage uses it) gives the
// values of prolong_cell bit for bit, for regions starting at even and odd fine cells.
TEST(Prolongation, RegionEqualsCellByCellBitForBit) {
  CoarseBox box;
  box.lo = {-3, 5, 10};
  box.n = 9;
  box.nvar = 2;
  box.data.resize(2 * 9 * 9 * 9);
  std::srand(7);
  for (auto& x : box.data) x = Real(1 + std::rand() / double(RAND_MAX));
  const std::array<int, 3> lo = {-3, 13, 21}, hi = {8, 24, 33};  // inside lo+1 .. lo+n-1
  const int n = 16;
  const std::array<int, 3> origin = {-4, 12, 20};
  std::vector<Real> out(2 * n * n * n, Real(-7));
  prolong_region(box, lo, hi, out.data(), n, origin);
  int differing = 0, written = 0;
  for (int v = 0; v < 2; ++v)
    for (int z = origin[2]; z < origin[2] + n; ++z)
      for (int y = origin[1]; y < origin[1] + n; ++y)
        for (int x = origin[0]; x < origin[0] + n; ++x) {
          const Real got =
              out[v * n * n * n + ((z - origin[2]) * n + (y - origin[1])) * n + (x - origin[0])];
          const bool inside =
              x >= lo[0] && x < hi[0] && y >= lo[1] && y < hi[1] && z >= lo[2] && z < hi[2];
          if (!inside) {
            EXPECT_EQ(got, Real(-7)) << "written outside the region";
            continue;
          }
          const Real want = prolong_cell(box, v, {x, y, z});
          differing += std::memcmp(&got, &want, sizeof(Real)) != 0;
          ++written;
        }
  EXPECT_EQ(written, 2 * 11 * 11 * 12);
  EXPECT_EQ(differing, 0);
}

class IncrementalRegrid : public ::testing::TestWithParam<Boundary> {};

// A sequence of random hierarchies applied in place gives, after each step, the mesh a
// from-scratch rebuild gives: the same patches, links and data; canonicalize() then gives
// the rebuilt pool order itself.
TEST_P(IncrementalRegrid, EqualsFromScratchRebuild) {
  const Geometry geo = box_geometry(GetParam(), 64);
  Mesh inc(geo, plain_fields(2));
  fill_level(inc, 0, smooth);
  Mesh ref = rebuild(inc, inc.hierarchy());
  int moved = 0, added = 0, removed = 0;
  for (unsigned step = 0; step < 12; ++step) {
    const Hierarchy h = random_hierarchy(geo, 3, step % 3 == 2 ? 0.02 : 0.08, 17 + step);
    const MeshChange change = inc.apply_hierarchy(h);
    inc.check_invariants();
    CoarseBox scratch;
    for (int level = 1; level < inc.num_levels(); ++level)
      for (int g : change.added[level]) prolong_family(inc, g, scratch);
    ref = rebuild(ref, h);
    expect_same_mesh(inc, ref);
    moved += change.moved_families, added += change.added_families;
    removed += change.removed_families;
    // Restrict, as the time step does, so that later removals lose nothing.
    for (int level = inc.num_levels() - 1; level >= 1; --level)
      for (int g : inc.groups(level))
        restrict_family(inc, g), restrict_family(ref, ref.find_patch(level, inc.patch(g).coord()));
  }
  EXPECT_GT(added, 0);
  EXPECT_GT(removed, 0);
  EXPECT_GT(moved, 0) << "no shrinking step: the hole filling went untested";
  inc.canonicalize();
  inc.check_invariants();
  ASSERT_TRUE(inc.is_canonical());
  for (int p = 0; p < inc.num_patches(); ++p) {
    ASSERT_EQ(inc.patch(p).corner, ref.patch(p).corner) << p;
    for (int n = 0; n < 27; ++n)
      ASSERT_EQ(inc.neighbour_patch(p, n), ref.neighbour_patch(p, n)) << p << " " << n;
    ASSERT_EQ(std::memcmp(inc.current(p), ref.current(p), inc.patch_reals() * sizeof(Real)), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Boundaries, IncrementalRegrid,
                         ::testing::Values(Boundary::kPeriodic, Boundary::kOutflow));

// The store of a rank (Mesh::make_sparse): each family anywhere in the pool, held and
// released one by one. Through random regrids (each new family held before its
// prolongation; one family released, the pool compacted, the family held again in reused
// room and its data put back) the mesh equals the from-scratch rebuild; a released
// family's data cannot be touched; after canonicalize() and make_dense() the pool is the
// rebuild's, byte for byte, at the same positions.
TEST(SparseStore, FollowsRegridsCompactionAndCanonicalOrder) {
  const Geometry geo = box_geometry(Boundary::kPeriodic, 64);
  Mesh inc(geo, plain_fields(2));
  fill_level(inc, 0, smooth);
  Mesh ref = rebuild(inc, inc.hierarchy());
  inc.make_sparse();
  std::mt19937 rng(11);
  int moved = 0;
  for (unsigned step = 0; step < 8; ++step) {
    const Hierarchy h = random_hierarchy(geo, 3, step % 3 == 2 ? 0.02 : 0.08, 17 + step);
    const MeshChange change = inc.apply_hierarchy(h);
    moved += change.moved_families;
    CoarseBox scratch;
    for (int level = 1; level < inc.num_levels(); ++level)
      for (int g : change.added[level]) {
        EXPECT_FALSE(inc.holds(g)) << "a new family of a sparse mesh is held";
        inc.hold(g);
        prolong_family(inc, g, scratch);
      }
    const auto& groups = inc.groups(rng() % inc.num_levels());
    const int f = groups[rng() % groups.size()];
    std::vector<Real> kept[2];
    for (int slot = 0; slot < 2; ++slot)
      kept[slot].assign(inc.data(slot, f), inc.data(slot, f) + kFamilySize * inc.patch_reals());
    const int held = inc.held_families();
    inc.release(f);
    EXPECT_FALSE(inc.holds(f + 3));
    EXPECT_EQ(inc.held_families(), held - 1);
    EXPECT_THROW(inc.current(f + 3), Error);
    inc.compact();
    inc.hold(f);
    for (int slot = 0; slot < 2; ++slot)
      std::copy(kept[slot].begin(), kept[slot].end(), inc.data(slot, f));
    ref = rebuild(ref, h);
    expect_same_mesh(inc, ref);
    for (int level = inc.num_levels() - 1; level >= 1; --level)
      for (int g : inc.groups(level))
        restrict_family(inc, g), restrict_family(ref, ref.find_patch(level, inc.patch(g).coord()));
  }
  EXPECT_GT(moved, 0) << "no shrinking step: the moves of a sparse mesh went untested";
  inc.canonicalize();
  EXPECT_TRUE(inc.sparse());
  expect_same_mesh(inc, ref);
  inc.make_dense();
  ASSERT_TRUE(inc.is_canonical());
  ASSERT_EQ(inc.num_patches(), ref.num_patches());
  EXPECT_EQ(std::memcmp(inc.current(0), ref.current(0),
                        std::size_t(inc.num_patches()) * inc.patch_reals() * sizeof(Real)),
            0);
}

// Applying the hierarchy the mesh already has changes nothing: no family is freed,
// allocated or moved, and every slot keeps its data.
TEST(IncrementalRegridNoChange, MovesNothing) {
  const Geometry geo = box_geometry(Boundary::kPeriodic, 64);
  Mesh m(geo, plain_fields(1), random_hierarchy(geo, 3, 0.08, 5));
  fill_level(m, 0, smooth);
  std::vector<PatchMeta> before;
  std::vector<int> links;
  for (int p = 0; p < m.num_patches(); ++p) {
    before.push_back(m.patch(p));
    for (int n = 0; n < 27; ++n) links.push_back(m.neighbour_patch(p, n));
  }
  const Real* data = m.current(0);
  const std::vector<Real> values(data, data + std::size_t(m.num_patches()) * m.patch_reals());
  const MeshChange change = m.apply_hierarchy(m.hierarchy());
  EXPECT_TRUE(change.empty());
  EXPECT_EQ(change.moved_families, 0);
  EXPECT_EQ(m.current(0), data) << "the pool was reallocated";
  for (int p = 0; p < m.num_patches(); ++p) {
    EXPECT_EQ(m.patch(p).corner, before[p].corner);
    for (int n = 0; n < 27; ++n) EXPECT_EQ(m.neighbour_patch(p, n), links[p * 27 + n]);
  }
  EXPECT_EQ(std::memcmp(m.current(0), values.data(), values.size() * sizeof(Real)), 0)
      << "the data changed";
}

}  // namespace
}  // namespace tessera::mesh
