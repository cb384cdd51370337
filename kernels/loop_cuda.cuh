// CUDA loop backend of the integrators (mol_stages.hpp): each operation is one kernel
// launch over a batch of patch groups, one thread per cell, on one stream. Box-wide
// kernels give each group kThreads threads: N^3 rounded up to whole blocks, so that a
// block never straddles two groups (24^3 is 54 blocks exactly; 22^3 takes 42, the last
// one partly idle).
#pragma once

#include <climits>

#include "kernels/mol_stages.hpp"
#include "kernels/relaxing_tvd.hpp"

namespace tessera::kernels {
namespace {

constexpr int kCuThreads = 256;
static_assert(kGroupCells % kCuThreads == 0, "a thread block must not straddle two groups");

template <int G>
struct CuBox {
  static constexpr int kN = box_size(G);
  static constexpr int kN3 = box_cells(G);
  static constexpr int kBlocks = (kN3 + kCuThreads - 1) / kCuThreads;
  static constexpr int kThreads = kBlocks * kCuThreads;
};

// Group and box cell (i, j, k) of a thread of a box-wide kernel; false for the padding.
template <int G>
__device__ inline bool box_thread(int count, int& g, int pos[3]) {
  using B = CuBox<G>;
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  g = t / B::kThreads;
  const int c = t % B::kThreads;
  pos[0] = c % B::kN, pos[1] = (c / B::kN) % B::kN, pos[2] = c / (B::kN * B::kN);
  return g < count && c < B::kN3;
}

template <class Op>
__global__ void box_kernel(Op op, int count, int lo, int hi) {
  int g, p[3];
  if (!box_thread<Op::kGhost>(count, g, p)) return;
  if (p[0] < lo || p[0] >= hi || p[1] < lo || p[1] >= hi || p[2] < lo || p[2] >= hi) return;
  op(g, p[0], p[1], p[2]);
}

// The cells [lo, hi) of each dimension of every group's box (relaxing_tvd.hpp).
template <class Op>
__global__ void range_kernel(Op op, int count, Range3 r) {
  int g, p[3];
  if (!box_thread<Op::kGhost>(count, g, p)) return;
  for (int d = 0; d < 3; ++d)
    if (p[d] < r.lo[d] || p[d] >= r.hi[d]) return;
  op(g, p[0], p[1], p[2]);
}

// The faces of one direction, known at compile time: the strides and the rotation of the
// vector components become constants, and a thread holds one face's registers, not the
// largest of three (the flux kernels are latency-bound for lack of warps; MHD's HLLD
// needs the most registers of all). One launch per direction.
template <int Dir, class Op>
__global__ void faces_kernel(Op op, int count, int lo, int hi) {
  int g, p[3];
  if (!box_thread<Op::kGhost>(count, g, p)) return;
  for (int d = 0; d < 3; ++d)
    if (p[d] < lo || p[d] >= hi + (d == Dir ? 1 : 0)) return;
  op(g, p[0], p[1], p[2], Dir);
}

__device__ inline void atomic_max_nonneg(Real* address, Real value) {
  // Non-negative IEEE values order like their bit patterns.
  if constexpr (sizeof(Real) == 8)
    atomicMax(reinterpret_cast<unsigned long long*>(address),
              static_cast<unsigned long long>(__double_as_longlong(value)));
  else
    atomicMax(reinterpret_cast<unsigned int*>(address), __float_as_uint(value));
}

__global__ void init_results_kernel(GroupResult* results, int count) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g < count) results[g] = {Real(0), 0, INT_MAX, 0, 0, 0};
}

// One thread per interior cell; the group's results by atomics (bad_cell: the lowest
// index, INT_MAX for none, which the executor maps to -1).
template <class Op>
__global__ void interior_kernel(Op op, int count, GroupResult* results) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int g = t / kGroupCells, cell = t % kGroupCells;
  if (g >= count) return;
  const int i = cell % kGroupSize, j = (cell / kGroupSize) % kGroupSize;
  const int k = cell / (kGroupSize * kGroupSize);
  const CellOutcome o = op(g, i, j, k);
  GroupResult& r = results[g];
  if (o.floor == FloorResult::kFloored) atomicAdd(&r.floored, 1);
  if (o.floor == FloorResult::kFlagged) atomicAdd(&r.flagged, 1);
  if (o.floor == FloorResult::kUnphysical)
    atomicMin(&r.bad_cell, cell);
  else
    atomic_max_nonneg(&r.max_speed, o.speed);
}

struct CudaLoop {
  int count;
  cudaStream_t stream;

  template <class Op>
  void box(int lo, int hi, const Op& op) const {
    box_kernel<<<count * CuBox<Op::kGhost>::kBlocks, kCuThreads, 0, stream>>>(op, count, lo, hi);
  }
  template <class Op>
  void range(const Range3& r, const Op& op) const {
    range_kernel<<<count * CuBox<Op::kGhost>::kBlocks, kCuThreads, 0, stream>>>(op, count, r);
  }
  template <class Op>
  void faces(int lo, int hi, const Op& op) const {
    const int blocks = count * CuBox<Op::kGhost>::kBlocks;
    faces_kernel<0><<<blocks, kCuThreads, 0, stream>>>(op, count, lo, hi);
    faces_kernel<1><<<blocks, kCuThreads, 0, stream>>>(op, count, lo, hi);
    faces_kernel<2><<<blocks, kCuThreads, 0, stream>>>(op, count, lo, hi);
  }
  template <class Op>
  void interior(const Op& op, GroupResult* results) const {
    init_results_kernel<<<(count + 127) / 128, 128, 0, stream>>>(results, count);
    interior_kernel<<<count*(kGroupCells / kCuThreads), kCuThreads, 0, stream>>>(op, count,
                                                                                 results);
  }
};

}  // namespace
}  // namespace tessera::kernels
