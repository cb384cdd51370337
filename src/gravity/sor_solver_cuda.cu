// The device solve of SorSolver: one thread block per patch group, the group's potential
// box (18^3) in shared memory for all the iterations and each thread's sources in
// registers (Schive et al. 2010 §3.2 keep half of the cells in registers to fit the 16 KB
// of shared memory of their GPUs; 47 KB in double precision fit today's in full). A
// colour's 2048 cells are spread over 256 threads, 8 each, in the order the host sweeps
// them; the residual sums are reduced over the block after each iteration.
#include <cuda_runtime.h>

#include "kernels/poisson_sor.hpp"
#include "tessera/core/error.hpp"
#include "tessera/gravity/sor_solver.hpp"

namespace tessera::gravity {

namespace {

constexpr int kThreads = 256;
constexpr int kPerThread = kernels::kGroupCells / 2 / kThreads;  // cells of a colour: 8
constexpr int kBox = kernels::kSorBox;
constexpr int kBox3 = kBox * kBox * kBox;
constexpr int kG = kernels::kGroupSize;

// Cell m of a thread's share of colour c: cells of one colour in (k, j, i) order, 128 per
// plane, 8 per row.
__device__ inline void colour_cell(int c, int t, int& i, int& j, int& k) {
  k = t / (kG * kG / 2);
  j = (t / (kG / 2)) % kG;
  i = 2 * (t % (kG / 2)) + ((j + k + c) & 1);
}

// Sum over the block of a and b (thread 0 gets them).
__device__ inline void block_sum2(Real& a, Real& b, Real (*scratch)[kThreads / 32]) {
  for (int o = 16; o > 0; o /= 2) {
    a += __shfl_down_sync(0xffffffffu, a, o);
    b += __shfl_down_sync(0xffffffffu, b, o);
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) scratch[0][warp] = a, scratch[1][warp] = b;
  __syncthreads();
  if (threadIdx.x == 0) {
    a = 0, b = 0;
    for (int w = 0; w < kThreads / 32; ++w) a += scratch[0][w], b += scratch[1][w];
  }
}

__global__ void __launch_bounds__(kThreads)
    sor_kernel(const Real* in, Real* out, kernels::GroupResult* results, kernels::SorParams p) {
  __shared__ Real phi[kBox3];
  __shared__ Real sums[2][kThreads / 32];
  __shared__ int done;
  const int tid = threadIdx.x;
  const Real* box = in + std::size_t(blockIdx.x) * 2 * kBox3;
  for (int c = tid; c < kBox3; c += kThreads) phi[c] = box[kBox3 + c];
  Real src[2][kPerThread];
  Real norm = 0, unused = 0;
  for (int c = 0; c < 2; ++c)
    for (int m = 0; m < kPerThread; ++m) {
      int i, j, k;
      colour_cell(c, tid + m * kThreads, i, j, k);
      src[c][m] = p.source_scale * (box[((k + 1) * kBox + (j + 1)) * kBox + (i + 1)] - p.mean);
      norm += src[c][m] < 0 ? -src[c][m] : src[c][m];
    }
  block_sum2(norm, unused, sums);
  if (tid == 0) done = 0;
  __syncthreads();
  int it = 1;
  for (; it <= p.max_iterations; ++it) {
    Real residual = 0, size = 0;
    for (int c = 0; c < 2; ++c) {
      for (int m = 0; m < kPerThread; ++m) {
        int i, j, k;
        colour_cell(c, tid + m * kThreads, i, j, k);
        residual += kernels::sor_cell(phi, src[c][m], i, j, k, p.omega, &size);
      }
      __syncthreads();
    }
    block_sum2(residual, size, sums);
    if (tid == 0) done = kernels::sor_converged(residual, norm, size, p.tolerance);
    __syncthreads();
    if (done) break;
    __syncthreads();  // `done` and `sums` are rewritten by the next iteration
  }
  Real* o = out + std::size_t(blockIdx.x) * kernels::kGroupCells;
  for (int c = tid; c < kernels::kGroupCells; c += kThreads) {
    const int i = c % kG, j = (c / kG) % kG, k = c / (kG * kG);
    o[c] = phi[((k + 1) * kBox + (j + 1)) * kBox + (i + 1)];
  }
  if (tid == 0)
    results[blockIdx.x] = {Real(0), 0, -1, done ? it : p.max_iterations, done ? 0 : 1, 0};
}

}  // namespace

void SorSolver::solve_device(const exec::DeviceBatch& b, void* stream) const {
  if (b.count == 0) return;
  sor_kernel<<<b.count, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(b.in, b.out, b.results,
                                                                          params_);
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw Error(ErrorKind::kInternal,
                std::string("SOR kernel launch failed: ") + cudaGetErrorString(e));
}

}  // namespace tessera::gravity
