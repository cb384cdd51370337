// The root-level Poisson solve with cuFFT against FFTW (gravity/fft_poisson.hpp): the
// same multipliers and transforms, so the potentials agree to round-off, ghost layer
// included, for periodic and isolated boundaries on an asymmetric grid; and the cuFFT solve
// is repeatable bit for bit.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "tessera/gravity/fft_poisson.hpp"
#include "tessera/gravity/sor_solver.hpp"

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

namespace tessera::gravity {
namespace {

// The refined levels' SOR kernel (one block per patch group) against the host relaxation
// on random groups: the same updates in the same colour order, so the potentials agree to
// round-off (fused multiply-adds and the order of the residual sums may stop a group one
// sweep apart, which the tolerance bounds), with the same iteration counts within one.
TEST(GpuPoisson, SorKernelAgreesWithTheHostRelaxation) {
  constexpr int groups = 37;
  constexpr std::size_t in_reals = 2 * std::size_t(kernels::box_cells(1));
  std::mt19937_64 rng(31);
  std::uniform_real_distribution<double> u(0.1, 2.0), g(-1.0, 1.0);
  std::vector<Real> in(groups * in_reals);
  for (int b = 0; b < groups; ++b) {
    Real* box = in.data() + b * in_reals;
    for (int c = 0; c < kernels::box_cells(1); ++c) {
      box[c] = Real(u(rng));
      box[kernels::box_cells(1) + c] = Real(-3 + 0.1 * g(rng));
    }
  }
  kernels::SorParams p;
  p.tolerance = Real(1e-12);
  SorSolver solver(p);
  solver.set_level(Real(0.01), Real(0.5));
  std::vector<Real> host(groups * kernels::kGroupCells), dev(groups * kernels::kGroupCells);
  std::vector<kernels::GroupResult> host_r(groups), dev_r(groups);
  std::vector<Real> scratch(solver.host_scratch_reals());
  for (int b = 0; b < groups; ++b)
    solver.solve_host(in.data() + b * in_reals, host.data() + b * kernels::kGroupCells, nullptr,
                      &host_r[b], scratch.data());
  Real *d_in, *d_out;
  kernels::GroupResult* d_r;
  ASSERT_EQ(cudaMalloc(&d_in, in.size() * sizeof(Real)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_out, dev.size() * sizeof(Real)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_r, groups * sizeof(kernels::GroupResult)), cudaSuccess);
  cudaMemcpy(d_in, in.data(), in.size() * sizeof(Real), cudaMemcpyHostToDevice);
  solver.solve_device({d_in, d_out, nullptr, d_r, nullptr, groups}, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cudaMemcpy(dev.data(), d_out, dev.size() * sizeof(Real), cudaMemcpyDeviceToHost);
  cudaMemcpy(dev_r.data(), d_r, groups * sizeof(kernels::GroupResult), cudaMemcpyDeviceToHost);
  cudaFree(d_in), cudaFree(d_out), cudaFree(d_r);
  double worst = 0;
  for (std::size_t c = 0; c < host.size(); ++c)
    worst = std::max(worst, std::fabs(double(dev[c]) - double(host[c])));
  int most_apart = 0, iterations = 0;
  for (int b = 0; b < groups; ++b) {
    EXPECT_EQ(dev_r[b].unconverged, 0);
    most_apart = std::max(most_apart, std::abs(dev_r[b].iterations - host_r[b].iterations));
    iterations += host_r[b].iterations;
  }
  std::printf(
      "SOR kernel vs host: max |difference| %.3e, %.1f iterations per group, "
      "iteration counts at most %d apart\n",
      worst, double(iterations) / groups, most_apart);
  EXPECT_LT(worst, 1e-10);
  EXPECT_LE(most_apart, 1);
}

}  // namespace
}  // namespace tessera::gravity
