// Unit tests of the level-0 patch mesh (tessera/mesh/mesh.hpp) and of the prepare/close
// stages that move a patch group between the mesh and the solver's box
// (tessera/exec/pipeline.hpp), including the physical boundary conditions.
#include "tessera/mesh/mesh.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "kernels/physics_adiabatic.hpp"
#include "tessera/core/error.hpp"
#include "tessera/exec/pipeline.hpp"
#include "tessera/physics/fields.hpp"

namespace tessera::mesh {
namespace {

using physics::hydro_fields;

constexpr int kNvar = kernels::HydroAdiabatic::kNumVars;

using Bcs = std::array<std::array<Boundary, 2>, 3>;

Bcs uniform_bcs(Boundary b) {
  return {{{b, b}, {b, b}, {b, b}}};
}

Geometry make_geometry(std::array<int, 3> cells, const Bcs& bcs) {
  Geometry g;
  g.dx0 = 0.125;
  for (int d = 0; d < 3; ++d) {
    g.xmin[d] = -1.0;
    g.xmax[d] = g.xmin[d] + cells[d] * g.dx0;
  }
  g.root_cells = cells;
  g.boundary = bcs;
  return g;
}

std::string describe(const Geometry& g) {
  std::string s = std::to_string(g.root_cells[0]) + "x" + std::to_string(g.root_cells[1]) + "x" +
                  std::to_string(g.root_cells[2]);
  for (int d = 0; d < 3; ++d)
    s += std::string(" ") + boundary_name(g.boundary[d][0]) + "/" + boundary_name(g.boundary[d][1]);
  return s;
}

std::array<int, 3> patch_coord(const PatchMeta& m) {
  return {m.corner[0] / kPatchSize, m.corner[1] / kPatchSize, m.corner[2] / kPatchSize};
}

// The geometries most tests run on: a non-cubic domain whose dimensions hold 2, 1 and 3
// patch groups (a single group along y makes the periodic images of a group itself).
std::vector<Geometry> test_geometries() {
  const Bcs mixed = {{{Boundary::kPeriodic, Boundary::kPeriodic},
                      {Boundary::kOutflow, Boundary::kReflecting},
                      {Boundary::kReflecting, Boundary::kOutflow}}};
  std::vector<Geometry> v;
  for (std::array<int, 3> cells : {std::array<int, 3>{32, 16, 48}, std::array<int, 3>{16, 16, 16},
                                   std::array<int, 3>{64, 32, 16}}) {
    v.push_back(make_geometry(cells, uniform_bcs(Boundary::kPeriodic)));
    v.push_back(make_geometry(cells, uniform_bcs(Boundary::kOutflow)));
    v.push_back(make_geometry(cells, mixed));
  }
  return v;
}

TEST(Mesh, Level0HasOnePatchPer8CubedCellsInFamiliesOf8) {
  for (const Geometry& g : test_geometries()) {
    const Mesh mesh(g, hydro_fields(true, 0));
    const auto& c = g.root_cells;
    const int patches = (c[0] / 8) * (c[1] / 8) * (c[2] / 8);
    EXPECT_EQ(mesh.num_levels(), 1) << describe(g);
    EXPECT_EQ(mesh.num_patches(), patches) << describe(g);
    EXPECT_EQ(static_cast<int>(mesh.groups(0).size()), patches / kFamilySize) << describe(g);
    EXPECT_EQ(mesh.num_leaf_cells(), g.root_cell_count()) << describe(g);
    EXPECT_EQ(mesh.level_cells(0), c) << describe(g);
    EXPECT_EQ(mesh.nvar(), kNvar);
    EXPECT_EQ(mesh.patch_reals(), std::size_t(kNvar) * kPatchCells);
  }
}

TEST(Mesh, FamiliesAreContiguousWithChildOrderXPlus2YPlus4Z) {
  for (const Geometry& g : test_geometries()) {
    const Mesh mesh(g, hydro_fields(true, 0));
    for (int first : mesh.groups(0)) {
      ASSERT_EQ(first % kFamilySize, 0) << describe(g);
      const auto corner = mesh.patch(first).corner;
      for (int d = 0; d < 3; ++d) EXPECT_EQ(corner[d] % (2 * kPatchSize), 0) << describe(g);
      for (int c = 0; c < kFamilySize; ++c) {
        const PatchMeta& m = mesh.patch(first + c);
        EXPECT_EQ(m.level, 0);
        EXPECT_EQ(m.parent, kNoPatch);
        EXPECT_TRUE(m.is_leaf());
        const int off[3] = {c & 1, (c >> 1) & 1, (c >> 2) & 1};
        for (int d = 0; d < 3; ++d)
          EXPECT_EQ(m.corner[d], corner[d] + off[d] * kPatchSize)
              << describe(g) << " group " << first << " child " << c;
      }
    }
  }
}

TEST(Mesh, GroupsCoverTheDomainExactlyOnceInMortonOrder) {
  for (const Geometry& g : test_geometries()) {
    const Mesh mesh(g, hydro_fields(true, 0));
    const auto& groups = mesh.groups(0);
    EXPECT_EQ(std::set<int>(groups.begin(), groups.end()).size(), groups.size()) << describe(g);
    // Every cell of the domain belongs to exactly one patch.
    const auto& c = g.root_cells;
    std::vector<int> hits(std::size_t(c[0]) * c[1] * c[2], 0);
    for (int p = 0; p < mesh.num_patches(); ++p) {
      const auto& m = mesh.patch(p);
      for (int k = 0; k < kPatchSize; ++k)
        for (int j = 0; j < kPatchSize; ++j)
          for (int i = 0; i < kPatchSize; ++i) {
            const int x = m.corner[0] + i, y = m.corner[1] + j, z = m.corner[2] + k;
            ASSERT_TRUE(x < c[0] && y < c[1] && z < c[2]) << describe(g);
            ++hits[(std::size_t(z) * c[1] + y) * c[0] + x];
          }
    }
    EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), std::ptrdiff_t(hits.size())) << describe(g);
    // Group corners (in group units) follow the Morton (bit-interleaved z,y,x) curve.
    auto morton = [](std::array<int, 3> gc) {
      std::uint64_t key = 0;
      for (int b = 0; b < 21; ++b)
        for (int d = 0; d < 3; ++d) key |= std::uint64_t((gc[d] >> b) & 1) << (3 * b + d);
      return key;
    };
    for (std::size_t n = 1; n < groups.size(); ++n) {
      std::array<int, 3> a{}, b{};
      for (int d = 0; d < 3; ++d) {
        a[d] = mesh.patch(groups[n - 1]).corner[d] / (2 * kPatchSize);
        b[d] = mesh.patch(groups[n]).corner[d] / (2 * kPatchSize);
      }
      EXPECT_LT(morton(a), morton(b)) << describe(g) << " group " << n;
    }
  }
}

