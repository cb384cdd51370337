// Linear sound wave along the box diagonal, one period, at 32^3 and 64^3.
//
// The exact solution after one period is the initial wave; the test evaluates its cell
// averages itself (3-point Gauss-Legendre per dimension). Required: L1 order >= 1.8 with
// rk2. TVD limiters clip the slope at extrema, which lowers the order somewhat below 2 at
// these resolutions (GAMER reports the same); measured values per limiter are in
// docs/validation.md. With vl2 the same limiter measures order 1.99: required >= 1.9.
#include <gtest/gtest.h>

#include <cmath>

#include "run_problem.hpp"

namespace tessera {
namespace {

// L1 density error relative to the wave amplitude.
double acoustic_l1(int n, const std::string& integrator) {
  const std::string nx = std::to_string(n);
  auto sim = testing::run_problem(
      "acoustic_wave/acoustic_wave.toml",
      {"mesh.nx=[" + nx + "," + nx + "," + nx + "]", "hydro.integrator=" + integrator});
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

// Order from 32^3 to 64^3 at least min_order.
void check_acoustic(const std::string& integrator, double min_order) {
  const double e32 = acoustic_l1(32, integrator), e64 = acoustic_l1(64, integrator);
  const double order = std::log2(e32 / e64);
  std::printf("acoustic wave (%s): L1/A (32^3) = %.4e, L1/A (64^3) = %.4e, order = %.3f\n",
              integrator.c_str(), e32, e64, order);
  EXPECT_GE(order, min_order);
  // The error must be a small fraction of the amplitude: the wave really propagated.
  EXPECT_LT(e64, 0.05);
}

TEST(AcousticWaveRegression, SecondOrderConvergence) {
  check_acoustic("rk2", 1.8);
}

TEST(AcousticWaveRegression, Vl2SecondOrderConvergence) {
  check_acoustic("vl2", 1.9);
}

}  // namespace
}  // namespace tessera
