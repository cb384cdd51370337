// The field registry (tessera/mesh/fields.hpp) read by its consumers: each test builds a
// registry whose fields differ in one declaration and checks that the mesh, prolongation,
// restriction, physical boundaries, flux registers, checkpoints and plot files treat each
// field as it declares, where the hydro registry (every field alike) could not tell.
//
// Mutations each test was seen to fail on: hydro_fields listing press twice in plot_order
// (HydroFields...); reflux adding into pool variable v instead of the flux field's
// (Reflux...); restriction ignoring `restricted` (Restriction...); prolong_region and,
// separately, prolong_cell ignoring the kind (Injection...); the reflecting wall flipping
// kMomX + dim (ReflectingWall...: the second vector's x component keeps its sign);
// swap_slots without the copy and, separately, gather_box interpolating every field
// (OneTimeLevel...); read_data without the name check (CheckpointKeeps...: the mismatch
// then surfaces as a shape error of kind kIo, naming no fields); field_names without the
// legacy list (CheckpointWithout...); make_plot_file in pool order and, separately, with
// the non-plotted field (PlotFile...).
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "kernels/group_layout.hpp"
#include "tessera/core/error.hpp"
#include "tessera/exec/flux_register.hpp"
#include "tessera/io/checkpoint.hpp"
#include "tessera/io/plot_output.hpp"
#include "tessera/mesh/boundary.hpp"
#include "tessera/mesh/fields.hpp"
#include "tessera/mesh/mesh.hpp"
#include "tessera/mesh/prolongation.hpp"
#include "tessera/physics/fields.hpp"

using tessera::physics::hydro_fields;
using tessera::physics::mhd_fields;

