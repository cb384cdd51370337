// The root-level Poisson solve with cuFFT against FFTW (gravity/fft_poisson.hpp): the
// same multipliers and transforms, so the potentials agree to round-off, ghost layer
// included, for periodic and isolated boundaries on an asymmetric grid, both for the slab
// passes of the runs (make_cufft_poisson) and cuFFT's 3D plans (make_cufft3d_poisson); the
// cuFFT solve is repeatable bit for bit; and the slab solve on the GPUs of 2, 3, 4 and 7
// ranks has the bits of one GPU's.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <cstring>
#include <numbers>

#include "tessera/gravity/fft_poisson.hpp"
#include "tessera/gravity/sor_solver.hpp"
#include "tessera/parallel/virtual_ranks.hpp"

namespace tessera::gravity {
namespace {

double max_relative_difference(bool periodic, bool plans3d = false) {
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
  auto solver = plans3d ? make_cufft3d_poisson(n, h, periodic) : make_cufft_poisson(n, h, periodic);
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

TEST(GpuPoisson, Cufft3dPlansAgreeWithFftw) {
  for (const bool periodic : {true, false}) {
    const double d = max_relative_difference(periodic, true);
    std::printf("%s, 3D plans: max |cuFFT - FFTW| / max |phi| = %.3e\n",
                periodic ? "periodic" : "isolated", d);
    EXPECT_LT(d, 1e-12);
  }
}

// The ghosted potential of a GPU SlabPoisson over `comm`, every rank giving its planes.
std::vector<double> gpu_slab_solve(const std::array<int, 3>& n, bool periodic,
                                   const std::vector<double>& rho, parallel::Comm& comm,
                                   double* mean) {
  SlabPoisson solver(n, 0.1, periodic, comm, true);
  EXPECT_STREQ(solver.library(), "cuFFT");
  const std::size_t plane = std::size_t(n[0]) * n[1];
  const std::vector<double> mine(rho.begin() + solver.first_plane() * plane,
                                 rho.begin() + (solver.first_plane() + solver.planes()) * plane);
  *mean = solver.solve(mine.data(), 4 * std::numbers::pi);
  std::vector<double> phi(std::size_t(n[0] + 2) * (n[1] + 2) * (n[2] + 2));
  solver.gather_ghosted(phi.data());
  return phi;
}

void expect_gpu_slabs_rank_independent(bool periodic) {
  // Three different lengths (a transposed axis or a misplaced piece fails), and 7 ranks for
  // 6 planes (some ranks hold no plane or no row).
  const std::array<int, 3> n = {10, 12, 6};
  std::mt19937_64 rng(periodic ? 5 : 6);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  std::vector<double> rho(std::size_t(n[0]) * n[1] * n[2]);
  for (double& r : rho) r = u(rng);
  parallel::SerialComm one;
  double mean1 = 0;
  const auto serial = gpu_slab_solve(n, periodic, rho, one, &mean1);
  for (const int ranks : {2, 3, 4, 7}) {
    parallel::VirtualRanks vr(ranks);
    std::vector<std::vector<double>> got(ranks);
    std::vector<double> means(ranks);
    vr.run([&](parallel::Comm& comm) {
      got[comm.rank()] = gpu_slab_solve(n, periodic, rho, comm, &means[comm.rank()]);
    });
    for (int r = 0; r < ranks; ++r) {
      EXPECT_TRUE(got[r] == serial &&
                  std::memcmp(got[r].data(), serial.data(), serial.size() * 8) == 0)
          << ranks << " ranks, rank " << r;
      EXPECT_EQ(std::memcmp(&means[r], &mean1, sizeof(double)), 0) << ranks << " ranks";
    }
  }
  // The whole-grid solver of one GPU is the same solve; FFTW's agrees to round-off.
  std::vector<double> whole(serial.size()), fftw(serial.size());
  make_cufft_poisson(n, 0.1, periodic)->solve(rho.data(), 4 * std::numbers::pi, whole.data());
  EXPECT_EQ(std::memcmp(whole.data(), serial.data(), serial.size() * 8), 0);
  make_fftw_poisson(n, 0.1, periodic)->solve(rho.data(), 4 * std::numbers::pi, fftw.data());
  double worst = 0, scale = 0;
  for (std::size_t c = 0; c < fftw.size(); ++c) {
    worst = std::max(worst, std::fabs(serial[c] - fftw[c]));
    scale = std::max(scale, std::fabs(fftw[c]));
  }
  EXPECT_LT(worst, 1e-12 * scale);
}

TEST(GpuSlabPoisson, PeriodicSolveHasTheBitsOfOneGpuOnAnyRankCount) {
  expect_gpu_slabs_rank_independent(true);
}

TEST(GpuSlabPoisson, IsolatedSolveHasTheBitsOfOneGpuOnAnyRankCount) {
  expect_gpu_slabs_rank_independent(false);
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
