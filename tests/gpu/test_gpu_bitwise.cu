// GPU kernels built with --fmad=false: the same operations in the same order as the CPU
// loops, so every output is bitwise equal.
#include "kernel_compare.cuh"
#include "kernels/potential_gather.hpp"

#include <cstring>
#include <random>
#include <vector>

namespace tessera::kernels {
namespace {

TEST(GpuKernelsNoFma, BitwiseEqualToCpuForEveryScheme) {
  for (const Case& s : all_schemes())
    EXPECT_EQ(compare_with_cpu(s, 12, 101 + scheme_seed(s)), 0.0) << case_name(s);
}

// The floor and bad-cell paths: near-vacuum slabs below both floors and one non-finite
// cell in each of 3 groups, for every scheme. The GPU must give every output bit for bit,
// floor the same number of cells per group and report the same first bad cell; the CPU
// must actually floor and find the bad cells, or the comparison would be 0 against 0.
TEST(GpuKernelsNoFma, FloorsAndBadCellsBitwiseEqualToCpu) {
  for (const Case& s : all_schemes()) {
    ExtremeCounts counts;
    EXPECT_EQ(compare_with_cpu(s, 12, 307 + scheme_seed(s), &counts), 0.0) << case_name(s);
    std::printf("%s: %lld floored cells, %d groups with a bad cell\n", case_name(s).c_str(),
                counts.floored, counts.bad_groups);
    EXPECT_GT(counts.floored, 0);
    EXPECT_EQ(counts.bad_groups, 3);  // groups 3, 7 and 11
  }
}

// First-order flux correction: the detecting pass flags (and does not floor) the cells of
// the extreme cases that the step leaves unphysical, non-finite ones included; the
// correcting pass takes first-order fluxes on the faces of flagged cells. Every output
// bit for bit, the same cells flagged and floored per group.
TEST(GpuKernelsNoFma, FirstOrderFluxCorrectionBitwiseEqualToCpu) {
  for (const Case& s : all_schemes()) {
    ExtremeCounts detect, correct;
    EXPECT_EQ(compare_with_cpu(s, 12, 409 + scheme_seed(s), &detect, FofcMode::kDetect), 0.0)
        << case_name(s);
    EXPECT_GT(detect.flagged, 0) << case_name(s);
    EXPECT_EQ(detect.bad_groups, 0) << case_name(s);  // flagged instead
    EXPECT_EQ(compare_with_cpu(s, 12, 509 + scheme_seed(s), &correct, FofcMode::kCorrect), 0.0)
        << case_name(s);
  }
}

// The relaxing-TVD solver: both physics (isothermal with a scalar), every flux limiter,
// forward and backward sweeps, with floors and bad cells.
TEST(GpuKernelsNoFma, RelaxingTvdBitwiseEqualToCpu) {
  int seed = 500;
  for (auto ph : {Physics::kAdiabatic, Physics::kIsothermal})
    for (auto lim :
         {TvdLimiter::kVanLeer, TvdLimiter::kMinmod, TvdLimiter::kMc, TvdLimiter::kSuperbee})
      for (bool forward : {true, false}) {
        const Case cs{{Reconstruction::kPlmMc, RiemannSolver::kHll, Integrator::kRk2, ph},
                      ph == Physics::kIsothermal ? 1 : 0};
        const std::string what = case_name(cs) + " limiter " + std::to_string(int(lim)) +
                                 (forward ? " forward" : " backward");
        EXPECT_EQ(compare_rtvd_with_cpu(cs, lim, forward, 8, ++seed), 0.0) << what;
        ExtremeCounts counts;
        EXPECT_EQ(compare_rtvd_with_cpu(cs, lim, forward, 8, ++seed, &counts), 0.0) << what;
        EXPECT_GT(counts.floored, 0) << what;
        EXPECT_EQ(counts.bad_groups, 2) << what;  // groups 3 and 7
      }
}

// The potential box's continuation passes (kernels/potential_gather.hpp) on the device, one
// thread per cell with a barrier between passes as parent_box makes them, against the host.
__global__ void continue_box(Real* boxes, const PotentialBoxPlace* places, int serial) {
  __shared__ Real box[kPotentialBoxCells];
  Real* out = boxes + std::size_t(blockIdx.x) * kPotentialBoxCells;
  const PotentialBoxPlace& p = places[blockIdx.x];
  constexpr int n = kPotentialBox;
  for (int c = threadIdx.x; c < kPotentialBoxCells; c += blockDim.x) box[c] = out[c];
  __syncthreads();
  if (serial) {
    if (threadIdx.x == 0)
      for (int d = 0; d < 3; ++d)
        for (int c = 0; c < kPotentialBoxCells; ++c)
          continue_potential_cell(box, p, d, c % n, (c / n) % n, c / (n * n));
  } else {
    for (int d = 0; d < 3; ++d) {
      for (int c = threadIdx.x; c < kPotentialBoxCells; c += blockDim.x)
        continue_potential_cell(box, p, d, c % n, (c / n) % n, c / (n * n));
      __syncthreads();
    }
  }
  __syncthreads();
  for (int c = threadIdx.x; c < kPotentialBoxCells; c += blockDim.x) out[c] = box[c];
}

TEST(GpuKernelsNoFma, PotentialBoxContinuationEqualsTheHost) {
  std::vector<PotentialBoxPlace> places;
  const int corners[] = {0, 8, 40, 88};
  for (const int cells : {48, 96})
    for (const int c0 : corners)
      for (const int c1 : corners)
        for (const bool per : {false, true}) {
          if (c0 + 8 > cells || c1 + 8 > cells) continue;
          PotentialBoxPlace p{};
          p.corner[0] = c0;
          p.corner[1] = c1;
          p.corner[2] = cells - 8;
          for (int d = 0; d < 3; ++d) p.cells[d] = cells;
          p.periodic[0] = per;
          places.push_back(p);
        }
  const std::size_t n = places.size() * kPotentialBoxCells;
  std::vector<Real> host(n);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  for (Real& x : host) x = Real(u(rng));
  const std::vector<Real> start = host;
  for (std::size_t b = 0; b < places.size(); ++b)
    for (int d = 0; d < 3; ++d)
      for (int c = 0; c < kPotentialBoxCells; ++c)
        continue_potential_cell(host.data() + b * kPotentialBoxCells, places[b], d,
                                c % kPotentialBox, (c / kPotentialBox) % kPotentialBox,
                                c / (kPotentialBox * kPotentialBox));
  EXPECT_NE(host, start);  // the passes continued something
  Real* d_boxes = nullptr;
  PotentialBoxPlace* d_places = nullptr;
  ASSERT_EQ(cudaMalloc(&d_boxes, n * sizeof(Real)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_places, places.size() * sizeof(PotentialBoxPlace)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_places, places.data(), places.size() * sizeof(PotentialBoxPlace),
                       cudaMemcpyHostToDevice),
            cudaSuccess);
  for (const int serial : {0, 1}) {
    ASSERT_EQ(cudaMemcpy(d_boxes, start.data(), n * sizeof(Real), cudaMemcpyHostToDevice),
              cudaSuccess);
    continue_box<<<static_cast<int>(places.size()), 256>>>(d_boxes, d_places, serial);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    std::vector<Real> got(n);
    ASSERT_EQ(cudaMemcpy(got.data(), d_boxes, n * sizeof(Real), cudaMemcpyDeviceToHost),
              cudaSuccess);
    long long differ = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (std::memcmp(&got[i], &host[i], sizeof(Real)) == 0) continue;
      if (differ++ < 6) {
        const auto& p = places[i / kPotentialBoxCells];
        const int c = static_cast<int>(i % kPotentialBoxCells);
        ADD_FAILURE() << (serial ? "serial" : "parallel") << ": corner " << p.corner[0] << " "
                      << p.corner[1] << " " << p.corner[2] << " cells " << p.cells[0]
                      << " periodic x " << p.periodic[0] << ", cell " << c % kPotentialBox << " "
                      << c / kPotentialBox % kPotentialBox << " "
                      << c / (kPotentialBox * kPotentialBox) << ": host " << host[i] << ", device "
                      << got[i] << ", start " << start[i];
      }
    }
    EXPECT_EQ(differ, 0) << (serial ? "serial" : "parallel");
  }
  cudaFree(d_boxes);
  cudaFree(d_places);
}

}  // namespace
}  // namespace tessera::kernels