namespace tessera::mesh {
namespace {

namespace fs = std::filesystem;

Geometry box_geometry(int cells, Boundary bc) {
  Geometry g;
  g.xmin = {0, 0, 0};
  g.xmax = {1, 1, 1};
  g.root_cells = {cells, cells, cells};
  g.dx0 = 1.0 / cells;
  for (auto& b : g.boundary) b = {bc, bc};
  return g;
}

FieldInfo field(const std::string& name) {
  FieldInfo f;
  f.name = name;
  return f;
}

std::vector<std::string> names(const FieldRegistry& r) {
  std::vector<std::string> out;
  for (const auto& f : r.all()) out.push_back(f.name);
  return out;
}

// Sets variable v of every cell of a patch (slot `slot`) to f(v, cell centre).
template <class F>
void fill_patch(Mesh& m, int slot, int p, F&& f) {
  for (int v = 0; v < m.nvar(); ++v)
    for (int c = 0; c < kPatchCells; ++c)
      m.data(slot, p)[v * kPatchCells + c] =
          Real(f(v, m.cell_center(p, c % kPatchSize, (c / kPatchSize) % kPatchSize,
                                  c / (kPatchSize * kPatchSize))));
}

template <class F>
void fill_all(Mesh& m, int slot, F&& f) {
  for (int p = 0; p < m.num_patches(); ++p) fill_patch(m, slot, p, f);
}

// The current state of every patch of `level`.
template <class F>
void fill_level(Mesh& m, int level, F&& f) {
  for (int g : m.groups(level))
    for (int p = g; p < g + kFamilySize; ++p) fill_patch(m, m.current_slot(level), p, f);
}

TEST(FieldRegistry, HydroFieldsWithoutEnergyAndTwoScalars) {
  const FieldRegistry r = hydro_fields(false, 2);
  EXPECT_EQ(names(r), (std::vector<std::string>{"rho", "vel1", "vel2", "vel3", "r0", "r1"}));
  const std::vector<int> components = {-1, 0, 1, 2, -1, -1};
  for (int v = 0; v < r.size(); ++v) {
    EXPECT_EQ(r[v].vector_component, components[v]) << r[v].name;
    EXPECT_EQ(r[v].time_levels, 2);
    EXPECT_TRUE(r[v].flux_corrected && r[v].restricted && r[v].checkpointed && r[v].plotted);
    EXPECT_EQ(r[v].prolongation, Prolongation::kLimitedLinear);
  }
  EXPECT_EQ(r.plot_order(), (std::vector<int>{0, 1, 2, 3, 4, 5}));
  // With energy, plot files list rho, press, vel1..3 first, as Athena++ does.
  const FieldRegistry e = hydro_fields(true, 1);
  EXPECT_EQ(names(e), (std::vector<std::string>{"rho", "vel1", "vel2", "vel3", "press", "r0"}));
  EXPECT_EQ(e.plot_order(), (std::vector<int>{0, 4, 1, 2, 3, 5}));
}

// Reflux with a non-corrected field in front of a corrected one: the solver's planes hold
// only the corrected field, and the correction lands in its pool variable.
TEST(FieldRegistry, RefluxChangesOnlyFluxCorrectedFields) {
  std::vector<FieldInfo> f = {field("passive"), field("conserved")};
  f[0].flux_corrected = false;
  Mesh m(box_geometry(32, Boundary::kOutflow), FieldRegistry(f), {{{1, 2, 1}}});
  fill_all(m, m.current_slot(0), [](int v, auto) { return 1.0 + v; });
  exec::FluxRegisters registers;
  registers.build(m);
  // One flux field; the coarse and fine fluxes differ, so every registered face corrects.
  auto planes = [](double value) {
    return std::vector<Real>(std::size_t(kernels::kNumFluxPlanes) * kernels::kFaceCells,
                             Real(value));
  };
  for (int g : m.groups(0)) registers.close_group(m, g, planes(1.0).data(), 0.01);
  for (int g : m.groups(1)) registers.close_group(m, g, planes(3.0).data(), 0.01);
  registers.reflux(m, 0);
  int changed[2] = {0, 0};
  for (int g : m.groups(0))
    for (int p = g; p < g + kFamilySize; ++p)
      for (int v = 0; v < 2; ++v)
        for (int c = 0; c < kPatchCells; ++c)
          changed[v] += m.current(p)[v * kPatchCells + c] != Real(1 + v);
  EXPECT_EQ(changed[0], 0) << "the field that is not flux-corrected was refluxed";
  EXPECT_GT(changed[1], 0) << "the flux-corrected field was not refluxed";
}

TEST(FieldRegistry, RestrictionLeavesUnrestrictedFieldsOnTheParent) {
  std::vector<FieldInfo> f = {field("averaged"), field("kept")};
  f[1].restricted = false;
  Mesh m(box_geometry(32, Boundary::kPeriodic), FieldRegistry(f), {{{1, 2, 1}}});
  fill_level(m, 0, [](int v, auto) { return 10.0 + v; });
  fill_level(m, 1, [](int v, auto x) { return 1 + v + x[0] + 2 * x[1]; });
  const int first = m.groups(1).front();
  const int parent = m.patch(first).parent;
  restrict_family(m, first);
  int averaged = 0, kept = 0;
  for (int c = 0; c < kPatchCells; ++c) {
    averaged += m.current(parent)[c] != Real(10);
    kept += m.current(parent)[kPatchCells + c] == Real(11);
  }
  EXPECT_EQ(averaged, kPatchCells) << "the restricted field kept parent values";
  EXPECT_EQ(kept, kPatchCells) << "the unrestricted field was replaced";
  // The mismatch check skips the unrestricted field too (it differs from its children).
  EXPECT_LT(max_restriction_mismatch(m), 1e-15);
}

TEST(FieldRegistry, InjectionGivesChildrenTheParentValue) {
  std::vector<FieldInfo> f = {field("sloped"), field("injected")};
  f[1].prolongation = Prolongation::kInjection;
  Mesh m(box_geometry(32, Boundary::kPeriodic), FieldRegistry(f), {{{1, 2, 1}}});
  // A smooth field of both variables, unlimited slopes inside the parent.
  fill_level(m, 0, [](int, auto x) { return 2 + x[0] + 0.5 * x[1] * x[1]; });
  const int first = m.groups(1).front();
  const Real* up = m.current(m.patch(first).parent);
  CoarseBox scratch;
  prolong_family(m, first, scratch);
  int injected = 0, sloped = 0;
  for (int c = 0; c < kFamilySize; ++c) {
    const auto& child = m.patch(first + c);
    for (int q = 0; q < kPatchCells; ++q) {
      const int i = q % kPatchSize, j = (q / kPatchSize) % kPatchSize,
                k = q / kPatchSize / kPatchSize;
      // The parent cell over fine cell (i, j, k) of this child.
      const int pi = (child.corner[0] + i) / 2 % kPatchSize,
                pj = (child.corner[1] + j) / 2 % kPatchSize,
                pk = (child.corner[2] + k) / 2 % kPatchSize;
      const int pq = (pk * kPatchSize + pj) * kPatchSize + pi;
      injected += m.current(first + c)[kPatchCells + q] == up[kPatchCells + pq];
      sloped += m.current(first + c)[q] != up[pq];
    }
  }
  EXPECT_EQ(injected, kFamilySize * kPatchCells) << "injected children differ from the parent";
  EXPECT_EQ(sloped, kFamilySize * kPatchCells) << "limited-linear children lack their slopes";
  // prolong_cell follows the kind as well.
  gather_box(m, 0, {7, 15, 7}, 4, 1.0, scratch);
  EXPECT_EQ(prolong_cell(scratch, 1, {17, 33, 17}), scratch.at(1, 1, 1, 1));
  EXPECT_NE(prolong_cell(scratch, 0, {17, 33, 17}), scratch.at(0, 1, 1, 1));
}

// Fields: a scalar, a momentum-like vector, a second vector's x component, another scalar.
TEST(FieldRegistry, ReflectingWallFlipsOnlyTheNormalComponents) {
  std::vector<FieldInfo> f = {field("s"),  field("m1"), field("m2"),
                              field("m3"), field("b1"), field("t")};
  for (int d = 0; d < 3; ++d) f[1 + d].vector_component = d;
  f[4].vector_component = 0;
  Mesh m(box_geometry(16, Boundary::kReflecting), FieldRegistry(f));
  constexpr int g = 2, n = 2 * kPatchSize + 2 * g, n3 = n * n * n;
  auto value = [](int v, int x, int y, int z) {
    return Real(1 + v + 0.1 * x + 0.01 * y + 0.001 * z);
  };
  std::vector<Real> box(std::size_t(m.nvar()) * n3, Real(0));
  for (int v = 0; v < m.nvar(); ++v)
    for (int z = g; z < n - g; ++z)
      for (int y = g; y < n - g; ++y)
        for (int x = g; x < n - g; ++x) box[v * n3 + (z * n + y) * n + x] = value(v, x, y, z);
  apply_physical_boundaries(m, 0, {0, 0, 0}, g, box.data(), 0.0);
  // Ghost cells across the low x wall and across the low y wall (the others interior).
  const std::vector<int> flip_x = {0, 1, 0, 0, 1, 0}, flip_y = {0, 0, 1, 0, 0, 0};
  int wrong = 0;
  for (int v = 0; v < m.nvar(); ++v)
    for (int layer = 0; layer < g; ++layer)
      for (int a = g; a < n - g; ++a)
        for (int b = g; b < n - g; ++b) {
          const int ghost = g - 1 - layer, mirror = g + layer;
          const Real sx = flip_x[v] ? -1 : 1, sy = flip_y[v] ? -1 : 1;
          wrong += box[v * n3 + (b * n + a) * n + ghost] != sx * value(v, mirror, a, b);
          wrong += box[v * n3 + (b * n + ghost) * n + a] != sy * value(v, a, mirror, b);
        }
  EXPECT_EQ(wrong, 0);
}

TEST(FieldRegistry, OneTimeLevelCarriesAcrossStepsAndIsNotInterpolated) {
  std::vector<FieldInfo> f = {field("evolved"), field("in_place")};
  f[1].time_levels = 1;
  Mesh m(box_geometry(16, Boundary::kPeriodic), FieldRegistry(f));
  // Current state: 1 (evolved) and 7 (in place); what a step wrote to the next slot: 2 and 9.
  const int before = m.current_slot(0);
  fill_all(m, before, [](int v, auto) { return v ? 7.0 : 1.0; });
  fill_all(m, 1 - before, [](int v, auto) { return v ? 9.0 : 2.0; });
  m.swap_slots(0);
  ASSERT_NE(m.current_slot(0), before);
  int evolved = 0, carried = 0;
  for (int p = 0; p < m.num_patches(); ++p)
    for (int c = 0; c < kPatchCells; ++c) {
      evolved += m.current(p)[c] == Real(2);
      carried += m.current(p)[kPatchCells + c] == Real(7);
    }
  EXPECT_EQ(evolved, m.num_patches() * kPatchCells);
  EXPECT_EQ(carried, m.num_patches() * kPatchCells) << "the one-level field did not carry across";
  // Halfway between the previous and the current state: the evolved field interpolates
  // (1 and 2), the one-level field gives its current value whatever the weight.
  fill_all(m, m.next_slot(0), [](int v, auto) { return v ? 5.0 : 1.0; });
  CoarseBox box;
  for (const double w : {0.0, 0.5}) {
    gather_box(m, 0, {2, 3, 4}, 4, w, box);
    EXPECT_EQ(box.at(0, 1, 1, 1), Real(1 + w)) << "weight " << w;
    EXPECT_EQ(box.at(1, 1, 1, 1), Real(7)) << "weight " << w;
  }
}

class FieldRegistryFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessera_fields_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A two-level checkpoint of a mesh of `fields`, with distinct data in every variable.
  std::string write(const FieldRegistry& fields) {
    Mesh m(box_geometry(16, Boundary::kPeriodic), fields, {{{0, 0, 0}}});
    fill_all(m, 0, [](int v, auto x) { return 1 + v + x[0] * x[1] - x[2]; });
    io::CheckpointHeader h;
    h.code_version = "test";
    h.problem = "uniform";
    io::CheckpointState s;
    s.level_steps.assign(kMaxLevels, 0);
    s.level_max_speed.assign(m.num_levels(), 1.0);
    s.initial_totals.assign(fields.size(), 3.0);
    const std::string path = (dir_ / "run.chk.00000000.h5").string();
    io::write_checkpoint(path, m, h, s);
    return path;
  }

