// The relaxing-TVD group solver on a GPU (relaxing_tvd.hpp). Included by the solver's
// device file and by the GPU tests.
//
// Each sweep is one kernel, after seed 001 §3.1: a thread block holds a few columns of
// the group along the sweep's direction, one thread per cell of a column (22), and keeps
// the column's relaxed fluxes in shared memory through the three steps of the sweep, so
// that the state is read once and written once per sweep (the generic loop backend runs
// the steps as three kernels with the fluxes in global scratch). The arithmetic is that of
// RtvdCellFluxes, RtvdHalfStep and RtvdFullStep, operation for operation, so that with
// --fmad=false the result equals the CPU's bit for bit (tests/gpu).
#pragma once

#include <algorithm>

#include "kernels/loop_cuda.cuh"
#include "kernels/relaxing_tvd.hpp"

namespace tessera::kernels {
namespace {

// Columns along Dir of the range r (the sweep's cells), blockDim = (N, columns per block).
// Shared memory: F^R, F^L, F^R_half, F^L_half of every variable of the block's columns,
// [array][var][column][cell].
template <class Phys, class Limiter, int Dir>
__global__ void rtvd_sweep_kernel(RtvdArrays a, typename Phys::Params p, Real coef, const Real* src,
                                  Range3 r, bool floors, bool first) {
  extern __shared__ unsigned char rtvd_smem[];
  constexpr int N = RtvdBox::kN, n3 = RtvdBox::kN3, G = kGhostRtvd;
  constexpr int da = Dir == 0 ? 1 : 0, db = Dir == 2 ? 1 : 2;  // the transverse dimensions
  const int na = r.hi[da] - r.lo[da], nb = r.hi[db] - r.lo[db];
  const int per_block = blockDim.y;
  const int blocks_per_group = (na * nb + per_block - 1) / per_block;
  const int g = blockIdx.x / blocks_per_group;
  const int col = (blockIdx.x % blocks_per_group) * per_block + threadIdx.y;
  const int i = threadIdx.x;
  const bool active = col < na * nb && g < a.count;
  const int nvar = a.nvar;
  const int vs = per_block * N;  // distance between variables in shared memory
  Real* fr = reinterpret_cast<Real*>(rtvd_smem);
  Real* fl = fr + nvar * vs;
  Real* frh = fl + nvar * vs;
  Real* flh = frh + nvar * vs;
  const int sc = threadIdx.y * N + i;  // this cell's slot
  int pos[3];
  pos[Dir] = i;
  pos[da] = r.lo[da] + col % na;
  pos[db] = r.lo[db] + col / na;
  const int c = RtvdBox::index(pos[0], pos[1], pos[2]);
  const std::size_t off = std::size_t(g) * nvar * n3;

  // 1. F^R, F^L of the sweep's input state (RtvdCellFluxes).
  typename Phys::Vars u;
  if (active) {
    u = load_vars<Phys>(src + off, n3, c);
    Real vn, speed;
    relaxed_fluxes<Phys, Dir>(u, fr, fl, sc, vs, p, vn, speed);
    for (int v = Phys::kNumVars; v < nvar; ++v) {
      const Real s = src[off + v * n3 + c];
      fr[v * vs + sc] = Real(0.5) * (speed * s + s * vn);
      fl[v * vs + sc] = Real(0.5) * (speed * s - s * vn);
    }
  }
  __syncthreads();
  // 2. The first-order half step and its F^R, F^L (RtvdHalfStep).
  const Real half_coef = Real(0.5) * coef;
  auto half = [&](Real x, int v) {
    const int at = v * vs + sc;
    return x - half_coef * ((fr[at] - fl[at + 1]) - (fr[at - 1] - fl[at]));
  };
  if (active && i >= 1 && i < N - 1) {
    typename Phys::Vars uh;
    for (int v = 0; v < Phys::kNumVars; ++v) uh[v] = half(u[v], v);
    rtvd_mark(a.marks, std::size_t(g) * n3 + c, Phys::apply_floors(uh, p), first);
    Real vn, speed;
    relaxed_fluxes<Phys, Dir>(uh, frh, flh, sc, vs, p, vn, speed);
    for (int v = Phys::kNumVars; v < nvar; ++v) {
      const Real sh = half(src[off + v * n3 + c], v);
      frh[v * vs + sc] = Real(0.5) * (speed * sh + sh * vn);
      flh[v * vs + sc] = Real(0.5) * (speed * sh - sh * vn);
    }
  }
  __syncthreads();
  // 3. The second-order TVD full step on the interior along Dir (RtvdFullStep).
  if (!active || i < G || i >= G + kGroupSize) return;
  auto face = [&](int at) {  // the low face of slot `at` (variable offset included)
    const Real r0 = frh[at - 1];
    const Real right =
        r0 + Limiter::limit(Real(0.5) * (r0 - frh[at - 2]), Real(0.5) * (frh[at] - r0));
    const Real l0 = flh[at];
    const Real left =
        l0 - Limiter::limit(Real(0.5) * (l0 - flh[at - 1]), Real(0.5) * (flh[at + 1] - l0));
    return right - left;
  };
  const RtvdPlaneSlots<Dir> plane(a.planes, g, nvar, pos);
  typename Phys::Vars un;
  for (int v = 0; v < nvar; ++v) {
    const Real lo = face(v * vs + sc), hi = face(v * vs + sc + 1);
    const Real x = v < Phys::kNumVars ? u[v] : src[off + v * n3 + c];
    const Real nu = x - coef * (hi - lo);
    if (v < Phys::kNumVars)
      un[v] = nu;
    else
      a.u[off + v * n3 + c] = nu;
    if (plane.low) plane.low[v * kFaceCells] = lo;
    if (plane.high) plane.high[v * kFaceCells] = hi;
  }
  if (floors) rtvd_mark(a.marks, std::size_t(g) * n3 + c, Phys::apply_floors(un, p), false);
  store_vars<Phys>(a.u + off, n3, c, un);
}

// The CUDA loops with the fused sweep (relaxing_tvd.hpp's rtvd_sweep takes it).
struct CudaRtvdLoop : CudaLoop {
  static constexpr bool kFusedSweeps = true;

