// Linear sound wave along the box diagonal, one period, at 32^3 and 64^3.
//
// The exact solution after one period is the initial wave; the test evaluates its cell
// averages itself (3-point Gauss-Legendre per dimension). Required: L1 order >= 1.8 with
// rk2. TVD limiters clip the slope at extrema, which lowers the order somewhat below 2 at
// these resolutions (GAMER reports the same); measured values per limiter are in
// docs/validation.md. With vl2 the same limiter measures order 1.99: required >= 1.9.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "run_problem.hpp"

namespace tessera {
namespace {

// L1 density error relative to the wave amplitude, after one period (the parameter
// file's run.t_end) or half of one.
double acoustic_l1(int n, const std::string& integrator, bool half_period = false,
                   const std::string& recon = "plm") {
  const std::string nx = std::to_string(n);
  std::vector<std::string> ov = {"mesh.nx=[" + nx + "," + nx + "," + nx + "]"};
  if (integrator == "relaxing_tvd")  // that scheme at the Courant number it is used with
    ov.insert(ov.end(), {"hydro.scheme=relaxing_tvd", "hydro.cfl=0.8", "hydro.tvd_limiter=mc"});
  else
    ov.insert(ov.end(), {"hydro.integrator=" + integrator, "hydro.reconstruction=" + recon});
  if (half_period) ov.push_back("run.t_end=" + std::to_string(0.5 / std::sqrt(3.0)));
  auto sim = testing::run_problem("acoustic_wave/acoustic_wave.toml", ov);
  const auto& p = sim->params();
  const double rho0 = p.real("problem.rho0"), amp = p.real("problem.amplitude");
  const double c = std::sqrt(p.real("hydro.gamma") * p.real("problem.p0") / rho0);
  const double k = 2 * M_PI, kmag = k * std::sqrt(3.0), t = sim->time();
  const double node[3] = {-std::sqrt(0.6), 0, std::sqrt(0.6)};
  const double weight[3] = {5.0 / 18, 8.0 / 18, 5.0 / 18};
  double err = 0;
  long cells = 0;
  testing::for_each_cell(*sim, [&](std::array<double, 3> x, double h, const double* u) {
    double avg = 0;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b)
        for (int e = 0; e < 3; ++e) {
          const double phase =
              k * (x[0] + 0.5 * h * node[a] + x[1] + 0.5 * h * node[b] + x[2] + 0.5 * h * node[e]) -
              c * kmag * t;
          avg += weight[a] * weight[b] * weight[e] * rho0 * (1 + amp * std::sin(phase));
        }
    err += std::fabs(u[0] - avg);
    ++cells;
  });
  return err / cells / amp;
}

// Order from 32^3 to 64^3 at least min_order; error at 64^3 below max_e64. After a whole
// period a wave that never moved is exact, so the error is also measured after half a
// period (32^3), where the exact wave is the initial one inverted: a frozen wave has
// L1/A = 4/pi there, a propagating one its truncation error, below max_half.
void check_acoustic(const std::string& integrator, double min_order, double max_e64,
                    double max_half, const std::string& recon = "plm") {
  const double e32 = acoustic_l1(32, integrator, false, recon);
  const double e64 = acoustic_l1(64, integrator, false, recon);
  const double half = acoustic_l1(32, integrator, true, recon);
  const double order = std::log2(e32 / e64);
  std::printf(
      "acoustic wave (%s, %s): L1/A (32^3) = %.4e, L1/A (64^3) = %.4e, order = %.3f; half a "
      "period, 32^3: L1/A = %.4e\n",
      integrator.c_str(), recon.c_str(), e32, e64, order, half);
  EXPECT_GE(order, min_order);
  EXPECT_LT(e64, max_e64);
  EXPECT_LT(half, max_half);
}

// rk2 measured L1/A 1.111e-2 at 64^3 (van Leer limiter; minmod's 3.3e-2 would fail, as
// it should: the parameter file asks for van Leer), 2.24e-2 after half a period at
// 32^3; bounds about 1.5x.
TEST(AcousticWaveRegression, SecondOrderConvergence) {
  check_acoustic("rk2", 1.8, 0.0167, 0.034);
}

// vl2 measured 6.42e-3 at 64^3, 1.45e-2 after half a period at 32^3.
TEST(AcousticWaveRegression, Vl2SecondOrderConvergence) {
  check_acoustic("vl2", 1.9, 0.0096, 0.022);
}

// The relaxing-TVD scheme (cfl 0.8) with the MC flux limiter measured L1/A 5.56e-3 at 64^3,
// order 2.04, 1.24e-2 after half a period: bounds 1.9, 8.3e-3 and 1.9e-2. Its default van
// Leer limiter measures order 1.80 (1.08e-2 at 64^3), minmod 1.24; with the freezing
// speed |v_d| + c_s unsmoothed (kernels/relaxing_tvd.hpp) MC gave 1.71.
// PPM (hydro.reconstruction = "ppm"; its limiter keeps smooth extrema): rk2 measured
// L1/A 1.718e-3 at 64^3 (6.5 times below PLM's 1.111e-2), order 1.955, 3.317e-3 after half
// a period; vl2, whose predictor takes the mc_ep slopes with PPM, 1.708e-3 (PLM 6.42e-3;
// with a donor-cell predictor 4.057e-3), order 1.929, 3.237e-3. Bounds about 1.5x.
TEST(AcousticWaveRegression, PpmSecondOrderConvergence) {
  check_acoustic("rk2", 1.9, 2.6e-3, 5e-3, "ppm");
}

TEST(AcousticWaveRegression, Vl2PpmSecondOrderConvergence) {
  check_acoustic("vl2", 1.9, 2.6e-3, 5e-3, "ppm");
}

TEST(AcousticWaveRegression, RelaxingTvdSecondOrderConvergence) {
  check_acoustic("relaxing_tvd", 1.9, 8.3e-3, 1.9e-2);
}

}  // namespace
}  // namespace tessera
