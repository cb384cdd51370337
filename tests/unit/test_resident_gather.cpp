// Device residency's gather (kernels/resident_gather.hpp, exec/resident.hpp): the GPU
// builds each group's input box from the device pool with gather_source; here its host
// twin, gather_group_host, is compared with the host's prepare_group, bit for bit, on every
// group of meshes whose sides mix periodic, outflow and reflecting boundaries, with the
// MHD fields (two vectors whose normal components flip at reflecting walls). The data are
// random per cell and field, so a cell taken from the wrong place, or a sign flipped on
// the wrong field or axis, differs. Breaking gather_source (outflow copying the mirror
// cell, a reflecting high side mapped to 32 - c, the flip bit of one axis dropped) each
// fails here.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <tuple>
#include <vector>

#include "../nested_mesh.hpp"
#include "kernels/group_layout.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/evolve/schema.hpp"
#include "tessera/evolve/simulation.hpp"
#include "tessera/exec/pipeline.hpp"
#include "tessera/exec/resident.hpp"
#include "tessera/mesh/mesh.hpp"
#include "tessera/mesh/prolongation.hpp"
#include "tessera/physics/fields.hpp"

namespace tessera::evolve {
namespace {

using mesh::Boundary;

mesh::Geometry box(std::array<int, 3> cells, std::array<std::array<Boundary, 2>, 3> bc) {
  mesh::Geometry g;
  g.xmin = {0, 0, 0};
  g.root_cells = cells;
  g.dx0 = 1.0 / 32;
  for (int d = 0; d < 3; ++d) g.xmax[d] = cells[d] * g.dx0;
  g.boundary = bc;
  return g;
}

void randomize(mesh::Mesh& m, int slot, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int p = 0; p < m.num_patches(); ++p)
    for (std::size_t i = 0; i < m.patch_reals(); ++i) m.data(slot, p)[i] = Real(u(rng));
}

struct Case {
  const char* name;
  std::array<int, 3> cells;
  std::array<std::array<Boundary, 2>, 3> bc;
};

class ResidentGather : public ::testing::TestWithParam<Case> {};

TEST_P(ResidentGather, EqualsPrepareGroupBitForBit) {
  const Case& c = GetParam();
  mesh::Mesh m(box(c.cells, c.bc), physics::mhd_fields(1));
  randomize(m, 0, 7);
  randomize(m, 1, 11);
  ASSERT_TRUE(exec::level_is_self_contained(m, 0));
  const exec::GatherTables t = exec::build_gather_tables(m, 0);
  ASSERT_EQ(t.groups(), static_cast<int>(m.groups(0).size()));
  for (const int ghost : {kernels::kGhostVl2, kernels::kGhostRk2, kernels::kMaxGhost}) {
    const std::size_t n3 = kernels::box_cells(ghost);
    std::vector<Real> want(n3 * m.nvar()), got(n3 * m.nvar());
    // Some fields only (a pass reading a sub-range), and all of them.
    for (const auto& [first, count] : {std::pair{0, m.nvar()}, std::pair{5, 3}})
      for (int slot = 0; slot < 2; ++slot)
        for (int g = 0; g < t.groups(); ++g) {
          exec::prepare_group(m, slot, t.first_patch[g], ghost, want.data(), 1.0, {first, count});
          gather_group_host(m, t, slot, g, ghost, first, count, got.data());
          for (std::size_t i = 0; i < n3 * count; ++i)
            ASSERT_EQ(want[i], got[i])
                << c.name << ": ghost " << ghost << ", slot " << slot << ", group " << g
                << ", field " << first + i / n3 << ", box cell " << i % n3;
        }
  }
}

constexpr Boundary P = Boundary::kPeriodic, O = Boundary::kOutflow, R = Boundary::kReflecting;
INSTANTIATE_TEST_SUITE_P(
    Boundaries, ResidentGather,
    ::testing::Values(Case{"periodic", {32, 32, 32}, {{{P, P}, {P, P}, {P, P}}}},
                      Case{"reflecting", {32, 48, 16}, {{{R, R}, {R, R}, {R, R}}}},
                      Case{"outflow and reflecting", {48, 32, 32}, {{{O, R}, {R, O}, {O, O}}}},
                      Case{"mixed", {32, 16, 48}, {{{P, P}, {R, O}, {O, R}}}}),
    [](const auto& info) {
      std::string s = info.param.name;
      for (char& ch : s)
        if (ch == ' ') ch = '_';
      return s;
    });

TEST(ResidentGather, ALevelWithCoarseFineFacesIsNotSelfContained) {
  const auto g = box({32, 32, 32}, {{{O, O}, {O, O}, {O, O}}});
  mesh::Mesh m(g, physics::mhd_fields(0), {{{1, 2, 1}}});
  ASSERT_EQ(m.num_levels(), 2);
  EXPECT_TRUE(exec::level_is_self_contained(m, 0));
  EXPECT_FALSE(exec::level_is_self_contained(m, 1));
  EXPECT_TRUE(exec::build_gather_tables(m, 1).coarse_fine);
  EXPECT_FALSE(exec::build_gather_tables(m, 0).coarse_fine);
}

// Adaptive levels: the coarse-fine ghost cells (kernels/coarse_fine_gather.hpp) against the
// host's gather_box + prolong_region, at time weights 0, between and 1, for every ghost
// width, all fields and a sub-range, on meshes whose refined regions touch (or, periodic,
// wrap across) the domain's sides. Two data sets: positive states with a large energy
// (limited-linear prolongation holds) and random signs (most coarse cells inject, as the
// admissibility fallback decides: each child of a coarse cell inside the box is checked).
struct AmrCase {
  const char* name;
  std::vector<std::array<Boundary, 2>> sides;
  std::array<double, 3> centre;
};

class ResidentGatherAmr : public ::testing::TestWithParam<AmrCase> {};

// The refined meshes of these tests: the fields of MHD or of hydro with a scalar, with the
// admissibility check that makes prolongation inject, on `spec`'s nested levels.
mesh::Mesh amr_mesh(const mesh::testing::NestedSpec& spec, bool mhd) {
  mesh::FieldRegistry fields = mhd ? physics::mhd_fields(1) : physics::hydro_fields(true, 1);
  mesh::AdmissibleState check;
  check.on = check.energy = true;
  check.field = mhd;
  check.gamma_minus_1 = Real(0.4);
  fields.set_admissible(check);
  return mesh::testing::nested_mesh(spec, fields);
}

// Both time levels of every patch: positive states with a large energy (field 4), or
// random signs.
void fill_random(mesh::Mesh& m, unsigned seed, bool positive) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(positive ? 0.5 : -1, positive ? 1.5 : 1);
  for (int slot = 0; slot < 2; ++slot)
    for (int p = 0; p < m.num_patches(); ++p)
      for (int v = 0; v < m.nvar(); ++v)
        for (int i = 0; i < mesh::kPatchCells; ++i)
          m.data(slot, p)[v * mesh::kPatchCells + i] = Real(u(rng) + (positive && v == 4 ? 40 : 0));
}

