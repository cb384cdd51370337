// Device kernels of the method-of-lines hydro solver (mol_hydro.hpp): the same TESSERA_HD
// per-face and per-cell functions as the CPU loops (mol_hydro_cpu.cpp), one thread per
// cell, over a batch of patch groups. The arithmetic is ordered exactly as on the CPU, so
// compiled with --fmad=false the results agree bit for bit. Included by the CUDA
// executor and by the GPU tests (each translation unit gets its own copy, so a test can
// build it with other floating-point flags).
#pragma once

#include <climits>

#include "kernels/group_layout.hpp"
#include "kernels/mol_hydro.hpp"
#include "kernels/mol_hydro_cpu.hpp"
#include "kernels/reconstruction.hpp"
#include "kernels/riemann_hll.hpp"
#include "kernels/riemann_hllc.hpp"
#include "kernels/riemann_llf.hpp"

namespace tessera::kernels {
namespace {

constexpr int kCuG = kGhostRk2;
constexpr int kCuN = box_size(kCuG);
constexpr int kCuN3 = box_cells(kCuG);
constexpr int kCuThreads = 256;
static_assert(kCuN3 % kCuThreads == 0, "a thread block must not straddle two groups");
constexpr int kInReals = kNumHydroVars * kCuN3;
constexpr int kOutReals = kNumHydroVars * kGroupCells;
constexpr int kPlaneReals = kNumFluxPlanes * kNumHydroVars * kFaceCells;

// Device pointers of one batch; per group g the arrays start at g * (per-group size).
struct BatchView {
  const Real* in;        // [5][N^3] conserved input
  Real* prim;            // [5][N^3] primitives of the current stage
  Real* u1;              // [5][N^3] stage-1 state
  Real* flux;            // [3][5][N^3] face fluxes per direction
  Real* out;             // [5][16^3]
  Real* planes;          // [9][5][16^2]
  GroupResult* results;  // [count]
  int count;
};

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
  if (g < count) results[g] = {Real(0), 0, INT_MAX};
}

// Primitives of `u` (per-group stride `stride`) on the cells [lo, hi)^3 of the box.
__global__ void primitive_kernel(const Real* u, int stride, Real* prim, int lo, int hi,
                                 EosParams eos, int count) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int g = t / kCuN3, c = t % kCuN3;
  if (g >= count) return;
  const int i = c % kCuN, j = (c / kCuN) % kCuN, k = c / (kCuN * kCuN);
  if (i < lo || i >= hi || j < lo || j >= hi || k < lo || k >= hi) return;
  store_prim(prim + g * kInReals, kCuN3, c, cons_to_prim(load_cons(u + g * stride, kCuN3, c), eos));
}

// Fluxes through the low faces of the cells that the update of [lo, hi)^3 needs, all
// three directions; those on the group's flux planes are accumulated with weight 1/2.
template <class Recon, class Riemann>
__global__ void flux_kernel(BatchView b, int lo, int hi, Real gamma, bool first_stage) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int g = t / kCuN3, c = t % kCuN3;
  if (g >= b.count) return;
  const int pos[3] = {c % kCuN, (c / kCuN) % kCuN, c / (kCuN * kCuN)};
  const int stride[3] = {1, kCuN, kCuN * kCuN};
  const Real* w = b.prim + g * kInReals;
  for (int dir = 0; dir < 3; ++dir) {
    bool needed = true;
    for (int d = 0; d < 3; ++d) needed = needed && pos[d] >= lo && pos[d] < hi + (d == dir ? 1 : 0);
    if (!needed) continue;
    const Cons f = face_flux<Recon, Riemann>(w, kCuN3, c, stride[dir], dir, gamma);
    store_cons(b.flux + (g * 3 + dir) * kInReals, kCuN3, c, f);
    const int along = pos[dir] - kCuG;
    const int a_dim = dir == 2 ? 1 : 2, b_dim = dir == 0 ? 1 : 0;
    const int a = pos[a_dim] - kCuG, bb = pos[b_dim] - kCuG;
    if (along % kPatchSize != 0 || along < 0 || along > kGroupSize || a < 0 || a >= kGroupSize ||
        bb < 0 || bb >= kGroupSize)
      continue;
    Real* plane = b.planes + g * kPlaneReals +
                  flux_plane(dir, along / kPatchSize) * kNumHydroVars * kFaceCells;
    const Real vals[5] = {f.dens, f.mom[0], f.mom[1], f.mom[2], f.engy};
    for (int v = 0; v < kNumHydroVars; ++v) {
      Real& p = plane[v * kFaceCells + a * kGroupSize + bb];
      p = first_stage ? Real(0) + Real(0.5) * vals[v] : p + Real(0.5) * vals[v];
    }
  }
}

// Minus the flux divergence (times dx), summed x, y, z as the CPU loops do.
__device__ inline Cons divergence(const BatchView& b, int g, int c) {
  const int stride[3] = {1, kCuN, kCuN * kCuN};
  Real du[5];
  for (int dir = 0; dir < 3; ++dir) {
    const Real* f = b.flux + (g * 3 + dir) * kInReals;
    for (int v = 0; v < kNumHydroVars; ++v) {
      const Real d = f[v * kCuN3 + c + stride[dir]] - f[v * kCuN3 + c];
      du[v] = dir == 0 ? -d : du[v] - d;
    }
  }
  return {du[0], {du[1], du[2], du[3]}, du[4]};
}

