// The gather kernel of a device-resident batch (src/exec/cuda_executor.cu, gather_kernel)
// against its host twin, exec::gather_group_host (itself equal to prepare_group bit for bit:
// tests/unit/test_resident_gather.cpp), on the levels of 3-level nested meshes: the
// input boxes a batch builds on the device from the device pool are fetched back
// (Executor::fetch_resident) and compared bit for bit, every field of every box cell of every
// group. The boxes' coarse-fine ghost cells are prolonged from the parent level at a time
// weight between its two time levels, at either end, with the admissibility fallback
// (injection) on data of random signs; the sides mix periodic, outflow and reflecting
// boundaries (MHD: the B components flip at reflecting walls too), and problem-defined ones
// (their states from DeviceMesh::problem_ghosts). The fields of a run's Model (hydro with a
// scalar, and MHD) are gathered whole and a sub-range; level 1 is current in the other time
// level than its parent and its child, so that a kernel reading the wrong slot differs. Each
// batch's device input boxes are filled with a poison value before it (by a staged submit),
// so that a box cell the gather leaves unwritten differs too. Each test prints how much it
// compared.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../nested_mesh.hpp"
#include "kernels/group_layout.hpp"
#include "kernels/resident_gather.hpp"
#include "tessera/core/error.hpp"
#include "tessera/evolve/schema.hpp"
#include "tessera/exec/executor.hpp"
#include "tessera/exec/resident.hpp"
#include "tessera/mesh/mesh.hpp"
#include "tessera/physics/model.hpp"

namespace tessera {
namespace {

using mesh::Boundary;
constexpr Boundary P = Boundary::kPeriodic, O = Boundary::kOutflow, R = Boundary::kReflecting;
constexpr int kCells = mesh::kPatchCells;

// The equations of a run: adiabatic hydro (gamma 5/3) with a passive scalar, or GLM-MHD with
// one; their fields carry the admissibility check that makes prolongation inject.
physics::Model model_of(bool mhd) {
  const std::string file =
      std::string(TESSERA_SOURCE_DIR) +
      (mhd ? "/problems/mhd_blast/mhd_blast.toml" : "/problems/blob/blob.toml");
  return physics::Model(load_run_params(file, {"output.enabled=false", "hydro.passive_scalars=1"}));
}

const char* physics_name(bool mhd) {
  return mhd ? "MHD" : "hydro";
}

// Cells 48 x 48 x 32 on [0, 1] x [0, 1] x [0, 2/3], refined twice around `centre`.
mesh::Mesh make_mesh(const physics::Model& model, std::vector<std::array<Boundary, 2>> sides,
                     std::array<double, 3> centre) {
  mesh::testing::NestedSpec s;
  s.cells = {48, 48, 32};
  s.sides = std::move(sides);
  s.centre = centre;
  s.radii = {0.3, 0.17};
  return mesh::testing::nested_mesh(s, model.fields());
}

// Both time levels of every patch: positive states with a large energy (field 4; limited
// slopes hold), or random signs (most coarse cells inject: the admissibility fallback).
void fill_random(mesh::Mesh& m, unsigned seed, bool positive) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(positive ? 0.5 : -1, positive ? 1.5 : 1);
  for (int slot = 0; slot < 2; ++slot)
    for (int p = 0; p < m.num_patches(); ++p)
      for (int v = 0; v < m.nvar(); ++v)
        for (int i = 0; i < kCells; ++i)
          m.data(slot, p)[v * kCells + i] = Real(u(rng) + (positive && v == 4 ? 40 : 0));
}

// A solver that computes nothing: its shape makes the staging's input boxes those of the
// gather (`vars` fields, `ghost` layers); results are zeroed, the interior left as it is.
class GatherOnly final : public exec::GroupSolver {
 public:
  GatherOnly(int ghost, int vars) : shape_{ghost, vars, 1, 0} {}
  exec::GroupShape shape() const override { return shape_; }
  std::size_t host_scratch_reals() const override { return 1; }
  std::size_t device_scratch_reals() const override { return 1; }
  void solve_host(const Real*, Real*, Real*, kernels::GroupResult* result, Real*) const override {
    *result = {};
  }
  void solve_device(const exec::DeviceBatch& b, void* stream) const override {
    const cudaError_t e = cudaMemsetAsync(b.results, 0, std::size_t(b.count) * sizeof(*b.results),
                                          static_cast<cudaStream_t>(stream));
    if (e != cudaSuccess) throw Error(ErrorKind::kInternal, cudaGetErrorString(e));
  }

