// Self-gravity on whole runs: the Jeans mode against linear theory (Schive et al. 2010
// §4.4). Thresholds are about 1.5x what was measured (docs/validation.md, "Self-gravity").
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "run_problem.hpp"

namespace tessera {
namespace {

struct JeansRun {
  double amplitude = 0;  // measured relative amplitude of the cos(kx) mode at the end
  double expected = 0;   // linear theory's, for the same cell averages
  double l1 = 0;         // L1 density error / (rho0 A e^{Gamma t}), against linear theory
  double time = 0;
  int levels = 0;
};

// The jeans_wave parameter file with n cells per wavelength (and the overrides).
JeansRun run_jeans(int n, std::vector<std::string> overrides = {}) {
  // One wavelength along x; 16 cells across, so y and z span 16 / n.
  const std::string w = std::to_string(16.0 / n);
  overrides.push_back("mesh.nx=[" + std::to_string(n) + ",16,16]");
  overrides.push_back("mesh.xmax=[1," + w + "," + w + "]");
  auto sim = testing::run_problem("jeans_wave/jeans_wave.toml", overrides);
  const auto& p = sim->params();
  const double rho0 = p.real("problem.rho0"), amp = p.real("problem.amplitude");
  const double k = 2 * std::numbers::pi, t = sim->time();
  const double by = p.real("problem.by");
  const double c2 = p.real("hydro.gamma") * p.real("problem.p0") / rho0 + by * by / rho0;
  const double w2 = c2 * k * k - 4 * std::numbers::pi * p.real("gravity.G") * rho0;
  const double growth = w2 < 0 ? std::exp(std::sqrt(-w2) * t) : std::cos(std::sqrt(w2) * t);
  // Fourier coefficient of cos(kx) of the cell averages: a cell average of cos(kx) is
  // cos(k x_c) sin(kh/2) / (kh/2), so linear theory's coefficient carries that factor.
  // Volume-weighted (leaf cells of refined runs differ in size); h: the finest width.
  double sum = 0, volume = 0;
  double h = 1;
  testing::for_each_cell(*sim, [&](std::array<double, 3> x, double dx, const double* u) {
    sum += (u[0] / rho0 - 1) * std::cos(k * x[0]) * dx * dx * dx;
    volume += dx * dx * dx;
    h = std::min(h, dx);
  });
  JeansRun r;
  r.levels = sim->mesh().num_levels();
  r.amplitude = 2 * sum / volume;
  r.expected = amp * growth * std::sin(k * h / 2) / (k * h / 2);
  r.l1 = *sim->density_l1_error() / (rho0 * amp * std::fabs(growth));
  r.time = t;
  return r;
}

TEST(JeansWave, GrowthRateWithinOnePercentAt64CellsPerWavelength) {
  // 100-fold growth of the unstable mode (lambda = 2 lambda_J, Gamma = 2 sqrt(3) pi).
  const JeansRun r = run_jeans(64);
  const double gamma = 2 * std::sqrt(3.0) * std::numbers::pi;
  const double measured = std::log(r.amplitude / r.expected) / r.time + gamma;
  std::printf(
      "Jeans growth at 64 cells: amplitude %.6e (linear theory %.6e), growth rate "
      "%.6f vs %.6f (%.3f%%), L1 %.3e\n",
      r.amplitude, r.expected, measured, gamma, 100 * (measured / gamma - 1), r.l1);
  // The bound is 1%; measured -0.071%. 0.2% also catches a first-order coupling
  // (one kick of dt after the hydro step: -0.68%).
  EXPECT_NEAR(measured / gamma, 1.0, 0.002);
  EXPECT_GT(r.amplitude / (1e-6 * 50), 1.0);  // it did grow (about 100-fold)
}

TEST(JeansWave, GrowthRateWithTheCrestsRefinedAndSubcycled) {
  // Root 32 cells per wavelength, the overdense half refined to 64, and to 128 with a
  // second level (density above rho0, no buffer): the refined levels' SOR, the potential's ghost
  // layers interpolated in space and time at coarse-fine faces across the mode, and kicks on both
  // levels.
  const double gamma = 2 * std::sqrt(3.0) * std::numbers::pi;
  // cfl 0.3: the file's 0.5 is stable only for a flow exactly along x, which a root-only
  // run keeps to round-off; the refined run's group-wise solves seed transverse round-off
  // that a 3D step at 0.5 amplifies (it grows to 1e-3 in 17 steps).
  const JeansRun amr =
      run_jeans(32, {"hydro.cfl=0.3", "amr.max_level=1", "amr.density_refine=[1.0]",
                     "amr.lohner_refine=[0]", "amr.lohner_derefine=[0]", "amr.flag_buffer=0"});
  // Two levels (the crests at 128 cells per wavelength; three levels take minutes).
  const JeansRun amr2 =
      run_jeans(32, {"hydro.cfl=0.3", "amr.max_level=2", "amr.density_refine=[1.0,1.0]",
                     "amr.lohner_refine=[0]", "amr.lohner_derefine=[0]", "amr.flag_buffer=0"});
  const JeansRun root = run_jeans(32, {"hydro.cfl=0.3"});
  const double g_amr = std::log(amr.amplitude / amr.expected) / amr.time + gamma;
  const double g_root = std::log(root.amplitude / root.expected) / root.time + gamma;
  const double g_amr2 = std::log(amr2.amplitude / amr2.expected) / amr2.time + gamma;
  std::printf(
      "Jeans growth, 32 cells per wavelength: root only %.4f%% (L1 %.3e); crests refined to "
      "64 (%d levels) %.4f%% (L1 %.3e); to 128 (%d levels) %.4f%% (L1 %.3e)\n",
      100 * (g_root / gamma - 1), root.l1, amr.levels, 100 * (g_amr / gamma - 1), amr.l1,
      amr2.levels, 100 * (g_amr2 / gamma - 1), amr2.l1);
  EXPECT_EQ(amr.levels, 2);
  EXPECT_EQ(amr2.levels, 3);
  // The bound is 1%; measured -0.100% and -0.031% (root only at 32: -0.203%). 0.3%
  // still catches a first-order coupling (-0.68% at 64 uniform).
  EXPECT_NEAR(g_amr / gamma, 1.0, 0.003);
  EXPECT_NEAR(g_amr2 / gamma, 1.0, 0.001);
  // Measured 3.34e-3 and 1.10e-3 against 7.54e-3 (uniform 64 and 128: 2.30e-3, 5.23e-4).
  EXPECT_LT(amr.l1, 0.7 * root.l1);
  EXPECT_LT(amr2.l1, 0.5 * amr.l1);
}

TEST(JeansWave, DensityErrorAfterHundredfoldGrowthConvergesAtSecondOrder) {
  const JeansRun a = run_jeans(64), b = run_jeans(128);
  const double order = std::log2(a.l1 / b.l1);
  std::printf("Jeans growth: L1 / (rho0 A e^(Gamma t)) %.4e (64), %.4e (128), order %.3f\n", a.l1,
              b.l1, order);
  EXPECT_GE(order, 1.8);
  EXPECT_LT(b.l1, 8e-4);  // measured 2.30e-3 (64), 5.23e-4 (128): order 2.14
}

TEST(JeansWave, StableModeOscillatesAtTheJeansFrequency) {
  // 4 pi G rho0 = pi^2 (lambda_J = 2 lambda): omega = sqrt(3) pi; half a period later the
  // mode is inverted. Without gravity it would be the sound wave's, omega = 2 pi: at that
  // time cos(omega t) = cos(2 pi / sqrt(3)) = -0.61 instead of -1.
  const double omega = std::sqrt(3.0) * std::numbers::pi;
  const JeansRun r = run_jeans(64, {"gravity.G=" + std::to_string(std::numbers::pi / 4),
                                    "run.t_end=" + std::to_string(std::numbers::pi / omega)});
  std::printf("Jeans oscillation at 64 cells: amplitude %.6e (linear theory %.6e), L1 %.3e\n",
              r.amplitude, r.expected, r.l1);
  // Measured 0.99955 (a frozen mode would give 1 / -0.61, the sound wave's -0.61).
  EXPECT_NEAR(r.amplitude / r.expected, 1.0, 1e-3);
  EXPECT_LT(r.l1, 5e-4);  // measured 2.85e-4
}

TEST(JeansWave, MagneticPressureAcrossTheModeSlowsItsGrowth) {
  // GLM-MHD (HLLD) with B_y = 1 across k: c_s^2 + B_y^2 / rho0 = 2,
  // Gamma = sqrt(16 pi^2 - 8 pi^2) = 2 sqrt(2) pi instead of 2 sqrt(3) pi; run to 100-fold
  // growth.
  const double gamma = 2 * std::sqrt(2.0) * std::numbers::pi;
  const JeansRun r = run_jeans(64, {"mhd.enabled=true", "problem.by=1",
                                    "run.t_end=" + std::to_string(std::log(100.0) / gamma)});
  const double measured = std::log(r.amplitude / r.expected) / r.time + gamma;
  std::printf("MHD Jeans growth at 64 cells: growth rate %.6f vs %.6f (%.3f%%), L1 %.3e\n",
              measured, gamma, 100 * (measured / gamma - 1), r.l1);
  EXPECT_NEAR(measured / gamma, 1.0, 0.002);
  EXPECT_LT(r.l1, 5e-3);  // measured 3.50e-3 (growth rate -0.115%)
}

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

// The n = 1 polytrope (problems/polytrope) after `t_end` dynamical times 1 / sqrt(G rho_c)
// on n^3 root cells: the central (largest) density's relative change and the mass-weighted
// speed in units of the central sound speed.
struct PolytropeDrift {
  double central = 0, speed = 0;
};

PolytropeDrift polytrope_drift(int n, double t_end) {
  const std::string nx = std::to_string(n);
  auto sim = testing::run_problem(
      "polytrope/polytrope.toml",
      {"mesh.nx=[" + nx + "," + nx + "," + nx + "]", "run.t_end=" + std::to_string(t_end)});
  const auto& p = sim->params();
  const double rho_c = p.real("problem.central_density"), R = p.real("problem.radius");
  const double alpha = R / std::numbers::pi;
  const double K = 2 * std::numbers::pi * p.real("gravity.G") * alpha * alpha;
  const double c_central = std::sqrt(p.real("hydro.gamma") * K * rho_c);
  double max_rho = 0, mass = 0, momentum = 0;
  testing::for_each_cell(*sim, [&](std::array<double, 3>, double, const double* u) {
    max_rho = std::max(max_rho, u[0]);
    mass += u[0];
    momentum += std::sqrt(u[1] * u[1] + u[2] * u[2] + u[3] * u[3]);
  });
  // The initial central cell average: the problem's own, at the centre cell of the grid
  // (the star is centred on a cell corner, so 8 cells share the largest value).
  set_log_quiet(true);
  evolve::Simulation start(
      load_run_params(std::string(TESSERA_SOURCE_DIR) + "/problems/polytrope/polytrope.toml",
                      {"mesh.nx=[" + nx + "," + nx + "," + nx + "]", "output.enabled=false",
                       testing::backend_override()}));
  start.initialize();
  double max0 = 0;
  testing::for_each_cell(
      start, [&](std::array<double, 3>, double, const double* u) { max0 = std::max(max0, u[0]); });
  return {max_rho / max0 - 1, momentum / mass / c_central};
}

TEST(Polytrope, StaysInHydrostaticEquilibrium) {
  // Three dynamical times on 32^3 (the star's radius is 8 cells); docs/validation.md has
  // ten at 64^3 and 128^3 on the GPU.
  const PolytropeDrift d = polytrope_drift(32, 3.0);
  std::printf(
      "polytrope 32^3, t = 3: central density change %+.3e, mass-weighted speed / "
      "central sound speed %.3e\n",
      d.central, d.speed);
  // Measured -0.105 and 0.0183: the 8-cell star settles into the discrete equilibrium.
  EXPECT_LT(std::fabs(d.central), 0.15);
  EXPECT_LT(d.speed, 0.03);
}

// Total energy (gas + (1/2) int rho phi) of the Evrard collapse on n^3 cells at t_end,
// relative to |W(0)| = (2/3) G M^2 / R.
double evrard_energy_error(int n, double t_end) {
  const std::string nx = std::to_string(n);
  auto sim = testing::run_problem(
      "evrard_collapse/evrard_collapse.toml",
      {"mesh.nx=[" + nx + "," + nx + "," + nx + "]", "run.t_end=" + std::to_string(t_end)});
  const double e = sim->conserved_totals()[4] + *sim->potential_energy();
  return (e - (0.05 - 2.0 / 3.0)) / (2.0 / 3.0);
}

TEST(EvrardCollapse, TotalEnergyDuringTheInfall) {
  // The source-term form of gravity (kernels/gravity.hpp) conserves E + W to the
  // truncation error; the 1/r cusp at the centre, a few cells wide on a uniform grid, makes
  // that error large at the bounce (docs/validation.md). Before it, on 32^3, t = 0.6
  // (W(0.6) is about 1.3 W(0)):
  const double err = evrard_energy_error(32, 0.6);
  std::printf("Evrard collapse 32^3, t = 0.6: (E + W - E0) / |W0| = %+.3e\n", err);
  // Measured +1.53e-3 (with the cell-centred -G/r kernel of earlier versions +6.3e-4: W
  // holds each cell's self-energy, -2 pi G_L(0) G rho^2 h^5 = -1.59 G rho^2 h^5 with the
  // lattice Green's function against -1.19 G rho^2 h^5 with the cube constant, and it
  // grows with the density while no force comes from it).
  EXPECT_LT(std::fabs(err), 2.3e-3);
}

TEST(JeansRefinement, EveryCoarserLeafResolvesTheJeansLength) {
  // Evrard's sphere (rho = 1 / (2 pi r), uniform specific energy): the Jeans length
  // lambda_J^2 = pi gamma (gamma - 1) u / (G rho) shrinks as sqrt(r) towards the centre.
  // With N_J = 8 on a 32^3 root (h = 0.078) and two levels, the root refines within
  // r ~ 0.36 and level 1 within r ~ 0.09: every leaf cell coarser than the finest must
  // have lambda_J >= N_J h of its own level (Truelove et al. 1997), pointwise.
  const double nj = 8;
  set_log_quiet(true);
  auto sim = std::make_unique<evolve::Simulation>(load_run_params(
      std::string(TESSERA_SOURCE_DIR) + "/problems/evrard_collapse/evrard_collapse.toml",
      {"mesh.nx=[32,32,32]", "amr.max_level=2", "amr.jeans_cells=8", "amr.lohner_refine=[0]",
       "amr.lohner_derefine=[0]", "amr.flag_buffer=0", "output.enabled=false",
       testing::backend_override()}));
  sim->initialize();
  const auto& p = sim->params();
  const double gamma = p.real("hydro.gamma"), G = p.real("gravity.G");
  const double h0 = sim->mesh().dx(0);
  long cells[3] = {0, 0, 0}, unresolved = 0;
  double min_ratio = 1e300;
  double reach[3] = {0, 0, 0};  // the largest radius of a level's leaf cells
  testing::for_each_cell(*sim, [&](std::array<double, 3> x, double h, const double* u) {
    const int level = static_cast<int>(std::lround(std::log2(h0 / h)));
    ++cells[level];
    reach[level] = std::max(reach[level], std::hypot(x[0], x[1], x[2]));
    const double kinetic = 0.5 * (u[1] * u[1] + u[2] * u[2] + u[3] * u[3]) / u[0];
    const double pres = (gamma - 1) * (u[4] - kinetic);
    const double lambda = std::sqrt(std::numbers::pi * gamma * pres / (G * u[0] * u[0]));
    if (level < 2) {
      min_ratio = std::min(min_ratio, lambda / (nj * h));
      if (lambda < nj * h) ++unresolved;
    }
  });
  std::printf(
      "Jeans refinement (N_J = 8): leaf cells per level %ld %ld %ld; smallest lambda_J / "
      "(N_J h) on the coarser leaves %.3f; level 2 reaches r = %.3f\n",
      cells[0], cells[1], cells[2], min_ratio, reach[2]);
  EXPECT_EQ(unresolved, 0);
  EXPECT_GT(cells[1], 0);
  EXPECT_GT(cells[2], 0);
  // Nothing refined far from the centre: the background (rho = 1e-4) has lambda_J >> N_J h,
  // and level 2 stays within a patch of level 1 (h1 = 0.039, 8 cells) of r = 0.09
  // (measured: 28672 root leaves, level 2 out to r = 0.524; with level 1 flagged on the root's
  // h, 16384 and 0.750).
  EXPECT_GT(cells[0], 32L * 32 * 32 / 2);
  EXPECT_LT(reach[2], 0.6);
}

}  // namespace
}  // namespace tessera