TEST(Mesh, FindPatchFindsEveryPatchAtItsCoordinateAndWrapsPeriodicImages) {
  for (const Geometry& g : test_geometries()) {
    const Mesh mesh(g, hydro_fields(true, 0));
    const auto& c = g.root_cells;
    const int np[3] = {c[0] / kPatchSize, c[1] / kPatchSize, c[2] / kPatchSize};
    for (int p = 0; p < mesh.num_patches(); ++p) {
      const auto pc = patch_coord(mesh.patch(p));
      EXPECT_EQ(mesh.find_patch(0, pc), p) << describe(g);
      for (int d = 0; d < 3; ++d)
        for (int shift : {-1, 1}) {
          auto image = pc;
          image[d] += shift * np[d];
          EXPECT_EQ(mesh.find_patch(0, image), g.periodic(d) ? p : kNoPatch)
              << describe(g) << " patch " << p << " dim " << d;
        }
    }
    // Level 1 has no patches yet.
    EXPECT_EQ(mesh.find_patch(1, {0, 0, 0}), kNoPatch);
  }
}

TEST(Mesh, NeighbourLinksPointAtAdjacentPatchesAndAreSymmetric) {
  for (const Geometry& g : test_geometries()) {
    const Mesh mesh(g, hydro_fields(true, 0));
    const auto& c = g.root_cells;
    const int np[3] = {c[0] / kPatchSize, c[1] / kPatchSize, c[2] / kPatchSize};
    for (int p = 0; p < mesh.num_patches(); ++p) {
      const auto& m = mesh.patch(p);
      const auto pc = patch_coord(m);
      EXPECT_EQ(mesh.neighbour_patch(p, neighbour_index(0, 0, 0)), p);
      for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            const int off[3] = {dx, dy, dz};
            // Where the neighbour must be: wrapped across periodic boundaries, absent
            // across the others.
            bool outside = false;
            std::array<int, 3> expect{};
            for (int d = 0; d < 3; ++d) {
              int q = pc[d] + off[d];
              if (q < 0 || q >= np[d]) {
                if (!g.periodic(d)) outside = true;
                q = (q + np[d]) % np[d];
              }
              expect[d] = q;
            }
            const int q = mesh.neighbour_patch(p, neighbour_index(dx, dy, dz));
            const std::string where = describe(g) + " patch " + std::to_string(p) + " offset " +
                                      std::to_string(dx) + "," + std::to_string(dy) + "," +
                                      std::to_string(dz);
            if (outside) {
              EXPECT_EQ(q, kNoPatch) << where;
              continue;
            }
            ASSERT_NE(q, kNoPatch) << where;
            EXPECT_EQ(patch_coord(mesh.patch(q)), expect) << where;
            // Symmetry: p is q's neighbour in the opposite direction.
            EXPECT_EQ(mesh.neighbour_patch(q, neighbour_index(-dx, -dy, -dz)), p) << where;
          }
    }
  }
}