  fs::path dir_;
};

TEST_F(FieldRegistryFile, CheckpointKeepsFieldNamesAndRefusesOtherFields) {
  const FieldRegistry with_scalars = hydro_fields(true, 2);
  const std::string path = write(with_scalars);
  const io::CheckpointReader r(path);
  EXPECT_EQ(r.field_names(), names(with_scalars));
  EXPECT_EQ(r.state().initial_totals, std::vector<double>(7, 3.0));
  const auto m = r.read_mesh(box_geometry(16, Boundary::kPeriodic), with_scalars);
  EXPECT_EQ(m->nvar(), 7);
  EXPECT_EQ(m->current(0)[6 * kPatchCells], Real(7 + 1.0 / 32 / 32 - 1.0 / 32));
  try {
    r.read_mesh(box_geometry(16, Boundary::kPeriodic), hydro_fields(true, 0));
    FAIL() << "a checkpoint with passive scalars was read without them";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::kInput) << what;
    EXPECT_NE(what.find("(rho, vel1, vel2, vel3, press, r0, r1)"), std::string::npos) << what;
    EXPECT_NE(what.find("(rho, vel1, vel2, vel3, press)"), std::string::npos) << what;
  }
}

// Files written before /data carried FieldNames hold the 5 hydro fields.
TEST_F(FieldRegistryFile, CheckpointWithoutFieldNamesHoldsTheHydroFields) {
  const std::string path = write(hydro_fields(true, 0));
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  for (const char* name : {"FieldNames", "NumFields", "FieldCheckpointed"})
    EXPECT_GE(H5Adelete_by_name(file, "data", name, H5P_DEFAULT), 0) << name;
  H5Fclose(file);
  const io::CheckpointReader r(path);
  EXPECT_EQ(r.field_names(), names(hydro_fields(true, 0)));
  EXPECT_NO_THROW(r.read_mesh(box_geometry(16, Boundary::kPeriodic), hydro_fields(true, 0)));
  EXPECT_THROW(r.read_mesh(box_geometry(16, Boundary::kPeriodic), hydro_fields(true, 1)), Error);
}