// Stage 1 on [2, N-2)^3: u1 = u0 + dt L(u0), floored, and its primitives.
__global__ void stage1_kernel(BatchView b, MolParams prm) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int g = t / kCuN3, c = t % kCuN3;
  if (g >= b.count) return;
  const int i = c % kCuN, j = (c / kCuN) % kCuN, k = c / (kCuN * kCuN);
  constexpr int lo = 2, hi = kCuN - 2;
  if (i < lo || i >= hi || j < lo || j >= hi || k < lo || k >= hi) return;
  Cons u = load_cons(b.in + g * kInReals, kCuN3, c);
  const Cons du = divergence(b, g, c);
  u.dens += prm.dt_over_dx * du.dens;
  for (int d = 0; d < 3; ++d) u.mom[d] += prm.dt_over_dx * du.mom[d];
  u.engy += prm.dt_over_dx * du.engy;
  apply_floors(u, prm.eos);
  store_cons(b.u1 + g * kInReals, kCuN3, c, u);
  store_prim(b.prim + g * kInReals, kCuN3, c, cons_to_prim(u, prm.eos));
}

// Stage 2 on the interior: u2 = (u0 + u1 + dt L(u1)) / 2, floors, per-group results.
__global__ void stage2_kernel(BatchView b, MolParams prm) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int g = t / kGroupCells, cell = t % kGroupCells;
  if (g >= b.count) return;
  const int i = cell % kGroupSize, j = (cell / kGroupSize) % kGroupSize;
  const int k = cell / (kGroupSize * kGroupSize);
  const int c = ((k + kCuG) * kCuN + (j + kCuG)) * kCuN + (i + kCuG);
  const Cons a = load_cons(b.in + g * kInReals, kCuN3, c);
  const Cons u1 = load_cons(b.u1 + g * kInReals, kCuN3, c);
  const Cons du = divergence(b, g, c);
  Cons u;
  u.dens = Real(0.5) * (a.dens + u1.dens + prm.dt_over_dx * du.dens);
  for (int d = 0; d < 3; ++d)
    u.mom[d] = Real(0.5) * (a.mom[d] + u1.mom[d] + prm.dt_over_dx * du.mom[d]);
  u.engy = Real(0.5) * (a.engy + u1.engy + prm.dt_over_dx * du.engy);
  const FloorResult fr = apply_floors(u, prm.eos);
  GroupResult& r = b.results[g];
  if (fr == FloorResult::kFloored) atomicAdd(&r.floored, 1);
  if (fr == FloorResult::kUnphysical)
    atomicMin(&r.bad_cell, cell);
  else
    atomic_max_nonneg(&r.max_speed, max_signal_speed(cons_to_prim(u, prm.eos), prm.eos.gamma));
  store_cons(b.out + g * kOutReals, kGroupCells, cell, u);
}

template <class Recon, class Riemann>
void launch_scheme(const BatchView& b, const MolParams& prm, cudaStream_t s) {
  const int box_blocks = b.count * (kCuN3 / kCuThreads);
  init_results_kernel<<<(b.count + 127) / 128, 128, 0, s>>>(b.results, b.count);
  primitive_kernel<<<box_blocks, kCuThreads, 0, s>>>(b.in, kInReals, b.prim, 0, kCuN, prm.eos,
                                                     b.count);
  flux_kernel<Recon, Riemann>
      <<<box_blocks, kCuThreads, 0, s>>>(b, 2, kCuN - 2, prm.eos.gamma, true);
  stage1_kernel<<<box_blocks, kCuThreads, 0, s>>>(b, prm);
  flux_kernel<Recon, Riemann>
      <<<box_blocks, kCuThreads, 0, s>>>(b, kCuG, kCuG + kGroupSize, prm.eos.gamma, false);
  stage2_kernel<<<b.count*(kGroupCells / kCuThreads), kCuThreads, 0, s>>>(b, prm);
}

template <class Recon>
void launch_riemann(const Scheme& sc, const BatchView& b, const MolParams& prm, cudaStream_t s) {
  switch (sc.riemann) {
    case RiemannSolver::kHll:
      return launch_scheme<Recon, RiemannHll>(b, prm, s);
    case RiemannSolver::kHllc:
      return launch_scheme<Recon, RiemannHllc>(b, prm, s);
    case RiemannSolver::kLlf:
      return launch_scheme<Recon, RiemannLlf>(b, prm, s);
  }
}

// Enqueues the whole SSP-RK2 step of b.count groups on stream s.
inline void launch_mol_hydro(const Scheme& sc, const BatchView& b, const MolParams& prm,
                             cudaStream_t s) {
  switch (sc.recon) {
    case Reconstruction::kPcm:
      return launch_riemann<ReconPcm>(sc, b, prm, s);
    case Reconstruction::kPlmMinmod:
      return launch_riemann<ReconPlm<LimiterMinmod>>(sc, b, prm, s);
    case Reconstruction::kPlmMc:
      return launch_riemann<ReconPlm<LimiterMc>>(sc, b, prm, s);
    case Reconstruction::kPlmVanLeer:
      return launch_riemann<ReconPlm<LimiterVanLeer>>(sc, b, prm, s);
  }
}

}  // namespace
}  // namespace tessera::kernels