TEST(Mesh, PeriodicLinksWrapAcrossTheDomain) {
  const Geometry g = make_geometry({32, 16, 48}, uniform_bcs(Boundary::kPeriodic));
  const Mesh mesh(g, hydro_fields(true, 0));
  const int lo = mesh.find_patch(0, {0, 1, 0});
  const int hi_x = mesh.find_patch(0, {3, 1, 0});
  const int hi_z = mesh.find_patch(0, {0, 1, 5});
  EXPECT_EQ(mesh.neighbour_patch(lo, neighbour_index(-1, 0, 0)), hi_x);
  EXPECT_EQ(mesh.neighbour_patch(hi_x, neighbour_index(1, 0, 0)), lo);
  EXPECT_EQ(mesh.neighbour_patch(lo, neighbour_index(0, 0, -1)), hi_z);
  // Two patches along y: both y neighbours are the other patch.
  const int other_y = mesh.find_patch(0, {0, 0, 0});
  EXPECT_EQ(mesh.neighbour_patch(lo, neighbour_index(0, 1, 0)), other_y);
  EXPECT_EQ(mesh.neighbour_patch(lo, neighbour_index(0, -1, 0)), other_y);
  // The corner wraps in all three dimensions at once.
  EXPECT_EQ(mesh.neighbour_patch(mesh.find_patch(0, {0, 0, 0}), neighbour_index(-1, -1, -1)),
            mesh.find_patch(0, {3, 1, 5}));
}

TEST(Mesh, NonPeriodicBoundariesHaveNoNeighbours) {
  const Geometry g = make_geometry({32, 16, 48}, uniform_bcs(Boundary::kOutflow));
  const Mesh mesh(g, hydro_fields(true, 0));
  const int corner = mesh.find_patch(0, {0, 0, 0});
  EXPECT_EQ(mesh.neighbour_patch(corner, neighbour_index(-1, 0, 0)), kNoPatch);
  EXPECT_EQ(mesh.neighbour_patch(corner, neighbour_index(0, -1, 0)), kNoPatch);
  EXPECT_EQ(mesh.neighbour_patch(corner, neighbour_index(1, 1, -1)), kNoPatch);
  EXPECT_EQ(mesh.neighbour_patch(corner, neighbour_index(1, 1, 1)), mesh.find_patch(0, {1, 1, 1}));
  EXPECT_EQ(mesh.find_patch(0, {4, 0, 0}), kNoPatch);
  EXPECT_EQ(mesh.find_patch(0, {-1, 0, 0}), kNoPatch);
}

