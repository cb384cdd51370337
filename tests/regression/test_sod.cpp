// Sod's shock tube along x, y and z against the exact Riemann solution (Toro ch. 4), with
// each time integrator; Lax's tube and Toro's test 3 along x with PLM and PPM.
//
// Thresholds: with PLM (MC limiter), HLLC and SSP-RK2 the L1 density error at 128 cells
// is 4.1e-3 (docs/validation.md); first-order PCM gives 1.7e-2. The bound 5e-3 therefore
// separates a working second-order scheme from a degraded one with 20% margin. The error
// of a solution with discontinuities falls at most linearly with resolution; we require a
// factor 1.6 from 128 to 256 cells (measured: 1.98).
// VL2 with the same reconstruction and solver gives 2.64e-3 at 128 cells (PCM: 1.73e-2,
// minmod: 5.6e-3, van Leer: 3.3e-3) and a ratio of 2.16: bounds 3.2e-3 (20% margin) and
// 1.8.
// The exact density falls monotonically along the tube; the computed one rises between
// neighbours by at most 1.71e-3 (rk2), 2.02e-3 (vl2) at 128 cells (0.2% of the jump:
// the system's wiggles behind the shock, which TVD limiting of primitive variables does
// not remove): bounds 2.5e-3 and 3e-3.
// rk2 with the mc_ep limiter (MC relaxed at smooth extrema) must behave as MC at the
// discontinuities: measured L1 4.1376e-3 (MC 4.1376e-3), ratio 1.99, largest rise 1.67e-3;
// the same bounds as MC.
// The relaxing-TVD scheme (van Leer flux limiter, cfl 0.8 of sod.toml) gives 5.76e-3 at
// 128 cells, ratio 2.02, largest rise 1.52e-3: bounds 6.9e-3 (20% margin), 1.6 and 2e-3.
// Its sweeps rotate the state as the MOL solver does, so x, y and z agree bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "problems/sod/exact_riemann.hpp"
#include "run_problem.hpp"

namespace tessera {
namespace {

struct SodRun {
  double l1 = 0;
  std::vector<double> profile;  // density along the tube, transverse cells must agree
  bool transverse_uniform = true;
  double max_rise = 0;  // largest density increase from a cell to the next along the tube
};

// Initial states and end time of a Riemann problem run with the Sod problem (x0 = 0.5).
struct Tube {
  const char* name;
  double rho_l, u_l, p_l, rho_r, u_r, p_r, t_end;
};
// Lax 1954 (Harten 1978): a shock and a contact close behind it.
constexpr Tube kLax{"lax", 0.445, 0.698, 3.528, 0.5, 0.0, 0.571, 0.14};
// Toro 2009, §4.3.3 test 3: the left half of Woodward & Colella's blast wave, a pressure
// ratio of 1e5 and a thin shell between the contact and the strong shock.
constexpr Tube kToro3{"toro3", 1.0, 0.0, 1000.0, 1.0, 0.0, 0.01, 0.012};

SodRun run_sod(int cells, char dir, const std::string& integrator,
               const std::string& limiter = "mc", const Tube* tube = nullptr) {
  const int d = dir - 'x';
  const double width = 16.0 / cells;  // cubic cells with 16 transverse cells
  // "relaxing_tvd" in place of an integrator: that scheme, `limiter` its flux limiter.
  const bool rtvd = integrator == "relaxing_tvd";
  std::vector<std::string> ov = {"problem.direction=" + std::string(1, dir)};
  if (rtvd)
    ov.insert(ov.end(), {"hydro.scheme=relaxing_tvd", "hydro.tvd_limiter=" + limiter});
  else if (limiter.starts_with("ppm"))  // a parabolic reconstruction in place of a limiter
    ov.insert(ov.end(), {"hydro.integrator=" + integrator, "hydro.reconstruction=" + limiter});
  else
    ov.insert(ov.end(), {"hydro.integrator=" + integrator, "hydro.limiter=" + limiter});
  int n[3] = {16, 16, 16};
  double len[3] = {width, width, width};
  n[d] = cells;
  len[d] = 1.0;
  ov.push_back("mesh.nx=[" + std::to_string(n[0]) + "," + std::to_string(n[1]) + "," +
               std::to_string(n[2]) + "]");
  ov.push_back("mesh.xmax=[" + std::to_string(len[0]) + "," + std::to_string(len[1]) + "," +
               std::to_string(len[2]) + "]");
  for (char a : {'x', 'y', 'z'})
    for (const char* side : {"lo", "hi"})
      ov.push_back(std::string("mesh.bc_") + a + side + "=" + (a == dir ? "outflow" : "periodic"));
  if (tube) {
    const double values[7] = {tube->rho_l, tube->u_l, tube->p_l,  tube->rho_r,
                              tube->u_r,   tube->p_r, tube->t_end};
    const char* keys[7] = {"problem.rho_l", "problem.u_l", "problem.p_l", "problem.rho_r",
                           "problem.u_r",   "problem.p_r", "run.t_end"};
    for (int k = 0; k < 7; ++k) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s=%.17g", keys[k], values[k]);
      ov.push_back(buf);
    }
  }
  auto sim = testing::run_problem("sod/sod.toml", ov);