TEST_P(ResidentGatherAmr, CoarseFineGhostsEqualPrepareGroupBitForBit) {
  const AmrCase& c = GetParam();
  mesh::testing::NestedSpec spec;
  spec.cells = {48, 48, 32};  // [0, 1] x [0, 1] x [0, 2/3]
  spec.sides = c.sides;
  spec.centre = c.centre;
  spec.radii = {0.3, 0.17};
  for (const bool mhd : {true, false}) {
    mesh::Mesh m = amr_mesh(spec, mhd);
    ASSERT_EQ(m.num_levels(), 3) << c.name;
    for (const bool positive : {true, false}) {
      fill_random(m, positive ? 3 : 5, positive);
      long long coarse_cells = 0;
      for (int level = 1; level < m.num_levels(); ++level) {
        const exec::GatherTables t = exec::build_gather_tables(m, level);
        ASSERT_TRUE(t.coarse_fine);
        // Each ghost width with one time weight and one field range (all three of each
        // are met; every combination would take a minute). The ranges: all fields, some of
        // those the injection check reads, and the last of those on (MHD) or from (hydro)
        // the first field past them.
        for (const auto& [ghost, w, first, count] :
             {std::tuple{kernels::kGhostVl2, 0.375, 0, m.nvar()},
              std::tuple{kernels::kGhostRk2, 1.0, 1, 3},
              std::tuple{kernels::kMaxGhost, 0.0, 5, m.nvar() - 5}}) {
          const std::size_t n3 = kernels::box_cells(ghost);
          std::vector<Real> want(n3 * m.nvar()), got(n3 * m.nvar());
          for (int g = 0; g < t.groups(); ++g) {
            const int slot = m.current_slot(level);
            coarse_cells += exec::prepare_group(m, slot, t.first_patch[g], ghost, want.data(), w,
                                                {first, count});
            gather_group_host(m, t, slot, g, ghost, first, count, got.data(),
                              exec::coarse_slots(m, level, w));
            for (std::size_t i = 0; i < n3 * count; ++i)
              ASSERT_EQ(want[i], got[i])
                  << c.name << (mhd ? ", MHD" : ", hydro") << (positive ? ", positive" : "")
                  << ": level " << level << ", ghost " << ghost << ", weight " << w << ", group "
                  << g << ", field " << first + i / n3 << ", box cell " << i % n3;
          }
        }
      }
      EXPECT_GT(coarse_cells, 0) << c.name;
    }
  }
}