TEST(Mesh, CellsThatAreNotMultiplesOf16AreRejected) {
  for (std::array<int, 3> cells : {std::array<int, 3>{24, 16, 16}, std::array<int, 3>{16, 8, 16},
                                   std::array<int, 3>{16, 16, 0}}) {
    try {
      Mesh mesh(make_geometry(cells, uniform_bcs(Boundary::kPeriodic)), hydro_fields(true, 0));
      ADD_FAILURE() << "accepted " << cells[0] << "x" << cells[1] << "x" << cells[2];
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInput);
    }
  }
}

// Patch indices are ints and the root takes at most half their range: a root of 2^30
// patches is refused before anything is allocated for it; one just below is built.
TEST(Mesh, RootGridsBeyondThePatchIndexRangeAreRejected) {
  try {
    Forest forest(make_geometry({8192, 8192, 8192}, uniform_bcs(Boundary::kPeriodic)));
    ADD_FAILURE() << "accepted a root of 2^30 patches";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find("mesh.nx"), std::string::npos) << e.what();
  }
  const Forest forest(make_geometry({4096, 16, 16}, uniform_bcs(Boundary::kOutflow)));
  EXPECT_EQ(forest.root_patches(), 512 * 2 * 2);
}

TEST(Mesh, CellCentresFollowTheCornerAndCellWidth) {
  const Geometry g = make_geometry({32, 16, 48}, uniform_bcs(Boundary::kPeriodic));
  const Mesh mesh(g, hydro_fields(true, 0));
  const int p = mesh.find_patch(0, {2, 1, 3});
  const auto x = mesh.cell_center(p, 1, 2, 7);
  EXPECT_DOUBLE_EQ(x[0], -1.0 + (16 + 1 + 0.5) * 0.125);
  EXPECT_DOUBLE_EQ(x[1], -1.0 + (8 + 2 + 0.5) * 0.125);
  EXPECT_DOUBLE_EQ(x[2], -1.0 + (24 + 7 + 0.5) * 0.125);
}

// --- prepare_group / close_group -------------------------------------------------------

constexpr int kGhost = 4;
constexpr int kBox = 2 * kPatchSize + 2 * kGhost;
constexpr std::size_t kBox3 = std::size_t(kBox) * kBox * kBox;

// A value per variable and global cell that identifies both: f = i + 1000 j + 1e6 k,
// offset by 1e8 per variable (exact in double precision).
Real cell_value(int var, int i, int j, int k) {
  return Real(i) + 1000.0 * j + 1e6 * k + 1e8 * (var + 1);
}

void fill_mesh(Mesh& mesh, int slot) {
  for (int p = 0; p < mesh.num_patches(); ++p) {
    const auto& m = mesh.patch(p);
    Real* data = mesh.data(slot, p);
    for (int v = 0; v < mesh.nvar(); ++v)
      for (int k = 0; k < kPatchSize; ++k)
        for (int j = 0; j < kPatchSize; ++j)
          for (int i = 0; i < kPatchSize; ++i)
            data[v * kPatchCells + (k * kPatchSize + j) * kPatchSize + i] =
                cell_value(v, m.corner[0] + i, m.corner[1] + j, m.corner[2] + k);
  }
}

// Expected content of a ghost or interior cell at global index g along a dimension with
// n cells: returns the source index and whether it is a mirror image.
int source_index(int g, int n, const std::array<Boundary, 2>& bc, bool* mirrored) {
  if (g >= 0 && g < n) return g;
  const Boundary b = g < 0 ? bc[0] : bc[1];
  switch (b) {
    case Boundary::kPeriodic:
      return (g % n + n) % n;
    case Boundary::kOutflow:
      return g < 0 ? 0 : n - 1;
    case Boundary::kReflecting:
      *mirrored = true;
      return g < 0 ? -1 - g : 2 * n - 1 - g;
    case Boundary::kProblem:  // problem-defined sides have their own test
      break;
  }
  return -1;
}

