// Passes other than hydro run through the same pipeline and schedule: a per-group
// iterative solver (Jacobi relaxation of a one-time-level field, the shape of the SOR
// solve of refined levels) and a level-wide pass (the shape of the root-level FFT solve).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/evolve/hydro_pass.hpp"
#include "tessera/exec/pipeline.hpp"
#include "tessera/physics/fields.hpp"
#include "tests/test_fields.hpp"

namespace tessera::evolve {
namespace {

constexpr int kPhi = 5;  // the field after the five hydro fields

mesh::FieldRegistry fields_with_phi() {
  auto f = physics::hydro_fields(true, 0).all();
  mesh::FieldInfo phi{"phi"};
  phi.time_levels = 1;
  phi.flux_corrected = false;
  f.push_back(phi);
  return mesh::FieldRegistry(f);
}

using mesh::testing::periodic_box;

// Smooth hydro state; phi rough, so that relaxation has work to do.
void fill(mesh::Mesh& m) {
  using P = kernels::HydroAdiabatic;
  for (int p = 0; p < m.num_patches(); ++p)
    for (int c = 0; c < mesh::kPatchCells; ++c) {
      const auto x = m.cell_center(p, c % 8, (c / 8) % 8, c / 64);
      const P::Vars w{{Real(1 + 0.3 * std::sin(4 * x[0])), Real(0.3), Real(-0.1), Real(0.2),
                       Real(1 + 0.2 * std::cos(3 * x[2]))}};
      const P::Vars u = P::prim_to_cons(w, {Real(1.4), Real(0), Real(0)});
      Real* d = m.current(p);
      for (int v = 0; v < 5; ++v) d[v * mesh::kPatchCells + c] = u[v];
      d[kPhi * mesh::kPatchCells + c] = Real(std::sin(7 * x[0] + 3 * x[1]) + std::cos(5 * x[2]));
    }
}

// Jacobi relaxation of Laplace's equation on a group's 16^3 interior, its one ghost layer
// held fixed, to a change below 1e-10 per sweep: an iterative per-group solve.
class JacobiSolver final : public exec::GroupSolver {
 public:
  exec::GroupShape shape() const override { return {1, 1, 1, 0}; }
  std::size_t host_scratch_reals() const override { return 2 * kernels::box_cells(1); }
  std::size_t device_scratch_reals() const override { return 0; }
  void solve_host(const Real* in, Real* out, Real*, kernels::GroupResult* result,
                  Real* scratch) const override {
    constexpr int n = kernels::box_size(1), n3 = kernels::box_cells(1);
    Real* a = scratch;
    Real* b = scratch + n3;
    std::copy(in, in + n3, a);
    std::copy(in, in + n3, b);
    int sweeps = 0;
    for (double change = 1; change > 1e-10 && sweeps < 100000; ++sweeps) {
      change = 0;
      for (int k = 1; k <= 16; ++k)
        for (int j = 1; j <= 16; ++j)
          for (int i = 1; i <= 16; ++i) {
            const int c = (k * n + j) * n + i;
            b[c] = (a[c - 1] + a[c + 1] + a[c - n] + a[c + n] + a[c - n * n] + a[c + n * n]) / 6;
            change = std::max(change, double(std::fabs(b[c] - a[c])));
          }
      std::swap(a, b);
    }
    for (int k = 0; k < 16; ++k)
      for (int j = 0; j < 16; ++j)
        for (int i = 0; i < 16; ++i)
          out[(k * 16 + j) * 16 + i] = a[((k + 1) * n + j + 1) * n + i + 1];
    *result = {Real(0), sweeps, -1, 0, 0, 0};  // the sweeps, reported as "floored" cells
  }
  void solve_device(const exec::DeviceBatch&, void*) const override {
    throw Error(ErrorKind::kInternal, "the test's Jacobi solver has no device code");
  }
};

class RelaxPhi final : public exec::GroupPass {
 public:
  std::string name() const override { return "relax phi"; }
  exec::FieldRange inputs() const override { return {kPhi, 1}; }
  exec::FieldRange outputs() const override { return outputs_; }
  bool refluxes() const override { return false; }
  const exec::GroupSolver& solver(const exec::LevelStep&) override { return solver_; }
  exec::FieldRange outputs_{kPhi, 1};