  const auto& p = sim->params();
  const problems::ExactRiemann exact(
      {p.real("problem.rho_l"), p.real("problem.u_l"), p.real("problem.p_l")},
      {p.real("problem.rho_r"), p.real("problem.u_r"), p.real("problem.p_r")},
      p.real("hydro.gamma"));
  const double t = sim->time(), x0 = p.real("problem.x0");
  SodRun r;
  r.profile.assign(cells, NAN);
  double err = 0;
  long count = 0;
  testing::for_each_cell(*sim, [&](std::array<double, 3> x, double h, const double* u) {
    const double s_lo = (x[d] - 0.5 * h - x0) / t, s_hi = (x[d] + 0.5 * h - x0) / t;
    err += std::fabs(u[0] - exact.average_density(s_lo, s_hi));
    ++count;
    const int i = static_cast<int>(std::floor(x[d] / h));
    if (std::isnan(r.profile[i])) r.profile[i] = u[0];
    if (r.profile[i] != u[0]) r.transverse_uniform = false;
  });
  r.l1 = err / count;
  for (int i = 0; i + 1 < cells; ++i)
    r.max_rise = std::max(r.max_rise, r.profile[i + 1] - r.profile[i]);
  std::vector<double> xs, exact_avg;
  for (int i = 0; i < cells; ++i) {
    const double h = 1.0 / cells, x = (i + 0.5) * h;
    xs.push_back(x);
    exact_avg.push_back(exact.average_density((x - 0.5 * h - x0) / t, (x + 0.5 * h - x0) / t));
  }
  testing::write_validation_csv(std::string(tube ? tube->name : "sod") + "_" +
                                    std::to_string(cells) + "_" + std::string(1, dir) +
                                    (integrator == "rk2" ? "" : "_" + integrator) +
                                    (limiter == "mc" || rtvd ? "" : "_" + limiter),
                                "x,rho,rho_exact", {xs, r.profile, exact_avg});
  return r;
}

// L1 at 128 cells below max_l1 along x, y and z with bitwise identical profiles, the
// error ratio from 128 to 256 cells at least min_ratio, and the density, which falls
// monotonically along the exact solution, rising by at most max_rise between neighbours.
void check_sod(const std::string& integrator, double max_l1, double min_ratio, double max_rise,
               const std::string& limiter = "mc") {
  std::map<char, SodRun> runs;
  for (char dir : {'x', 'y', 'z'}) {
    runs[dir] = run_sod(128, dir, integrator, limiter);
    std::printf("Sod (%s, %s) along %c, 128 cells: L1(density) = %.6e, largest rise %.3e\n",
                integrator.c_str(), limiter.c_str(), dir, runs[dir].l1, runs[dir].max_rise);
    EXPECT_LT(runs[dir].l1, max_l1) << "direction " << dir;
    EXPECT_LE(runs[dir].max_rise, max_rise) << "direction " << dir;
    EXPECT_TRUE(runs[dir].transverse_uniform) << "direction " << dir;
  }
  // The cyclic rotation of the solver makes the three directions bitwise identical.
  EXPECT_EQ(runs['x'].profile, runs['y'].profile);
  EXPECT_EQ(runs['x'].profile, runs['z'].profile);

  const SodRun fine = run_sod(256, 'x', integrator, limiter);
  const double ratio = runs['x'].l1 / fine.l1;
  std::printf(
      "Sod (%s, %s) along x, 256 cells: L1(density) = %.6e, ratio 128/256 = %.3f, largest "
      "rise %.3e\n",
      integrator.c_str(), limiter.c_str(), fine.l1, ratio, fine.max_rise);
  EXPECT_LE(fine.max_rise, max_rise);
  EXPECT_GE(ratio, min_ratio);
}

TEST(SodRegression, ErrorConvergenceAndDirectionIndependence) {
  check_sod("rk2", 5e-3, 1.6, 2.5e-3);
}

TEST(SodRegression, Vl2ErrorConvergenceAndDirectionIndependence) {
  check_sod("vl2", 3.2e-3, 1.8, 3e-3);
}

TEST(SodRegression, McEpErrorConvergenceAndMonotonicity) {
  check_sod("rk2", 5e-3, 1.6, 2.5e-3, "mc_ep");
}

// PPM in primitive variables (hydro.reconstruction = "ppm"): rk2 measured L1 2.999e-3 at
// 128 cells (MC 4.138e-3), ratio 2.04, largest rise 5.57e-3 (the parabolas, limited
// variable by variable, ring a little more behind the shock than MC's slopes); vl2, whose
// predictor takes the mc_ep slopes with PPM, 2.720e-3 (MC 2.645e-3; with a donor-cell
// predictor 3.422e-3), ratio 2.06, rise 1.54e-3. Bounds: L1 +20%, ratio 1.8, rise +25%
// (rk2), +50% (vl2).
TEST(SodRegression, PpmErrorConvergenceAndMonotonicity) {
  check_sod("rk2", 3.6e-3, 1.8, 7e-3, "ppm");
}

TEST(SodRegression, Vl2PpmErrorConvergenceAndMonotonicity) {
  check_sod("vl2", 3.3e-3, 1.8, 2.3e-3, "ppm");
}

// PPM limited in characteristic variables (hydro.reconstruction = "ppm_char",
// reconstruction_ppm_char.hpp), rk2: L1 3.025e-3 at 128 cells (primitive PPM 2.999e-3),
// ratio 2.03, and the largest density rise behind the shock 2.77e-4 at 128 cells and
// 1.70e-4 at 256, where primitive PPM rings with 5.57e-3 and 2.95e-3: the limiter acts on
// each wave family's own jump. Bounds: L1 +20%, rise 4e-4. (vl2 with ppm_char: L1 2.914e-3,
// rises 7.9e-4 and 2.97e-3 at this file's Courant 0.8, 2.2-5.1e-4 at 0.4 and 0.6;
// docs/validation.md.)
TEST(SodRegression, PpmCharRingsLessBehindTheShock) {
  check_sod("rk2", 3.6e-3, 1.8, 4e-4, "ppm_char");
}

TEST(SodRegression, RelaxingTvdErrorConvergenceAndDirectionIndependence) {
  check_sod("relaxing_tvd", 6.9e-3, 1.6, 2e-3, "vanleer");
}

// Lax's and Toro's third tube along x at 128 cells, rk2 with PLM (MC) and with PPM: the
// L1 of the density of each below its bound, PPM's at most PLM's times max_ratio, no
// floored cell in either (a floor would show as a density or pressure at the floor).
void check_tube(const Tube& tube, double max_plm, double max_ppm, double max_ratio) {
  const SodRun plm = run_sod(128, 'x', "rk2", "mc", &tube);
  const SodRun ppm = run_sod(128, 'x', "rk2", "ppm", &tube);
  const SodRun ppm_char = run_sod(128, 'x', "rk2", "ppm_char", &tube);
  std::printf(
      "%s tube, 128 cells, rk2: L1(density) PLM (MC) %.6e, PPM %.6e, ratio %.3f; PPM limited "
      "in characteristic variables %.6e, ratio %.3f\n",
      tube.name, plm.l1, ppm.l1, ppm.l1 / plm.l1, ppm_char.l1, ppm_char.l1 / plm.l1);
  EXPECT_LT(plm.l1, max_plm);
  for (const SodRun* r : {&ppm, &ppm_char}) {
    EXPECT_LT(r->l1, max_ppm);
    EXPECT_LE(r->l1, max_ratio * plm.l1);
    EXPECT_TRUE(r->transverse_uniform);
  }
  EXPECT_TRUE(plm.transverse_uniform);
}

// Measured: Lax PLM 1.1912e-2, PPM 8.485e-3 (ratio 0.712), ppm_char 8.328e-3 (0.699);
// Toro 3 PLM 1.0199e-1, PPM 7.170e-2 (0.703), ppm_char 7.046e-2 (0.691). Bounds: +20%,
// and PPM (either limiting) at most 0.85 of PLM.
TEST(ShockTubeRegression, LaxPpmAndPlm) {
  check_tube(kLax, 1.43e-2, 1.02e-2, 0.85);
}

TEST(ShockTubeRegression, Toro3PpmAndPlm) {
  check_tube(kToro3, 0.122, 8.6e-2, 0.85);
}

// The relaxing-TVD scheme (van Leer) on Lax's and Toro's third tube at 128 cells, cfl 0.8,
// against GAMER's own relaxing-TVD solver on the same tubes (Schive et al. 2010; GAMER
// built for the CPU, double precision, the same first time step, the L1 of the density
// against the exact cell averages): GAMER 1.5975e-2 (Lax) and 1.2348e-1 (Toro 3); Tessera
// measured 1.5985e-2 and 1.2346e-1. Bounds: GAMER's figures + 3%, so a scheme that became
// more diffusive than GAMER's (a larger freezing speed, a lost TVD correction) fails.
TEST(ShockTubeRegression, RelaxingTvdLaxAndToro3AsGamersScheme) {
  for (const auto& [tube, gamer] : {std::pair{&kLax, 1.5975e-2}, std::pair{&kToro3, 1.2348e-1}}) {
    const SodRun r = run_sod(128, 'x', "relaxing_tvd", "vanleer", tube);
    std::printf("%s tube, 128 cells, relaxing TVD: L1(density) %.6e (GAMER's scheme %.4e)\n",
                tube->name, r.l1, gamer);
    EXPECT_LT(r.l1, 1.03 * gamer) << tube->name;
    EXPECT_TRUE(r.transverse_uniform) << tube->name;
  }
}

}  // namespace
}  // namespace tessera
