// The root-level Poisson solve with cuFFT against FFTW (gravity/fft_poisson.hpp): the
// same multipliers and transforms, so the potentials agree to round-off, ghost layer
// included, for periodic and isolated boundaries on an asymmetric grid; and the cuFFT solve
// is repeatable bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "tessera/gravity/fft_poisson.hpp"

namespace tessera::gravity {
namespace {

double max_relative_difference(bool periodic) {
  const std::array<int, 3> n = {48, 32, 16};
  const double h = 0.05, four_pi_g = 4 * 3.141592653589793 * 0.8;
  std::mt19937_64 rng(periodic ? 21 : 22);
  std::uniform_real_distribution<double> u(0.2, 3.0);
  std::vector<double> rho(std::size_t(n[0]) * n[1] * n[2]);
  for (double& r : rho) r = u(rng);
  const std::size_t ghosted = std::size_t(n[0] + 2) * (n[1] + 2) * (n[2] + 2);
  std::vector<double> cpu(ghosted), gpu(ghosted), again(ghosted);
  const double mean_cpu =
      make_fftw_poisson(n, h, periodic)->solve(rho.data(), four_pi_g, cpu.data());
  auto solver = make_cufft_poisson(n, h, periodic);
  const double mean_gpu = solver->solve(rho.data(), four_pi_g, gpu.data());
  solver->solve(rho.data(), four_pi_g, again.data());
  EXPECT_EQ(mean_cpu, mean_gpu);
  EXPECT_TRUE(gpu == again) << "two cuFFT solves of the same density differ";
  EXPECT_GT(solver->last_device_seconds(), 0.0);
  double worst = 0, scale = 0;
  for (std::size_t c = 0; c < ghosted; ++c) {
    worst = std::max(worst, std::fabs(gpu[c] - cpu[c]));
    scale = std::max(scale, std::fabs(cpu[c]));
  }
  EXPECT_GT(scale, 0.0);
  return worst / scale;
}

TEST(GpuPoisson, CufftAgreesWithFftwPeriodic) {
  const double d = max_relative_difference(true);
  std::printf("periodic: max |cuFFT - FFTW| / max |phi| = %.3e\n", d);
  EXPECT_LT(d, 1e-12);
}

TEST(GpuPoisson, CufftAgreesWithFftwIsolated) {
  const double d = max_relative_difference(false);
  std::printf("isolated: max |cuFFT - FFTW| / max |phi| = %.3e\n", d);
  EXPECT_LT(d, 1e-12);
}

}  // namespace
}  // namespace tessera::gravity