Real expected_box_value(const Geometry& geo, std::array<int, 3> corner, int var, int x, int y,
                        int z) {
  const int b[3] = {x, y, z};
  int src[3];
  Real sign = 1;
  for (int d = 0; d < 3; ++d) {
    bool mirrored = false;
    src[d] = source_index(corner[d] + b[d] - kGhost, geo.root_cells[d], geo.boundary[d], &mirrored);
    if (mirrored && var == kernels::HydroAdiabatic::kMomX + d) sign = -sign;
  }
  return sign * cell_value(var, src[0], src[1], src[2]);
}

// Prepares every root group of `mesh` (current slot, at `time`) into a NaN-filled box, so a
// cell that prepare_group leaves unfilled fails too, and compares each box cell (x, y, z)
// of variable v with want(corner, v, x, y, z).
template <class Want>
void expect_prepared_boxes(const Mesh& mesh, const std::string& what, double time, Want&& want) {
  std::vector<Real> box(kNvar * kBox3);
  for (int first : mesh.groups(0)) {
    std::fill(box.begin(), box.end(), std::numeric_limits<Real>::quiet_NaN());
    exec::prepare_group(mesh, mesh.current_slot(0), first, kGhost, box.data(), 1.0, {}, time);
    const auto corner = mesh.patch(first).corner;
    int mismatches = 0;
    for (int v = 0; v < kNvar; ++v)
      for (int z = 0; z < kBox; ++z)
        for (int y = 0; y < kBox; ++y)
          for (int x = 0; x < kBox; ++x) {
            const Real got = box[v * kBox3 + (std::size_t(z) * kBox + y) * kBox + x];
            const Real expected = want(corner, v, x, y, z);
            if (!(got == expected) && ++mismatches <= 5) {
              ADD_FAILURE() << what << " group at (" << corner[0] << "," << corner[1] << ","
                            << corner[2] << ") box cell (" << x << "," << y << "," << z << ") var "
                            << v << ": got " << got << ", want " << expected;
            }
          }
    EXPECT_EQ(mismatches, 0) << what << " group " << first;
  }
}

void expect_prepared_groups_match(const Geometry& g) {
  Mesh mesh(g, hydro_fields(true, 0));
  fill_mesh(mesh, mesh.current_slot(0));
  expect_prepared_boxes(mesh, describe(g), 0.0,
                        [&g](std::array<int, 3> corner, int v, int x, int y, int z) {
                          return expected_box_value(g, corner, v, x, y, z);
                        });
}

TEST(PrepareGroup, PeriodicBoxHoldsWrappedNeighbourData) {
  expect_prepared_groups_match(make_geometry({32, 16, 48}, uniform_bcs(Boundary::kPeriodic)));
  expect_prepared_groups_match(make_geometry({16, 16, 16}, uniform_bcs(Boundary::kPeriodic)));
}

TEST(PrepareGroup, OutflowGhostsCopyTheNearestInteriorCell) {
  expect_prepared_groups_match(make_geometry({32, 16, 48}, uniform_bcs(Boundary::kOutflow)));
}

TEST(PrepareGroup, ReflectingGhostsMirrorWithNormalMomentumNegated) {
  expect_prepared_groups_match(make_geometry({32, 16, 48}, uniform_bcs(Boundary::kReflecting)));
}

TEST(PrepareGroup, MixedBoundariesFillEdgesAndCorners) {
  // Each dimension its own kind, different on the two sides: edge and corner ghosts
  // combine a periodic image with outflow copies and reflections.
  const Bcs mixed = {{{Boundary::kPeriodic, Boundary::kPeriodic},
                      {Boundary::kOutflow, Boundary::kReflecting},
                      {Boundary::kReflecting, Boundary::kOutflow}}};
  expect_prepared_groups_match(make_geometry({32, 16, 48}, mixed));
  const Bcs mixed2 = {{{Boundary::kReflecting, Boundary::kOutflow},
                       {Boundary::kPeriodic, Boundary::kPeriodic},
                       {Boundary::kOutflow, Boundary::kReflecting}}};
  expect_prepared_groups_match(make_geometry({64, 32, 16}, mixed2));
}

