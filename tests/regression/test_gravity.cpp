// Self-gravity on whole runs: the Jeans mode against linear theory (Schive et al. 2010
// §4.4), hydrostatic and collapsing self-gravitating spheres, Jeans-length refinement.
// Thresholds are about 1.5x what was measured (docs/validation.md, "Self-gravity");
// the potentials themselves are in test_gravity_potential.cpp.
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