  template <class Phys, class Limiter, int Dir>
  void sweep(const RtvdArrays& a, const RtvdParams& m, const Real* src, Range3 r, bool floors,
             bool first) const {
    constexpr int N = RtvdBox::kN;
    constexpr int da = Dir == 0 ? 1 : 0, db = Dir == 2 ? 1 : 2;
    const int cols = (r.hi[da] - r.lo[da]) * (r.hi[db] - r.lo[db]);
    // Up to 8 columns per block (176 threads), fewer when many scalars would take more
    // than 48 KB of shared memory.
    const int per_var = 4 * N * int(sizeof(Real));
    const int per_block = std::max(1, std::min(8, 48 * 1024 / (per_var * a.nvar)));
    const int blocks = count * ((cols + per_block - 1) / per_block);
    const std::size_t smem = std::size_t(per_var) * a.nvar * per_block;
    rtvd_sweep_kernel<Phys, Limiter, Dir><<<blocks, dim3(N, per_block), smem, stream>>>(
        a, params_of<Phys>(m.phys), m.dt_over_dx, src, r, floors, first);
  }
};

// Enqueues the step of a.count groups on stream s.
inline void launch_rtvd(Physics physics, TvdLimiter limiter, const RtvdArrays& a,
                        const RtvdParams& p, cudaStream_t s) {
  dispatch_rtvd(physics, limiter, [&](auto types) {
    run_rtvd(types, CudaRtvdLoop{{a.count, s}}, a, p);
  });
}

}  // namespace
}  // namespace tessera::kernels