 private:
  exec::GroupShape shape_;
};

// One gather of the CPU test's: a ghost width with a coarse time weight and a field range
// (each width, weight and range met once; every combination would only repeat them).
struct Gather {
  int ghost;
  double weight;
  int first, count;
};
std::array<Gather, 3> gathers(int nvar) {
  return {{{kernels::kGhostVl2, 0.375, 0, nvar},
           {kernels::kGhostRk2, 1.0, 1, 3},
           {kernels::kMaxGhost, 0.0, 0, nvar}}};
}

// What a level's gathers compared: reals, and box cells by where they come from (the
// coarser level, across a reflecting wall, a problem-defined side's state).
struct Tally {
  long long reals = 0, coarse = 0, flipped = 0, states = 0;
};

// A box cell's source (kernels::gather_source with the host's tables), for counts and
// failure messages.
kernels::GatherSource source_of(const exec::GatherTables& t, int g, int ghost, int cell,
                                const exec::ProblemGhosts* pg) {
  const int* sides[6] = {};
  if (pg)
    for (int i = 0; i < 6; ++i) {
      const int at = pg->side[std::size_t(g) * 6 + i];
      sides[i] = at >= 0 ? pg->entries.data() + at : nullptr;
    }
  return kernels::gather_source(t.blocks.data() + std::size_t(g) * kernels::kGatherBlocks,
                                t.codes[g], ghost, cell, pg ? sides : nullptr);
}

std::string describe(const kernels::GatherSource& s) {
  std::string d = s.patch == kernels::kGatherCoarse
                      ? "coarse-fine"
                      : "patch " + std::to_string(s.patch) + " cell " + std::to_string(s.cell);
  if (s.flip) d += ", flip " + std::to_string(s.flip);
  if (s.state >= 0)
    d += ", problem state " + std::to_string(s.state) + " flip " + std::to_string(s.state_flip);
  return d;
}

// The input boxes of level `level`'s groups that resident batches gather on the device for
// `c` (time `time`: the problem-defined sides' cells, `pg` on the host, sent to the device
// by DeviceMesh::problem_ghosts before) against gather_group_host's, bit for bit: one batch
// of all the groups, then one of the second half (a batch starting past the tables' first
// group). Adds to `tally`; false after a failure.
bool check_level(exec::Executor& ex, exec::DeviceMesh& dm, const mesh::Mesh& m, int level,
                 const Gather& c, double time, const exec::ProblemGhosts* pg,
                 const std::string& what, Tally& tally) {
  const exec::GatherTables& t = dm.tables(level);
  const int groups = t.groups();
  const std::size_t n3 = kernels::box_cells(c.ghost), box = n3 * std::size_t(c.count);
  const exec::CoarseSlots cs = exec::coarse_slots(m, level, c.weight);
  const int slot = m.current_slot(level);
  // The host's boxes, the groups on OpenMP threads (gather_group_host only reads the mesh).
  std::vector<Real> want(box * groups);
  long long coarse = 0, flipped = 0, states = 0;
  std::string error;
#pragma omp parallel for schedule(dynamic) reduction(+ : coarse, flipped, states)
  for (int g = 0; g < groups; ++g) {
    try {
      exec::gather_group_host(m, t, slot, g, c.ghost, c.first, c.count, want.data() + g * box, cs,
                              pg);
    } catch (const std::exception& e) {
#pragma omp critical
      error = e.what();
    }
    for (std::size_t cell = 0; cell < n3; ++cell) {
      const kernels::GatherSource s = source_of(t, g, c.ghost, static_cast<int>(cell), pg);
      coarse += s.patch == kernels::kGatherCoarse;
      flipped += s.flip != 0;
      states += s.state >= 0;
    }
  }
  if (!error.empty()) {
    ADD_FAILURE() << what << ": level " << level << ", ghost " << c.ghost
                  << ": the host gather failed: " << error;
    return false;
  }
  tally.coarse += coarse, tally.flipped += flipped, tally.states += states;
  GatherOnly solver(c.ghost, c.count);
  const auto staging = ex.allocate(groups, solver);
  if (staging->in_reals != box) {
    ADD_FAILURE() << what << ": the staging's input boxes hold " << staging->in_reals
                  << " reals, not " << box;
    return false;
  }
  for (const int first : {0, groups / 2}) {
    const int count = groups - first;
    // Poison in the device's input boxes (a staged batch copies them there).
    std::fill_n(staging->in, box * count, Real(-1.25e30));
    ex.submit(solver, *staging, count);
    ex.wait(*staging);
    exec::Executor::ResidentBatch rb{};
    rb.first_group = first, rb.read = slot, rb.write = m.next_slot(level);
    rb.in_first = c.first, rb.out_first = 0, rb.level = level, rb.coarse = cs;
    rb.scatter = false, rb.time = time;
    ex.submit_resident(solver, *staging, count, dm, rb);
    ex.wait(*staging);
    ex.fetch_resident(*staging, count);
    for (int i = 0; i < count; ++i) {
      const Real *a = staging->in + i * box, *b = want.data() + (first + i) * box;
      if (std::memcmp(a, b, box * sizeof(Real)) != 0) {
        std::size_t k = 0;
        while (std::memcmp(a + k, b + k, sizeof(Real)) == 0) ++k;
        const int cell = static_cast<int>(k % n3);
        ADD_FAILURE() << what << ": level " << level << ", ghost " << c.ghost << ", weight "
                      << c.weight << ", batch from group " << first << ", group " << first + i
                      << ", field " << c.first + k / n3 << ", box cell " << cell << " ("
                      << describe(source_of(t, first + i, c.ghost, cell, pg)) << "): device "
                      << a[k] << ", host " << b[k];
        return false;
      }
      tally.reals += static_cast<long long>(box);
    }
  }
  return true;
}

struct Sides {
  const char* name;
  std::vector<std::array<Boundary, 2>> sides;
  std::array<double, 3> centre;
};

// Every refined level's coarse-fine ghost cells, with the sides of the CPU test's cases: the
// refined region in an outflow corner, in a reflecting corner, wrapping across periodic
// sides, and in a corner of mixed sides; positive data and random signs.
TEST(GpuResidentLevels, CoarseFineGatherEqualsHostGather) {
  const auto ex = exec::make_cuda_executor(0, 0);
  const std::vector<Sides> cases = {
      {"outflow corner", {{O, O}, {O, O}, {O, O}}, {0.06, 0.5, 0.62}},
      {"reflecting corner", {{R, R}, {R, R}, {R, R}}, {0.94, 0.06, 0.3}},
      {"periodic wrap", {{P, P}, {P, P}, {P, P}}, {0.1, 0.5, 0.55}},
      {"mixed", {{P, P}, {R, O}, {O, R}}, {0.02, 0.04, 0.64}}};
  Tally all;
  for (const bool mhd : {false, true}) {
    const physics::Model model = model_of(mhd);
    for (const Sides& sc : cases)
      for (const bool positive : {true, false}) {
        mesh::Mesh m = make_mesh(model, sc.sides, sc.centre);
        ASSERT_EQ(m.num_levels(), 3) << sc.name;
        fill_random(m, positive ? 3 : 5, positive);
        m.flip_slots(1);
        auto dm = ex->make_resident(m);
        dm->upload(m);
        const std::string what = std::string(physics_name(mhd)) + ", " + sc.name +
                                 (positive ? ", positive" : ", random signs");
        Tally tally;
        for (int level = 1; level < m.num_levels(); ++level) {
          ASSERT_TRUE(dm->tables(level).coarse_fine) << what << ": level " << level;
          for (const Gather& c : gathers(m.nvar()))
            ASSERT_TRUE(check_level(*ex, *dm, m, level, c, 0.0, nullptr, what, tally));
        }
        std::printf(
            "coarse-fine gather (%s): %lld reals compared; box cells: %lld coarse-fine, %lld "
            "across a reflecting wall\n",
            what.c_str(), tally.reals, tally.coarse, tally.flipped);
        EXPECT_GT(tally.reals, 0) << what;
        EXPECT_GT(tally.coarse, 0) << what;
        all.reals += tally.reals, all.coarse += tally.coarse, all.flipped += tally.flipped;
      }
  }
  std::printf("coarse-fine gather: %lld reals compared in all\n", all.reals);
  EXPECT_GT(all.reals, 0);
  EXPECT_GT(all.flipped, 0);
}

// Problem-defined sides (mesh::ProblemBoundary, as the CPU test's: states, walls and outflow
// by position and time, for the equations' fields; the scalar after them copies the nearest
// inside cell) beside reflecting and periodic ones, on every level (levels 1 and 2 with their
// coarse-fine faces too): DeviceMesh::problem_ghosts before the batches, at their time.
TEST(GpuResidentLevels, ProblemSidesGatherEqualsHostGather) {
  const auto ex = exec::make_cuda_executor(0, 0);
  Tally all;
  for (const bool mhd : {false, true}) {
    const physics::Model model = model_of(mhd);
    for (const bool positive : {true, false}) {
      mesh::Mesh m = make_mesh(
          model, {{Boundary::kProblem, R}, {Boundary::kProblem, Boundary::kProblem}, {P, P}},
          {0.06, 0.94, 0.3});
      ASSERT_EQ(m.num_levels(), 3);
      const int nvar = m.nvar() - 1;  // the problem's fields: all but the scalar
      mesh::ProblemBoundary pb;
      pb.nvar = nvar;
      pb.state = [nvar](const std::array<double, 3>& lo, const std::array<double, 3>& hi, double t,
                        int dim, int side, Real* u) {
        const long k = std::lround(lo[0] * 96) + 3 * std::lround(lo[1] * 96) +
                       5 * std::lround(hi[2] * 96) + dim + side;
        if (k % 3 == 1) return mesh::GhostFill::kReflecting;
        if (k % 3 == 2) return mesh::GhostFill::kOutflow;
        for (int v = 0; v < nvar; ++v)
          u[v] = Real(2 + 0.1 * v + 0.3 * lo[0] + 0.7 * hi[1] + 0.2 * lo[2] + t);
        return mesh::GhostFill::kState;
      };
      m.set_problem_boundary(pb);
      fill_random(m, positive ? 13 : 17, positive);
      m.flip_slots(1);
      auto dm = ex->make_resident(m);
      dm->upload(m);
      const std::string what =
          std::string(physics_name(mhd)) + (positive ? ", positive" : ", random signs");
      const double time = 0.37;
      Tally tally;
      for (int level = 0; level < m.num_levels(); ++level) {
        ASSERT_TRUE(dm->tables(level).problem) << what << ": level " << level;
        for (const Gather& c : gathers(m.nvar())) {
          const exec::ProblemGhosts pg =
              exec::build_problem_ghosts(m, dm->tables(level), c.ghost, time);
          dm->problem_ghosts(m, level, c.ghost, time);
          ASSERT_TRUE(check_level(*ex, *dm, m, level, c, time, &pg, what, tally));
        }
      }
      std::printf(
          "problem-sides gather (%s): %lld reals compared; box cells: %lld problem states, %lld "
          "coarse-fine, %lld across a reflecting wall\n",
          what.c_str(), tally.reals, tally.states, tally.coarse, tally.flipped);
      EXPECT_GT(tally.reals, 0) << what;
      EXPECT_GT(tally.states, 0) << what;
      EXPECT_GT(tally.coarse, 0) << what;
      all.reals += tally.reals;
    }
  }
  std::printf("problem-sides gather: %lld reals compared in all\n", all.reals);
  EXPECT_GT(all.reals, 0);
}

}  // namespace
}  // namespace tessera
