// The refined levels' potential boxes from tables (kernels/potential_gather.hpp,
// src/gravity/potential_tables.hpp), which device-resident self-gravitating levels will
// gather on the GPU, against gravity::gather_potential bit for bit: every group of two
// refined levels, with the SOR's ghost layer (all of it from the coarser level) and the
// kicks' (same-level neighbours first), at the time weights 1, 0 and in between, next to
// domain sides of every kind: beyond a non-periodic side the parent's potential is
// continued linearly, and next to an isolated root bounded by the root's free-space
// potential of the last two solves.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../nested_mesh.hpp"
#include "kernels/poisson_sor.hpp"
#include "src/gravity/potential_tables.hpp"
#include "tessera/evolve/schema.hpp"
#include "tessera/evolve/simulation.hpp"
#include "tessera/gravity/self_gravity.hpp"
#include "tessera/physics/model.hpp"

namespace tessera {
namespace {

using mesh::Boundary;
constexpr Boundary P = Boundary::kPeriodic, O = Boundary::kOutflow, R = Boundary::kReflecting;

struct PotentialCase {
  const char* name;
  std::vector<std::array<Boundary, 2>> sides;
  std::array<double, 3> centre;
  bool periodic_gravity;
  std::vector<double> radii = {0.3, 0.17};
};

// Positive densities (field 0) and random values of every other field, both time levels.
void fill_random(mesh::Mesh& m, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  for (int slot = 0; slot < 2; ++slot)
    for (int p = 0; p < m.num_patches(); ++p)
      for (int v = 0; v < m.nvar(); ++v)
        for (int i = 0; i < mesh::kPatchCells; ++i)
          m.data(slot, p)[v * mesh::kPatchCells + i] = Real(u(rng));
}

// The parameters of a self-gravitating run with refinement on the case's sides.
Params case_params(const PotentialCase& c) {
  const std::string bc = c.periodic_gravity ? "periodic" : "outflow";
  std::vector<std::string> ov = {
      "mesh.nx=[48,48,48]", "amr.max_level=2",
      std::string("gravity.boundary=") + (c.periodic_gravity ? "periodic" : "isolated")};
  for (const char* side : {"xlo", "xhi", "ylo", "yhi", "zlo", "zhi"})
    ov.push_back(std::string("mesh.bc_") + side + "=" + bc);
  return load_run_params(
      std::string(TESSERA_SOURCE_DIR) + "/problems/uniform_sphere/uniform_sphere.toml", ov);
}

// The case's 3-level mesh with the run's fields.
mesh::Mesh case_mesh(const PotentialCase& c, const Params& params) {
  mesh::testing::NestedSpec spec;
  spec.cells = {48, 48, 48};
  spec.sides = c.sides;
  spec.centre = c.centre;
  spec.radii = c.radii;
  return mesh::testing::nested_mesh(spec, evolve::run_fields(params));
}

class PotentialGather : public ::testing::TestWithParam<PotentialCase> {};

TEST_P(PotentialGather, TablesEqualGatherPotentialBitForBit) {
  const PotentialCase& c = GetParam();
  const Params params = case_params(c);
  const physics::Model model(params);
  mesh::Mesh m = case_mesh(c, params);
  ASSERT_EQ(m.num_levels(), 3) << c.name;
  const int phi_field = m.fields().find(gravity::kPotentialField);
  const int source_field = m.fields().find(gravity::kCorrectionField);
  ASSERT_GE(phi_field, 0);
  ASSERT_GE(source_field, 0);
  gravity::SelfGravity root(params, model, m.geometry(), phi_field, source_field, false);
  // Two root solves of different densities: the exterior potential between them in time.
  fill_random(m, 3);
  root.solve(m);
  fill_random(m, 7);
  root.solve(m);
  constexpr std::size_t n3 = kernels::box_cells(1);
  std::vector<Real> want_rho(n3), want_phi(n3), got_rho(n3), got_phi(n3);
  long long compared = 0, beyond = 0;
  for (int level = 1; level < m.num_levels(); ++level) {
    const gravity::PotentialTables t = gravity::build_potential_tables(m, level, nullptr, &root);
    ASSERT_EQ(t.groups(), static_cast<int>(m.groups(level).size()));
    EXPECT_EQ(t.root_exterior, level == 1 && !c.periodic_gravity) << c.name;
    for (int g = 0; g < t.groups(); ++g) {
      // Groups whose parent's box reaches beyond a non-periodic side (the continuation).
      const auto& pl = t.place[g];
      for (int d = 0; d < 3; ++d)
        if (!pl.periodic[d] && (pl.corner[d] < 2 || pl.corner[d] + 10 > pl.cells[d])) {
          ++beyond;
          break;
        }
      for (const double w : {1.0, 0.0, 0.375})
        for (const bool coarse_ghosts : {true, false}) {
          std::fill(want_rho.begin(), want_rho.end(), Real(0));
          std::fill(got_rho.begin(), got_rho.end(), Real(0));
          gravity::gather_potential(m, phi_field, t.first_patch[g], w, want_rho.data(),
                                    want_phi.data(), coarse_ghosts, source_field, &root);
          gravity::gather_potential_tables(m, t, g, phi_field, w, got_rho.data(), got_phi.data(),
                                           coarse_ghosts, source_field, &root);
          for (std::size_t i = 0; i < n3; ++i) {
            ASSERT_EQ(std::memcmp(&want_phi[i], &got_phi[i], sizeof(Real)), 0)
                << c.name << ": level " << level << ", group " << g << ", weight " << w
                << (coarse_ghosts ? ", coarse ghosts" : ", neighbours' ghosts") << ", box cell "
                << i << ": " << want_phi[i] << " vs " << got_phi[i];
            ASSERT_EQ(std::memcmp(&want_rho[i], &got_rho[i], sizeof(Real)), 0)
                << c.name << ": density, level " << level << ", group " << g << ", box cell " << i;
          }
          compared += static_cast<long long>(n3);
        }
    }
  }
  std::printf("%s: %lld box cells compared, %lld groups' parent boxes reach beyond a side\n",
              c.name, compared, beyond);
  EXPECT_GT(compared, 0);
  if (!c.periodic_gravity) {
    EXPECT_GT(beyond, 0) << c.name;
  }
}

// The potential correction's terms of each covered patch from its finer group (fine_terms:
// the restricted potential, the restricted residual with the neighbours' ghost values and
// the source, the gradients through faces toward leaves and the domain's sides) against
// the tables' evaluation.
TEST_P(PotentialGather, FineTermsFromTablesEqualFineTermsBitForBit) {
  const PotentialCase& c = GetParam();
  const Params params = case_params(c);
  const physics::Model model(params);
  mesh::Mesh m = case_mesh(c, params);
  ASSERT_EQ(m.num_levels(), 3) << c.name;
  const int phi = m.fields().find(gravity::kPotentialField);
  const int source = m.fields().find(gravity::kCorrectionField);
  gravity::SelfGravity root(params, model, m.geometry(), phi, source, false);
  fill_random(m, 5);
  root.solve(m);
  const double four_pi_g = root.four_pi_g(), mean = root.mean_density();
  long long compared = 0, faces = 0;
  for (int level = 0; level + 1 < m.num_levels(); ++level) {
    const gravity::CorrectionTerms want =
        gravity::fine_terms(m, level, phi, source, four_pi_g, &root);
    const gravity::PotentialTables t =
        gravity::build_potential_tables(m, level + 1, nullptr, &root);
    std::vector<double> got(gravity::CorrectionTerms::kReals);
    for (int g = 0; g < t.groups(); ++g) {
      std::fill(got.begin(), got.end(), std::numeric_limits<double>::quiet_NaN());
      gravity::fine_terms_tables(m, t, g, phi, source, four_pi_g, mean, &root, got.data());
      const double* w = want.at(m.patch(t.first_patch[g]).parent);
      for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(std::memcmp(&w[i], &got[i], sizeof(double)), 0)
            << c.name << ": level " << level << ", group " << g << ", term " << i << ": " << w[i]
            << " vs " << got[i];
      compared += static_cast<long long>(got.size());
      faces += __builtin_popcount(t.gradient_faces[g]);
    }
  }
  std::printf("%s: %lld terms compared, %lld faces with a fine gradient\n", c.name, compared,
              faces);
  EXPECT_GT(faces, 0);
}

// The potential correction's source on each level with a finer one (correction_source: the
// covered cells' coarse equation with the fine terms and the level's own potential box, the
// fine gradients on domain faces, the leaves' flux matching next to covered patches)
// against the tables' evaluation.
TEST_P(PotentialGather, CorrectionSourceFromTablesEqualsCorrectionSourceBitForBit) {
  const PotentialCase& c = GetParam();
  const Params params = case_params(c);
  const physics::Model model(params);
  mesh::Mesh a = case_mesh(c, params), b = case_mesh(c, params);
  ASSERT_EQ(a.num_levels(), 3) << c.name;
  const int phi = a.fields().find(gravity::kPotentialField);
  const int source = a.fields().find(gravity::kCorrectionField);
  gravity::SelfGravity root_a(params, model, a.geometry(), phi, source, false);
  gravity::SelfGravity root_b(params, model, b.geometry(), phi, source, false);
  fill_random(a, 13);
  fill_random(b, 13);
  root_a.solve(a);
  root_b.solve(b);
  const double four_pi_g = root_a.four_pi_g(), mean = root_a.mean_density();
  long long compared = 0, nonzero = 0;
  for (int level = a.num_levels() - 2; level >= 0; --level) {
    const auto terms_a = gravity::fine_terms(a, level, phi, source, four_pi_g, &root_a);
    const auto terms_b = gravity::fine_terms(b, level, phi, source, four_pi_g, &root_b);
    gravity::correction_source(a, level, phi, source, four_pi_g, terms_a, &root_a);
    const gravity::PotentialTables t =
        gravity::build_potential_tables(b, level + 1, nullptr, &root_b);
    gravity::correction_source_tables(b, level, t, terms_b, phi, source, four_pi_g, mean, &root_b);
    for (const int first : a.groups(level))
      for (int ch = 0; ch < mesh::kFamilySize; ++ch) {
        const Real* x = a.current(first + ch) + std::size_t(source) * mesh::kPatchCells;
        const Real* y = b.current(first + ch) + std::size_t(source) * mesh::kPatchCells;
        for (int i = 0; i < mesh::kPatchCells; ++i) {
          ASSERT_EQ(std::memcmp(x + i, y + i, sizeof(Real)), 0)
              << c.name << ": level " << level << ", patch " << first + ch << ", cell " << i << ": "
              << x[i] << " vs " << y[i];
          nonzero += x[i] != 0;
        }
        compared += mesh::kPatchCells;
      }
  }
  std::printf("%s: %lld source cells compared, %lld of them not zero\n", c.name, compared, nonzero);
  EXPECT_GT(nonzero, 0);
}

// The potential correction's coarse change prolonged and added to a refined level
// (add_coarse_change: the coarser level's other time level, continued beyond the domain,
// interpolated axis by axis over the whole group) against the tables' evaluation per cell.
TEST_P(PotentialGather, CoarseChangeTablesEqualAddCoarseChangeBitForBit) {
  const PotentialCase& c = GetParam();
  const Params params = case_params(c);
  mesh::Mesh a = case_mesh(c, params), b = case_mesh(c, params);
  ASSERT_EQ(a.num_levels(), 3) << c.name;
  fill_random(a, 11);
  fill_random(b, 11);
  const int phi_field = a.fields().find(gravity::kPotentialField);
  long long compared = 0;
  for (int level = 1; level < a.num_levels(); ++level) {
    gravity::add_coarse_change(a, level, phi_field);
    const gravity::PotentialTables t = gravity::build_potential_tables(b, level);
    for (int g = 0; g < t.groups(); ++g) gravity::add_coarse_change_tables(b, t, g, phi_field);
    for (const int first : a.groups(level))
      for (int ch = 0; ch < mesh::kFamilySize; ++ch) {
        const Real* x = a.current(first + ch) + std::size_t(phi_field) * mesh::kPatchCells;
        const Real* y = b.current(first + ch) + std::size_t(phi_field) * mesh::kPatchCells;
        for (int i = 0; i < mesh::kPatchCells; ++i)
          ASSERT_EQ(std::memcmp(x + i, y + i, sizeof(Real)), 0)
              << c.name << ": level " << level << ", patch " << first + ch << ", cell " << i;
        compared += mesh::kPatchCells;
      }
  }
  std::printf("%s: %lld cells of the coarse change compared\n", c.name, compared);
  EXPECT_GT(compared, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Sides, PotentialGather,
    ::testing::Values(PotentialCase{"isolated, outflow and reflecting sides, refined at a corner",
                                    {{O, O}, {R, R}, {O, R}},
                                    {0.05, 0.06, 0.04},
                                    false},
                      PotentialCase{"isolated, periodic along x, refined at the high y and z sides",
                                    {{P, P}, {O, O}, {R, R}},
                                    {0.02, 0.95, 0.96},
                                    false},
                      PotentialCase{"periodic, the first level reaching across the sides",
                                    {{P, P}, {P, P}, {P, P}},
                                    {0.5, 0.5, 0.5},
                                    true,
                                    {0.5, 0.2}}),
    [](const auto& info) {
      return std::string(info.index == 0   ? "IsolatedCorner"
                         : info.index == 1 ? "IsolatedPeriodicX"
                                           : "Periodic");
    });

}  // namespace
}  // namespace tessera