 private:
  JacobiSolver solver_;
};

// phi = density - its mean over the level, in place: a whole-level pass.
class DensityContrast final : public exec::LevelPass {
 public:
  std::string name() const override { return "density contrast"; }
  exec::PassStats run(const exec::LevelStep& s) override {
    double sum = 0;
    long long cells = 0;
    for (int g : s.mesh.groups(s.level))
      for (int c = 0; c < mesh::kFamilySize; ++c) {
        const Real* d = s.mesh.current(g + c);
        for (int i = 0; i < mesh::kPatchCells; ++i) sum += d[i], ++cells;
      }
    const double mean = sum / double(cells);
    for (int g : s.mesh.groups(s.level))
      for (int c = 0; c < mesh::kFamilySize; ++c) {
        Real* d = s.mesh.current(g + c);
        for (int i = 0; i < mesh::kPatchCells; ++i)
          d[kPhi * mesh::kPatchCells + i] = Real(d[i] - mean);
      }
    return {};
  }
};

// Value of field f at cell (x, y, z) of the level's index space (periodic).
Real at(const mesh::Mesh& m, int slot, int f, int x, int y, int z) {
  const auto cells = m.level_cells(0);
  x = (x + cells[0]) % cells[0], y = (y + cells[1]) % cells[1], z = (z + cells[2]) % cells[2];
  const int p = m.find_patch(0, {x / 8, y / 8, z / 8});
  return m.data(slot, p)[f * mesh::kPatchCells + ((z % 8) * 8 + y % 8) * 8 + x % 8];
}

TEST(Passes, IterativeGroupPassSolvesEachGroupFromItsNeighboursCurrentState) {
  mesh::Mesh m(periodic_box(), fields_with_phi());
  fill(m);
  const int slot = m.current_slot(0);
  const mesh::Mesh before = m;
  exec::FluxRegisters r;
  r.build(m);
  Timers timers;
  auto cpu = exec::make_cpu_executor();
  RelaxPhi pass;
  exec::Pipeline pipeline(*cpu, 2, JacobiSolver());  // 6 batches of 2 groups
  pass.set_pipeline(&pipeline);
  const exec::PassStats stats = pass.run({m, 0, 0.01, 1.0, 1, r, timers});
  EXPECT_GT(stats.floored, 12 * 100) << "every group iterates (sweeps reported as floored)";
  EXPECT_EQ(m.current_slot(0), slot) << "a one-level output does not swap the slots";
  // Hydro fields untouched; phi relaxed: in each group's interior the 7-point Laplacian
  // vanishes, with the values outside the group taken from the state before the pass (a
  // group prepared after another was closed must not see its new values).
  for (int p = 0; p < m.num_patches(); ++p)
    for (int f = 0; f < 5; ++f)
      for (int c = 0; c < mesh::kPatchCells; ++c)
        ASSERT_EQ(m.current(p)[f * mesh::kPatchCells + c],
                  before.current(p)[f * mesh::kPatchCells + c]);
  double worst = 0;
  const auto cells = m.level_cells(0);
  for (int z = 0; z < cells[2]; ++z)
    for (int y = 0; y < cells[1]; ++y)
      for (int x = 0; x < cells[0]; ++x) {
        auto value = [&](int i, int j, int k) {
          const bool same = (i + cells[0]) % cells[0] / 16 == x / 16 &&
                            (j + cells[1]) % cells[1] / 16 == y / 16 &&
                            (k + cells[2]) % cells[2] / 16 == z / 16;
          return double(at(same ? m : before, slot, kPhi, i, j, k));
        };
        const double lap = value(x - 1, y, z) + value(x + 1, y, z) + value(x, y - 1, z) +
                           value(x, y + 1, z) + value(x, y, z - 1) + value(x, y, z + 1) -
                           6 * value(x, y, z);
        worst = std::max(worst, std::fabs(lap));
      }
  EXPECT_LT(worst, 1e-7);
}

TEST(Passes, ScheduleOfHydroAndALevelPassSeesTheNewState) {
  mesh::Mesh m(periodic_box(), fields_with_phi());
  fill(m);
  exec::FluxRegisters r;
  r.build(m);
  Timers timers;
  auto cpu = exec::make_cpu_executor();
  kernels::MolParams params{};
  params.phys.adiabatic = {Real(1.4), Real(1e-10), Real(1e-12)};
  HydroPass hydro(kernels::Scheme{}, params);
  exec::Pipeline pipeline(*cpu, 0, hydro.mol());
  hydro.set_pipeline(&pipeline);
  DensityContrast contrast;
  const mesh::Mesh before = m;
  const int slot = m.current_slot(0);
  for (exec::Pass* pass : std::vector<exec::Pass*>{&hydro, &contrast})
    pass->run({m, 0, 0.1 / 32, 1.0, 1, r, timers});
  EXPECT_NE(m.current_slot(0), slot) << "the hydro pass's two-level outputs swap the slots";
  double sum = 0, changed = 0;
  long long cells = 0;
  for (int p = 0; p < m.num_patches(); ++p)
    for (int c = 0; c < mesh::kPatchCells; ++c) {
      sum += m.current(p)[c], ++cells;
      changed = std::max(changed, std::fabs(double(m.current(p)[c] - before.current(p)[c])));
    }
  EXPECT_GT(changed, 1e-4) << "the hydro pass advanced the density";
  const double mean = sum / double(cells);
  for (int p = 0; p < m.num_patches(); ++p)
    for (int c = 0; c < mesh::kPatchCells; ++c)
      ASSERT_EQ(m.current(p)[kPhi * mesh::kPatchCells + c], Real(m.current(p)[c] - mean));
}

TEST(Passes, FieldsThatDoNotMatchTheSolverAreAnInternalError) {
  mesh::Mesh m(periodic_box(), fields_with_phi());
  fill(m);
  exec::FluxRegisters r;
  r.build(m);
  Timers timers;
  auto cpu = exec::make_cpu_executor();
  RelaxPhi pass;
  pass.outputs_ = {kPhi, 2};  // two fields from a solver with one output, beyond the mesh
  exec::Pipeline pipeline(*cpu, 0, JacobiSolver());
  pass.set_pipeline(&pipeline);
  const mesh::Mesh before = m;
  try {
    pass.run({m, 0, 0.01, 1.0, 1, r, timers});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
    EXPECT_NE(std::string(e.what()).find("relax phi"), std::string::npos) << e.what();
  }
  for (int p = 0; p < m.num_patches(); ++p)
    for (std::size_t i = 0; i < m.patch_reals(); ++i)
      ASSERT_EQ(m.current(p)[i], before.current(p)[i]) << "nothing is touched";
}

}  // namespace
}  // namespace tessera::evolve