// A problem-defined lower x side: an inflow state that encodes the ghost cell's position
// and the time over the lower half in y, a wall above it; the last field is not the
// problem's (outflow copy). y has a wall below and outflow above, so the corner ghosts are
// the wall's mirror images of the problem's cells (the y sweep follows the x sweep).
TEST(PrepareGroup, ProblemDefinedSideTakesTheProblemsStatesCellByCell) {
  const Bcs bcs = {{{Boundary::kProblem, Boundary::kOutflow},
                    {Boundary::kReflecting, Boundary::kOutflow},
                    {Boundary::kPeriodic, Boundary::kPeriodic}}};
  const Geometry g = make_geometry({32, 32, 16}, bcs);
  Mesh mesh(g, hydro_fields(true, 0));
  fill_mesh(mesh, mesh.current_slot(0));
  constexpr double kTime = 3.0;
  constexpr int kOwn = kNvar - 1;  // fields the problem sets
  const auto index = [&g](double x, int d) {
    return static_cast<int>(std::lround((x - g.xmin[d]) / g.dx0));
  };
  const auto state_value = [](int v, int i, int j, int k, double t) {
    return -cell_value(v, i, j, k) - Real(t);
  };
  std::atomic<long> calls{0};
  mesh.set_problem_boundary(
      {kOwn, [&](const std::array<double, 3>& lo, const std::array<double, 3>& hi, double t,
                 int dim, int side, Real* u) {
         ++calls;
         EXPECT_EQ(dim, 0);
         EXPECT_EQ(side, 0);
         EXPECT_NEAR(hi[0] - lo[0], g.dx0, 1e-12);
         const int i = index(lo[0], 0), j = index(lo[1], 1), k = index(lo[2], 2);
         if (j >= 16) return GhostFill::kReflecting;
         for (int v = 0; v < kOwn; ++v) u[v] = state_value(v, i, j, k, t);
         return GhostFill::kState;
       }});
  expect_prepared_boxes(
      mesh, "problem-defined side", kTime,
      [&](std::array<int, 3> corner, int v, int x, int y, int z) {
        const int gi[3] = {corner[0] + x - kGhost, corner[1] + y - kGhost, corner[2] + z - kGhost};
        // y and z as usual, then x: the problem's side.
        int src[3];
        Real sign = 1;
        for (int d = 1; d < 3; ++d) {
          bool mirrored = false;
          src[d] = source_index(gi[d], g.root_cells[d], g.boundary[d], &mirrored);
          if (mirrored && v == kernels::HydroAdiabatic::kMomX + d) sign = -sign;
        }
        if (gi[0] >= 0)
          return sign * cell_value(v, std::min(gi[0], g.root_cells[0] - 1), src[1], src[2]);
        if (src[1] >= 16) {  // the wall
          const Real flip = v == kernels::HydroAdiabatic::kMomX ? -1 : 1;
          return flip * sign * cell_value(v, -1 - gi[0], src[1], src[2]);
        }
        return v < kOwn ? sign * state_value(v, gi[0], src[1], src[2], kTime)
                        : sign * cell_value(v, 0, src[1], src[2]);
      });
  EXPECT_GT(calls.load(), 0);
}

