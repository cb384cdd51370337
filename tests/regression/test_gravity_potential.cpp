// Self-gravity on whole runs: the potential of the initial conditions against analytic
// ones (uniform and Gaussian spheres, point masses) with zero to three refined levels,
// the refined levels solved by SOR with the potential correction. Thresholds are about
// 1.5x what was measured (docs/validation.md, "Self-gravity").
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "run_problem.hpp"

namespace tessera {
namespace {
// Relative L1 error of the initial potential of uniform_sphere (n^3 root cells) against
// the analytic one, inside and outside the sphere.
struct SphereError {
  double inside = 0, outside = 0;
};

SphereError sphere_potential_error(int n, std::vector<std::string> overrides = {},
                                   int* levels = nullptr) {
  set_log_quiet(true);
  const std::string nx = std::to_string(n);
  overrides.insert(overrides.end(), {"mesh.nx=[" + nx + "," + nx + "," + nx + "]",
                                     "output.enabled=false", testing::backend_override()});
  evolve::Simulation sim(load_run_params(
      std::string(TESSERA_SOURCE_DIR) + "/problems/uniform_sphere/uniform_sphere.toml", overrides));
  sim.initialize();
  if (levels) *levels = sim.mesh().num_levels();
  const auto& p = sim.params();
  const double R = p.real("problem.radius"), G = p.real("gravity.G");
  const double rho = p.real("problem.density") - p.real("problem.background");
  const double M = 4.0 / 3.0 * std::numbers::pi * R * R * R * rho;
  const int phi = sim.fields().find("phi");
  double err[2] = {0, 0}, norm[2] = {0, 0};
  testing::for_each_cell(sim, [&](std::array<double, 3> x, double, const double* u) {
    double r2 = 0;
    for (int d = 0; d < 3; ++d) r2 += (x[d] - 0.5) * (x[d] - 0.5);
    const double r = std::sqrt(r2);
    const double exact = r < R ? -2 * std::numbers::pi * G * rho * (R * R - r2 / 3) : -G * M / r;
    const int side = r < R ? 0 : 1;
    err[side] += std::fabs(u[phi] - exact);
    norm[side] += std::fabs(exact);
  });
  return {err[0] / norm[0], err[1] / norm[1]};
}

// The Gaussian sphere (uniform_sphere with problem.profile = "gaussian", sigma = 0.06 in
// the unit box, root n^3): the relative L1 error of the leaf potential against
// -G M erf(r / sqrt(2) sigma) / r within r < 2 sigma (where the tests below make sure
// the finest level covers every cell), and the largest radius of a leaf cell coarser
// than the finest (infinity without refinement).
struct GaussianError {
  double core = 0, coarse_from = 0;
  int levels = 1;
};

GaussianError gaussian_potential_error(int n, std::vector<std::string> overrides = {}) {
  set_log_quiet(true);
  const std::string nx = std::to_string(n);
  overrides.insert(overrides.end(),
                   {"mesh.nx=[" + nx + "," + nx + "," + nx + "]", "problem.profile=gaussian",
                    "problem.radius=0.06", "problem.background=1e-9", "output.enabled=false",
                    testing::backend_override()});
  evolve::Simulation sim(load_run_params(
      std::string(TESSERA_SOURCE_DIR) + "/problems/uniform_sphere/uniform_sphere.toml", overrides));
  sim.initialize();
  const auto& p = sim.params();
  const double s = p.real("problem.radius"), G = p.real("gravity.G");
  const double M = std::pow(2 * std::numbers::pi, 1.5) * s * s * s *
                   (p.real("problem.density") - p.real("problem.background"));
  const int phi = sim.fields().find("phi");
  const int levels = sim.mesh().num_levels();
  const double finest = sim.mesh().dx(levels - 1);
  GaussianError e;
  e.levels = levels;
  e.coarse_from = std::numeric_limits<double>::infinity();
  double err = 0, norm = 0;
  testing::for_each_cell(sim, [&](std::array<double, 3> x, double h, const double* u) {
    double r2 = 0;
    for (int d = 0; d < 3; ++d) r2 += (x[d] - 0.5) * (x[d] - 0.5);
    const double r = std::sqrt(r2);
    if (h > 1.5 * finest) e.coarse_from = std::min(e.coarse_from, r);
    if (r >= 2 * s) return;
    const double exact = -G * M * std::erf(r / (std::numbers::sqrt2 * s)) / r;
    err += std::fabs(u[phi] - exact) * h * h * h;
    norm += std::fabs(exact) * h * h * h;
  });
  e.core = err / norm;
  return e;
}

TEST(GaussianSphere, PotentialConvergesAtSecondOrderWithZeroOneAndTwoLevels) {
  // Refined where the density exceeds 2% of the peak (r < 2.8 sigma) on every level, with
  // the default buffer; the error within 2 sigma, where every cell is on the finest level.
  // Without the potential correction too, for the comparison.
  const std::vector<std::string> amr = {"amr.density_refine=[0.02]", "amr.lohner_refine=[0]",
                                        "amr.lohner_derefine=[0]"};
  auto with = [&](int levels, bool correction = true) {
    auto o = amr;
    o.push_back("amr.max_level=" + std::to_string(levels));
    if (!correction) o.push_back("gravity.potential_correction=false");
    return o;
  };
  const GaussianError u32 = gaussian_potential_error(32), u64 = gaussian_potential_error(64),
                      u128 = gaussian_potential_error(128);
  const GaussianError a1 = gaussian_potential_error(32, with(1)),
                      b1 = gaussian_potential_error(64, with(1)),
                      a2 = gaussian_potential_error(32, with(2)),
                      b2 = gaussian_potential_error(64, with(2));
  const GaussianError n1 = gaussian_potential_error(32, with(1, false)),
                      n2 = gaussian_potential_error(32, with(2, false));
  auto more = with(2);  // one more V-cycle than the default two
  more.push_back("gravity.correction_cycles=3");
  const GaussianError m2 = gaussian_potential_error(32, more);
  std::printf(
      "Gaussian sphere, relative L1 of phi within 2 sigma: uniform 32^3 %.3e 64^3 %.3e 128^3 "
      "%.3e (orders %.2f %.2f); 1 level on 32^3 %.3e, on 64^3 %.3e (order %.2f); 2 levels on "
      "32^3 %.3e, on 64^3 %.3e (order %.2f); without the correction on 32^3: 1 level %.3e, 2 "
      "levels %.3e; coarser leaves from r = %.3f %.3f %.3f %.3f\n",
      u32.core, u64.core, u128.core, std::log2(u32.core / u64.core),
      std::log2(u64.core / u128.core), a1.core, b1.core, std::log2(a1.core / b1.core), a2.core,
      b2.core, std::log2(a2.core / b2.core), n1.core, n2.core, a1.coarse_from, b1.coarse_from,
      a2.coarse_from, b2.coarse_from);
  ASSERT_EQ(a1.levels, 2);
  ASSERT_EQ(b1.levels, 2);
  ASSERT_EQ(a2.levels, 3);
  ASSERT_EQ(b2.levels, 3);
  for (const auto* a : {&a1, &b1, &a2, &b2}) EXPECT_GT(a->coarse_from, 2 * 0.06);
  // Measured (docs/validation.md): uniform 6.96e-3, 1.63e-3, 4.07e-4 (orders 2.09, 2.00);
  // 1 level 1.60e-3 and 3.92e-4 (order 2.03); 2 levels 3.81e-4 and 7.64e-5 (order 2.32);
  // without the correction 2.06e-3 (1 level) and 9.85e-4 (2 levels) on 32^3.
  EXPECT_GT(std::log2(u32.core / u64.core), 1.9);
  EXPECT_GT(std::log2(u64.core / u128.core), 1.9);
  EXPECT_GT(std::log2(a1.core / b1.core), 1.9);
  EXPECT_GT(std::log2(a2.core / b2.core), 1.9);
  // Within 1.5x of the uniform solve at the same finest resolution, with one level (0.98x,
  // 0.96x measured) and with two (0.94x): the correction's V-cycles make the levels the
  // composite solution, as accurate as the fine grid where the mass is. Without it the
  // finer levels take their faces from the coarser ones (2.4x with two levels).
  EXPECT_LT(a1.core, 1.5 * u64.core);
  EXPECT_LT(b1.core, 1.5 * u128.core);
  EXPECT_LT(a2.core, 1.5 * u128.core);
  EXPECT_LT(a1.core, 0.85 * n1.core);
  EXPECT_LT(a2.core, 0.5 * n2.core);
  EXPECT_LT(b2.core, 0.3 * a2.core);
  // Two cycles have converged to the composite solution within its discretisation error:
  // a third leaves the error unchanged in four digits (3.811e-4; one cycle gives 1.84e-4,
  // an unconverged value).
  std::printf("2 levels on 32^3 with three V-cycles: %.3e\n", m2.core);
  EXPECT_NEAR(m2.core, a2.core, 0.02 * a2.core);
}

// point_masses (its shipped file: two masses, root 32^3) with `levels` refinement levels:
// the mean |phi / phi_exact - 1| of the leaf cells whose distance r to the nearest mass
// (in root cells) lies in [lo, hi) and beyond two finest cells (the cloud-in-cell
// softening), and how many cells that is.
struct PointMassError {
  double mean = 0;
  long cells = 0;
  // The force: mean |g - g_exact| / |g_exact| of the finest level's cells (g = -grad phi,
  // central differences inside each patch) at 1-2, 2-3, 3-4 and 4-8 finest cells from the
  // nearest mass (filled in the first bin's result only).
  std::array<double, 4> force{};
};

std::vector<PointMassError> point_mass_errors(int levels,
                                              const std::vector<std::array<double, 2>>& bins,
                                              std::vector<std::string> overrides = {}) {
  set_log_quiet(true);
  overrides.insert(overrides.end(), {"amr.max_level=" + std::to_string(levels),
                                     "output.enabled=false", testing::backend_override()});
  evolve::Simulation sim(load_run_params(
      std::string(TESSERA_SOURCE_DIR) + "/problems/point_masses/point_masses.toml", overrides));
  sim.initialize();
  const auto& p = sim.params();
  const auto m = p.real_list("problem.masses"), x = p.real_list("problem.positions");
  const double G = p.real("gravity.G"), h0 = sim.mesh().dx(0);
  const double hf = sim.mesh().dx(sim.mesh().num_levels() - 1);
  const int phi = sim.fields().find("phi");
  std::vector<PointMassError> out(bins.size());
  std::vector<double> sum(bins.size(), 0.0);
  testing::for_each_cell(sim, [&](std::array<double, 3> c, double, const double* u) {
    double exact = 0, nearest = 1e300;
    for (std::size_t i = 0; i < m.size(); ++i) {
      const double r = std::hypot(c[0] - x[3 * i], c[1] - x[3 * i + 1], c[2] - x[3 * i + 2]);
      exact -= G * m[i] / r;
      nearest = std::min(nearest, r);
    }
    if (nearest < 2 * hf) return;
    for (std::size_t b = 0; b < bins.size(); ++b)
      if (nearest >= bins[b][0] * h0 && nearest < bins[b][1] * h0) {
        sum[b] += std::fabs(u[phi] / exact - 1);
        ++out[b].cells;
      }
  });
  for (std::size_t b = 0; b < bins.size(); ++b)
    out[b].mean = out[b].cells ? sum[b] / out[b].cells : 0;
  // The force on the finest level.
  const auto& mesh = sim.mesh();
  const int finest = mesh.num_levels() - 1;
  constexpr int n = mesh::kPatchSize;
  const std::array<double, 5> edges = {1, 2, 3, 4, 8};
  std::array<double, 4> fsum{}, fcount{};
  for (int q = 0; q < mesh.num_patches(); ++q) {
    if (mesh.patch(q).level != finest) continue;
    const Real* f = mesh.current(q) + std::size_t(phi) * mesh::kPatchCells;
    auto at = [&](int i, int j, int k) { return double(f[(k * n + j) * n + i]); };
    for (int k = 1; k < n - 1; ++k)
      for (int j = 1; j < n - 1; ++j)
        for (int i = 1; i < n - 1; ++i) {
          const auto c = mesh.cell_center(q, i, j, k);
          const double g[3] = {-(at(i + 1, j, k) - at(i - 1, j, k)) / (2 * hf),
                               -(at(i, j + 1, k) - at(i, j - 1, k)) / (2 * hf),
                               -(at(i, j, k + 1) - at(i, j, k - 1)) / (2 * hf)};
          double ge[3] = {0, 0, 0}, nearest = 1e300;
          for (std::size_t s = 0; s < m.size(); ++s) {
            const double d[3] = {c[0] - x[3 * s], c[1] - x[3 * s + 1], c[2] - x[3 * s + 2]};
            const double r = std::hypot(d[0], d[1], d[2]);
            for (int a = 0; a < 3; ++a) ge[a] -= G * m[s] * d[a] / (r * r * r);
            nearest = std::min(nearest, r);
          }
          const double dist = nearest / hf;
          for (int b = 0; b < 4; ++b)
            if (dist >= edges[b] && dist < edges[b + 1]) {
              fsum[b] += std::hypot(g[0] - ge[0], g[1] - ge[1], g[2] - ge[2]) /
                         std::hypot(ge[0], ge[1], ge[2]);
              ++fcount[b];
            }
        }
  }
  for (int b = 0; b < 4; ++b) out[0].force[b] = fcount[b] > 0 ? fsum[b] / fcount[b] : 0;
  return out;
}

TEST(PointMasses, PotentialAgainstTheFreeSpaceOneWithZeroToThreeLevels) {
  // Seed 001 Fig. 15: phi / phi_exact against the distance in root cells, with 0 to 3
  // levels, near the masses (0.5 to 2 root cells) and farther (4 to 8), with and without
  // the potential correction; and the force against the distance in finest cells.
  const std::vector<std::array<double, 2>> bins = {{0.5, 2}, {4, 8}};
  std::vector<std::vector<PointMassError>> e, n;
  for (int levels = 0; levels <= 3; ++levels) {
    e.push_back(point_mass_errors(levels, bins));
    n.push_back(point_mass_errors(levels, bins, {"gravity.potential_correction=false"}));
  }
  for (int levels = 0; levels <= 3; ++levels)
    std::printf(
        "point masses, %d levels: mean |g/g_exact - 1| at 1-2, 2-3, 3-4, 4-8 finest cells "
        "%.3e %.3e %.3e %.3e; without the correction %.3e %.3e %.3e %.3e\n",
        levels, e[levels][0].force[0], e[levels][0].force[1], e[levels][0].force[2],
        e[levels][0].force[3], n[levels][0].force[0], n[levels][0].force[1], n[levels][0].force[2],
        n[levels][0].force[3]);
  for (int levels = 0; levels <= 3; ++levels)
    std::printf(
        "point masses, %d levels: mean |phi/phi_exact - 1| at 0.5-2 root cells %.3e (%ld "
        "cells), at 4-8 %.3e (%ld cells); without the correction %.3e, %.3e\n",
        levels, e[levels][0].mean, e[levels][0].cells, e[levels][1].mean, e[levels][1].cells,
        n[levels][0].mean, n[levels][1].mean);
  // Measured: no level 1.76e-3 at 4-8 root cells. With 1, 2, 3 levels 8.5e-3, 3.0e-3,
  // 8.7e-4 at 0.5-2 and 4.6e-4, 1.9e-4, 1.4e-4 at 4-8; without the correction 4.0e-2,
  // 4.9e-2, 5.4e-2 and 1.0e-2, 1.6e-2, 1.8e-2. With the correction each level brings the
  // error near the masses down by about 3 (the force is resolved to the finest level's
  // cells, seed 001 Fig. 15); without it each patch group's boundary, interpolated from the
  // coarser level a few cells from a mass, keeps it at the percent level.
  EXPECT_LT(e[0][1].mean, 2e-3);
  EXPECT_EQ(e[0][0].cells, 0);  // on the root alone 0.5-2 cells lie inside the clouds
  for (int levels = 1; levels <= 3; ++levels) {
    EXPECT_GT(e[levels][0].cells, 0);
    EXPECT_LT(e[levels][0].mean, 0.3 * n[levels][0].mean);
    EXPECT_LT(e[levels][1].mean, 7e-4);
    EXPECT_LT(e[levels][1].mean, 0.1 * n[levels][1].mean);
  }
  // The force in units of the finest cells (seed 001 Fig. 15: with the correction the
  // force resolution approaches two finest cells). Measured, mean |g/g_exact - 1| at 2-3,
  // 3-4 and 4-8 finest cells: the root alone (a uniform grid) 9.7e-2, 4.8e-2, 1.5e-2; with
  // 1, 2, 3 levels 1.05e-1, 5.3e-2, 1.7e-2 / 1.03e-1, 4.9e-2, 1.8e-2 / 9.6e-2, 4.9e-2,
  // 1.7e-2: the refined levels resolve the force as a uniform grid of their cells does
  // (the cloud-in-cell mass and the 7-point operator set that resolution). Without the
  // correction 1.5e-1, 1.2e-1 and 8.7e-2 to 1.4e-1: the error no longer falls with the
  // distance in finest cells.
  for (int levels = 1; levels <= 3; ++levels) {
    for (int b = 1; b < 4; ++b)
      EXPECT_LT(e[levels][0].force[b], 1.3 * e[0][0].force[b]) << levels << " " << b;
    EXPECT_LT(4 * e[levels][0].force[3], n[levels][0].force[3]) << levels;
  }
  EXPECT_LT(e[0][0].force[1], 0.11);
  EXPECT_LT(e[0][0].force[3], 2e-2);
  EXPECT_LT(e[1][0].mean, 1.3e-2);
  EXPECT_LT(e[2][0].mean, 0.5 * e[1][0].mean);
  EXPECT_LT(e[3][0].mean, 0.5 * e[2][0].mean);
}

TEST(UniformSphere, IsolatedPotentialMatchesTheAnalyticSolution) {
  const SphereError a = sphere_potential_error(32), b = sphere_potential_error(64);
  std::printf(
      "uniform sphere, relative L1 of phi: inside %.3e (32^3) %.3e (64^3), outside "
      "%.3e %.3e\n",
      a.inside, b.inside, a.outside, b.outside);
  // Measured: inside 1.16e-3 (32^3), 3.15e-5 (64^3); outside 9.32e-4, 8.99e-5 (with the
  // lattice Green's function; the cell-centred -G/r kernel gave 2.01e-3 and 7.91e-4 inside).
  EXPECT_LT(b.inside, 1e-4);
  EXPECT_LT(b.outside, 1.2e-4);
  EXPECT_LT(b.inside, a.inside);
  EXPECT_LT(b.outside, a.outside);
}

TEST(UniformSphere, RefinedLevelsSolvedWithSorMatchTheUniformFineSolve) {
  // Root 32^3 with the sphere (and a shell around it) refined once or twice: the leaf
  // potential against the uniform FFT solve at the finest resolution. With one level, a
  // buffer of a whole patch makes the level cover the whole root grid, so its patch
  // groups on the domain faces take their ghost values from the root's free-space
  // potential outside; with two, a buffer of 2 cells.
  const std::vector<std::string> amr = {"amr.density_refine=[0.5]", "amr.lohner_refine=[0]",
                                        "amr.lohner_derefine=[0]"};
  int l1 = 0, l2 = 0;
  auto one = amr, two = amr;
  one.push_back("amr.max_level=1");
  one.push_back("amr.flag_buffer=8");
  two.push_back("amr.max_level=2");
  two.push_back("amr.flag_buffer=2");
  auto off = one;
  off.push_back("gravity.potential_correction=false");
  const SphereError a1 = sphere_potential_error(32, one, &l1);
  const SphereError a2 = sphere_potential_error(32, two, &l2);
  const SphereError n1 = sphere_potential_error(32, off);
  const SphereError u64 = sphere_potential_error(64), u128 = sphere_potential_error(128);
  std::printf(
      "uniform sphere, relative L1 of phi: 1 level (%d) inside %.3e outside %.3e vs uniform "
      "64^3 %.3e %.3e (without the correction %.3e %.3e); 2 levels (%d) inside %.3e outside "
      "%.3e vs uniform 128^3 %.3e %.3e\n",
      l1, a1.inside, a1.outside, u64.inside, u64.outside, n1.inside, n1.outside, l2, a2.inside,
      a2.outside, u128.inside, u128.outside);
  EXPECT_EQ(l1, 2);
  EXPECT_EQ(l2, 3);
  // Measured: one level 1.12e-5 inside, 1.29e-4 outside (uniform 64^3: 3.15e-5, 8.99e-5;
  // without the correction 1.80e-4, 2.10e-4); two levels 1.57e-5, 2.93e-5 (uniform 128^3:
  // 3.80e-5, 2.09e-5). The corrected levels are the composite solution, whose fine cells
  // resolve the sphere's edge; outside, the coarser leaves beyond the shell set the error.
  EXPECT_LT(a1.inside, 2e-5);
  EXPECT_LT(a1.outside, 2e-4);
  EXPECT_LT(a1.inside, 0.2 * n1.inside);
  EXPECT_LT(a1.outside, 1.5 * u64.outside);
  EXPECT_LT(a2.inside, 2e-5);
  EXPECT_LT(a2.outside, 0.4 * a1.outside);
  EXPECT_LT(a2.outside, 2 * u128.outside);
}

}  // namespace
}  // namespace tessera