// A regrid's new families on the device (kernels::prolong_new_cell, evaluated per fine
// cell): prolong_family_host, the device kernel's host twin, against mesh::prolong_family,
// for every family of every refined level of the same meshes and data sets (random signs
// make most coarse cells inject).
TEST_P(ResidentGatherAmr, NewFamiliesEqualProlongFamilyBitForBit) {
  const AmrCase& c = GetParam();
  mesh::testing::NestedSpec spec;
  spec.cells = {48, 48, 32};
  spec.sides = c.sides;
  spec.centre = c.centre;
  spec.radii = {0.3, 0.17};
  for (const bool mhd : {true, false}) {
    mesh::Mesh m = amr_mesh(spec, mhd);
    ASSERT_EQ(m.num_levels(), 3) << c.name;
    for (const bool positive : {true, false}) {
      fill_random(m, positive ? 7 : 11, positive);
      // The finest level's parents in the other time level: prolongation reads the
      // parent level's current state only.
      m.flip_slots(1);
      const std::size_t family = std::size_t(mesh::kFamilySize) * m.patch_reals();
      long long differing = 0;
      for (int level = 1; level < m.num_levels(); ++level) {
        const exec::ProlongTable t = exec::build_prolong_table(m, m.groups(level));
        ASSERT_EQ(t.families(), static_cast<int>(m.groups(level).size()));
        mesh::CoarseBox scratch;
        for (int i = 0; i < t.families(); ++i) {
          const int first = t.first_patch[i];
          Real* at = m.current(first);
          const std::vector<Real> before(at, at + family);
          mesh::prolong_family(m, first, scratch);
          const std::vector<Real> want(at, at + family);
          std::copy(before.begin(), before.end(), at);
          exec::prolong_family_host(m, t, i);
          for (std::size_t k = 0; k < family; ++k) {
            ASSERT_EQ(want[k], at[k])
                << c.name << (mhd ? ", MHD" : ", hydro") << (positive ? ", positive" : "")
                << ": level " << level << ", family " << first << ", child " << k / m.patch_reals()
                << ", real " << k % m.patch_reals();
            differing += want[k] != before[k];
          }
        }
      }
      EXPECT_GT(differing, 0) << c.name;  // the data were written
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Boundaries, ResidentGatherAmr,
    ::testing::Values(AmrCase{"outflow corner", {{O, O}, {O, O}, {O, O}}, {0.06, 0.5, 0.62}},
                      AmrCase{"reflecting corner", {{R, R}, {R, R}, {R, R}}, {0.94, 0.06, 0.3}},
                      AmrCase{"periodic wrap", {{P, P}, {P, P}, {P, P}}, {0.1, 0.5, 0.55}},
                      AmrCase{"mixed", {{P, P}, {R, O}, {O, R}}, {0.02, 0.04, 0.64}}),
    [](const auto& info) {
      std::string s = info.param.name;
      for (char& ch : s)
        if (ch == ' ') ch = '_';
      return s;
    });

// Problem-defined sides (mesh::ProblemBoundary, as the double Mach reflection's): the host
// gather with the sides' tables (ProblemGhosts, kernels::gather_source's problem branch)
// against prepare_group, which asks the problem cell by cell, on a 3-level mesh whose
// refined region touches problem-defined sides beside reflecting, outflow and periodic
// ones. The problem answers with states, walls and outflow by position and time (so that
// corners compose every pair), for the equations' fields only: the scalar after them
// copies the nearest inside cell.
TEST(ResidentGather, ProblemDefinedSidesEqualPrepareGroupBitForBit) {
  mesh::testing::NestedSpec spec;
  spec.cells = {48, 48, 32};
  spec.sides = {{Boundary::kProblem, R}, {Boundary::kProblem, Boundary::kProblem}, {P, P}};
  spec.centre = {0.06, 0.94, 0.3};
  spec.radii = {0.3, 0.17};
  for (const bool mhd : {true, false}) {
    mesh::Mesh m = amr_mesh(spec, mhd);
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
    fill_random(m, 13, true);
    const double time = 0.37;
    long long states = 0;
    for (int level = 0; level < m.num_levels(); ++level) {
      const exec::GatherTables t = exec::build_gather_tables(m, level);
      EXPECT_TRUE(t.problem);
      EXPECT_FALSE(exec::level_is_self_contained(m, level));
      for (const auto& [ghost, w, first, count] :
           {std::tuple{kernels::kGhostVl2, 0.375, 0, m.nvar()},
            std::tuple{kernels::kGhostRk2, 1.0, 1, 3},
            std::tuple{kernels::kMaxGhost, 0.0, 0, m.nvar()}}) {
        const exec::ProblemGhosts pg = exec::build_problem_ghosts(m, t, ghost, time);
        states += static_cast<long long>(pg.states.size());
        const std::size_t n3 = kernels::box_cells(ghost);
        std::vector<Real> want(n3 * m.nvar()), got(n3 * m.nvar());
        for (int g = 0; g < t.groups(); ++g) {
          const int slot = m.current_slot(level);
          exec::prepare_group(m, slot, t.first_patch[g], ghost, want.data(), w, {first, count},
                              time);
          gather_group_host(m, t, slot, g, ghost, first, count, got.data(),
                            exec::coarse_slots(m, level, w), &pg);
          for (std::size_t i = 0; i < n3 * count; ++i)
            ASSERT_EQ(want[i], got[i])
                << (mhd ? "MHD" : "hydro") << ": level " << level << ", ghost " << ghost
                << ", group " << g << ", field " << first + i / n3 << ", box cell " << i % n3;
        }
      }
    }
    EXPECT_GT(states, 0);
  }
}

TEST(ResidentGather, StaleTimeLevelIsRefusedOnTheHost) {
  mesh::Mesh m(box({16, 16, 16}, {{{P, P}, {P, P}, {P, P}}}), physics::hydro_fields(true, 0));
  m.set_host_stale(1, true);
  EXPECT_NO_THROW(m.data(0, 0));
  EXPECT_THROW(m.data(1, 0), Error);
  m.set_host_stale(1, false);
  EXPECT_NO_THROW(m.data(1, 0));
}

// gpu.resident = "on" is refused where it cannot hold: on the CPU backend (this machine's
// CI has no GPU) the message names the backend; "auto" runs staged.
TEST(ResidentGather, OnIsRefusedWithoutTheCudaBackend) {
  set_log_quiet(true);
  const std::string file = std::string(TESSERA_SOURCE_DIR) + "/problems/sedov/sedov.toml";
  try {
    Simulation sim(load_run_params(file, {"run.backend=cpu", "gpu.resident=on",
                                          "mesh.nx=[16,16,16]", "output.enabled=false"}));
    FAIL() << "gpu.resident = on was accepted on the CPU backend";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find("gpu.resident"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("backend cpu"), std::string::npos) << e.what();
  }
  Simulation sim(
      load_run_params(file, {"run.backend=cpu", "mesh.nx=[16,16,16]", "output.enabled=false"}));
  EXPECT_FALSE(sim.device_resident());
}

}  // namespace
}  // namespace tessera::evolve