TEST(PrepareGroup, ReadsTheRequestedTimeLevel) {
  const Geometry g = make_geometry({32, 16, 16}, uniform_bcs(Boundary::kPeriodic));
  Mesh mesh(g, hydro_fields(true, 0));
  fill_mesh(mesh, mesh.next_slot(0));  // current slot stays zero
  std::vector<Real> box(kNvar * kBox3, -1);
  exec::prepare_group(mesh, mesh.next_slot(0), mesh.groups(0)[0], kGhost, box.data());
  EXPECT_EQ(box[(std::size_t(kGhost) * kBox + kGhost) * kBox + kGhost], cell_value(0, 0, 0, 0));
  exec::prepare_group(mesh, mesh.current_slot(0), mesh.groups(0)[0], kGhost, box.data());
  EXPECT_EQ(box[(std::size_t(kGhost) * kBox + kGhost) * kBox + kGhost], 0);
}

TEST(CloseGroup, WritesTheInteriorBackToTheFamilysPatches) {
  const Geometry g = make_geometry({32, 16, 48}, uniform_bcs(Boundary::kOutflow));
  Mesh mesh(g, hydro_fields(true, 0));
  constexpr int n = 2 * kPatchSize;
  const int slot = mesh.next_slot(0);
  std::vector<Real> interior(std::size_t(kNvar) * n * n * n);
  for (int first : mesh.groups(0)) {
    const auto corner = mesh.patch(first).corner;
    for (int v = 0; v < kNvar; ++v)
      for (int z = 0; z < n; ++z)
        for (int y = 0; y < n; ++y)
          for (int x = 0; x < n; ++x)
            interior[((std::size_t(v) * n + z) * n + y) * n + x] =
                cell_value(v, corner[0] + x, corner[1] + y, corner[2] + z);
    exec::close_group(mesh, slot, first, interior.data());
  }
  // Every patch of the slot now holds the function at its own cells...
  for (int p = 0; p < mesh.num_patches(); ++p) {
    const auto& m = mesh.patch(p);
    const Real* data = mesh.data(slot, p);
    int mismatches = 0;
    for (int v = 0; v < kNvar; ++v)
      for (int k = 0; k < kPatchSize; ++k)
        for (int j = 0; j < kPatchSize; ++j)
          for (int i = 0; i < kPatchSize; ++i) {
            const Real got = data[v * kPatchCells + (k * kPatchSize + j) * kPatchSize + i];
            const Real want = cell_value(v, m.corner[0] + i, m.corner[1] + j, m.corner[2] + k);
            if (got != want && ++mismatches <= 3) {
              ADD_FAILURE() << "patch " << p << " cell (" << i << "," << j << "," << k << ") var "
                            << v << ": got " << got << ", want " << want;
            }
          }
    EXPECT_EQ(mismatches, 0) << "patch " << p;
    // ...and the other time level is untouched.
    const Real* other = mesh.data(mesh.current_slot(0), p);
    EXPECT_TRUE(std::all_of(other, other + mesh.patch_reals(), [](Real x) { return x == 0; }))
        << "patch " << p;
  }
}

TEST(CloseGroup, PrepareOfClosedDataReturnsTheInterior) {
  const Geometry g = make_geometry({32, 16, 48}, uniform_bcs(Boundary::kPeriodic));
  Mesh mesh(g, hydro_fields(true, 0));
  constexpr int n = 2 * kPatchSize;
  std::vector<Real> interior(std::size_t(kNvar) * n * n * n);
  for (std::size_t q = 0; q < interior.size(); ++q) interior[q] = Real(q) * 0.5 + 3;
  const int first = mesh.groups(0)[3];
  exec::close_group(mesh, mesh.current_slot(0), first, interior.data());
  std::vector<Real> box(kNvar * kBox3);
  exec::prepare_group(mesh, mesh.current_slot(0), first, kGhost, box.data());
  for (int v = 0; v < kNvar; ++v)
    for (int z = 0; z < n; ++z)
      for (int y = 0; y < n; ++y)
        for (int x = 0; x < n; ++x)
          ASSERT_EQ(
              box[v * kBox3 + (std::size_t(z + kGhost) * kBox + y + kGhost) * kBox + x + kGhost],
              interior[((std::size_t(v) * n + z) * n + y) * n + x])
              << "cell (" << x << "," << y << "," << z << ") var " << v;
}

}  // namespace
}  // namespace tessera::mesh