TEST(FieldRegistry, PlotFileListsPlottedFieldsInPlotOrder) {
  std::vector<FieldInfo> f = {field("a"), field("hidden"), field("c")};
  f[1].plotted = false;
  Mesh m(box_geometry(16, Boundary::kPeriodic), FieldRegistry(f, {2, 1, 0}));
  fill_all(m, m.current_slot(0), [](int v, auto) { return 1.0 + v; });
  // The conversion doubles every value, so converted values are told from raw ones.
  const io::ToPrimitive twice = [](const Real* u, int stride, Real* w) {
    for (int v = 0; v < 3; ++v) w[v] = 2 * u[v * stride];
  };
  const io::PlotFile plot = io::make_plot_file(m, twice, 1.4, "uniform", 0, 0, "");
  EXPECT_EQ(plot.variables, (std::vector<std::string>{"c", "a"}));
  ASSERT_EQ(plot.values.size(), 2 * plot.blocks.size() * kPatchCells);
  const std::size_t per_var = plot.blocks.size() * kPatchCells;
  EXPECT_EQ(plot.values.front(), Real(6));   // c = 3, doubled
  EXPECT_EQ(plot.values[per_var], Real(2));  // a = 1, doubled
  EXPECT_EQ(plot.values.back(), Real(2));
}

}  // namespace
}  // namespace tessera::mesh
