// Device kernels of the method-of-lines hydro solver (mol_hydro.hpp): the same TESSERA_HD
// per-face and per-cell functions as the CPU loops (mol_hydro_cpu.cpp), one thread per
// cell, over a batch of patch groups. The arithmetic is ordered exactly as on the CPU, so
// compiled with --fmad=false the results agree bit for bit. Kernels are templates on the
// ghost width G (constant box strides); launch_mol_hydro maps the run-time integrator to
// them. Included by the CUDA executor and by the GPU tests (each translation unit gets
// its own copy, so a test can build it with other floating-point flags).
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

constexpr int kCuThreads = 256;
constexpr int kOutReals = kNumHydroVars * kGroupCells;
constexpr int kPlaneReals = kNumFluxPlanes * kNumHydroVars * kFaceCells;
static_assert(kGroupCells % kCuThreads == 0, "a thread block must not straddle two groups");

// The (16+2G)^3 box of one group. Box-wide kernels give each group kThreads threads: N^3
// rounded up to whole blocks, so that a block never straddles two groups (24^3 is 54
// blocks exactly; 22^3 takes 42, the last one partly idle).
template <int G>
struct CuBox {
  static constexpr int kN = box_size(G);
  static constexpr int kN3 = box_cells(G);
  static constexpr int kInReals = kNumHydroVars * kN3;
  static constexpr int kBlocks = (kN3 + kCuThreads - 1) / kCuThreads;
  static constexpr int kThreads = kBlocks * kCuThreads;
};

// Device pointers of one batch; per group g the arrays start at g * (per-group size),
// box arrays with the box of the integrator's ghost width.
struct BatchView {
  const Real* in;        // [5][N^3] conserved input
  Real* prim;            // [5][N^3] primitives of the current stage
  Real* u1;              // [5][N^3] stage-1 (rk2) or half-step (vl2) state
  Real* flux;            // [3][5][N^3] face fluxes per direction
  Real* out;             // [5][16^3]
  Real* planes;          // [9][5][16^2]
  GroupResult* results;  // [count]
  int count;
};

// How a flux kernel treats the group's flux planes: rk2 averages its two stages; the vl2
// predictor's fluxes do not enter them, the corrector's are stored with weight 1.
enum class PlaneMode { kNone, kFirstHalf, kAddHalf, kStore };

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

// Group and box cell of a thread of a box-wide kernel; false for the padding threads.
template <int G>
__device__ inline bool box_thread(int count, int& g, int& c) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  g = t / CuBox<G>::kThreads, c = t % CuBox<G>::kThreads;
  return g < count && c < CuBox<G>::kN3;
}

// Primitives of the whole input box.
template <int G>
__global__ void primitive_kernel(const Real* u, Real* prim, EosParams eos, int count) {
  using B = CuBox<G>;
  int g, c;
  if (!box_thread<G>(count, g, c)) return;
  store_prim(prim + g * B::kInReals, B::kN3, c,
             cons_to_prim(load_cons(u + g * B::kInReals, B::kN3, c), eos));
}

// Fluxes through the low faces of the cells that the update of [lo, hi)^3 needs, all
// three directions; those on the group's flux planes are handled as `mode` says.
template <int G, class Recon, class Riemann>
__global__ void flux_kernel(BatchView b, int lo, int hi, Real gamma, PlaneMode mode) {
  using B = CuBox<G>;
  int g, c;
  if (!box_thread<G>(b.count, g, c)) return;
  const int pos[3] = {c % B::kN, (c / B::kN) % B::kN, c / (B::kN * B::kN)};
  const int stride[3] = {1, B::kN, B::kN * B::kN};
  const Real* w = b.prim + g * B::kInReals;
  for (int dir = 0; dir < 3; ++dir) {
    bool needed = true;
    for (int d = 0; d < 3; ++d) needed = needed && pos[d] >= lo && pos[d] < hi + (d == dir ? 1 : 0);
    if (!needed) continue;
    const Cons f = face_flux<Recon, Riemann>(w, B::kN3, c, stride[dir], dir, gamma);
    store_cons(b.flux + (g * 3 + dir) * B::kInReals, B::kN3, c, f);
    if (mode == PlaneMode::kNone) continue;
    const int along = pos[dir] - G;
    const int a_dim = dir == 2 ? 1 : 2, b_dim = dir == 0 ? 1 : 0;
    const int a = pos[a_dim] - G, bb = pos[b_dim] - G;
    if (along % kPatchSize != 0 || along < 0 || along > kGroupSize || a < 0 || a >= kGroupSize ||
        bb < 0 || bb >= kGroupSize)
      continue;
    Real* plane = b.planes + g * kPlaneReals +
                  flux_plane(dir, along / kPatchSize) * kNumHydroVars * kFaceCells;
    const Real vals[5] = {f.dens, f.mom[0], f.mom[1], f.mom[2], f.engy};
    for (int v = 0; v < kNumHydroVars; ++v) {
      Real& p = plane[v * kFaceCells + a * kGroupSize + bb];
      // As the CPU loops: planes cleared, then += weight * flux.
      if (mode == PlaneMode::kFirstHalf)
        p = Real(0) + Real(0.5) * vals[v];
      else if (mode == PlaneMode::kAddHalf)
        p = p + Real(0.5) * vals[v];
      else
        p = vals[v];
    }
  }
}

// Minus the flux divergence (times dx), summed x, y, z as the CPU loops do.
template <int G>
__device__ inline Cons divergence(const BatchView& b, int g, int c) {
  using B = CuBox<G>;
  const int stride[3] = {1, B::kN, B::kN * B::kN};
  Real du[5];
  for (int dir = 0; dir < 3; ++dir) {
    const Real* f = b.flux + (g * 3 + dir) * B::kInReals;
    for (int v = 0; v < kNumHydroVars; ++v) {
      const Real d = f[v * B::kN3 + c + stride[dir]] - f[v * B::kN3 + c];
      du[v] = dir == 0 ? -d : du[v] - d;
    }
  }
  return {du[0], {du[1], du[2], du[3]}, du[4]};
}

// First stage on [lo, hi)^3: u1 = u0 + coef * du(u0), floored, and its primitives
// (rk2: coef = dt/dx on [2, N-2); vl2 predictor: coef = dt/(2 dx) on [1, N-1)).
template <int G>
__global__ void stage1_kernel(BatchView b, MolParams prm, int lo, int hi, Real coef) {
  using B = CuBox<G>;
  int g, c;
  if (!box_thread<G>(b.count, g, c)) return;
  const int i = c % B::kN, j = (c / B::kN) % B::kN, k = c / (B::kN * B::kN);
  if (i < lo || i >= hi || j < lo || j >= hi || k < lo || k >= hi) return;
  Cons u = euler_step(load_cons(b.in + g * B::kInReals, B::kN3, c), coef, divergence<G>(b, g, c));
  apply_floors(u, prm.eos);
  store_cons(b.u1 + g * B::kInReals, B::kN3, c, u);
  store_prim(b.prim + g * B::kInReals, B::kN3, c, cons_to_prim(u, prm.eos));
}

// Final stage on the interior, floors, per-group results. rk2: (u0 + u1 + dt L(u1)) / 2;
// vl2 corrector: u0 + dt L(u^{n+1/2}).
template <int G, bool kVl2>
__global__ void final_kernel(BatchView b, MolParams prm) {
  using B = CuBox<G>;
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int g = t / kGroupCells, cell = t % kGroupCells;
  if (g >= b.count) return;
  const int i = cell % kGroupSize, j = (cell / kGroupSize) % kGroupSize;
  const int k = cell / (kGroupSize * kGroupSize);
  const int c = ((k + G) * B::kN + (j + G)) * B::kN + (i + G);
  const Cons a = load_cons(b.in + g * B::kInReals, B::kN3, c);
  const Cons du = divergence<G>(b, g, c);
  Cons u;
  if constexpr (kVl2)
    u = euler_step(a, prm.dt_over_dx, du);
  else
    u = rk2_final(a, load_cons(b.u1 + g * B::kInReals, B::kN3, c), prm.dt_over_dx, du);
  const FloorResult fr = apply_floors(u, prm.eos);
  GroupResult& r = b.results[g];
  if (fr == FloorResult::kFloored) atomicAdd(&r.floored, 1);
  if (fr == FloorResult::kUnphysical)
    atomicMin(&r.bad_cell, cell);
  else
    atomic_max_nonneg(&r.max_speed, max_signal_speed(cons_to_prim(u, prm.eos), prm.eos.gamma));
  store_cons(b.out + g * kOutReals, kGroupCells, cell, u);
}

// SSP-RK2 (mol_hydro.hpp) in six kernels on stream s.
template <class Recon, class Riemann>
void launch_rk2(const BatchView& b, const MolParams& prm, cudaStream_t s) {
  constexpr int G = kGhostRk2, N = CuBox<G>::kN;
  const int blocks = b.count * CuBox<G>::kBlocks;
  const Real gamma = prm.eos.gamma;
  init_results_kernel<<<(b.count + 127) / 128, 128, 0, s>>>(b.results, b.count);
  primitive_kernel<G><<<blocks, kCuThreads, 0, s>>>(b.in, b.prim, prm.eos, b.count);
  flux_kernel<G, Recon, Riemann>
      <<<blocks, kCuThreads, 0, s>>>(b, 2, N - 2, gamma, PlaneMode::kFirstHalf);
  stage1_kernel<G><<<blocks, kCuThreads, 0, s>>>(b, prm, 2, N - 2, prm.dt_over_dx);
  flux_kernel<G, Recon, Riemann>
      <<<blocks, kCuThreads, 0, s>>>(b, G, G + kGroupSize, gamma, PlaneMode::kAddHalf);
  final_kernel<G, false><<<b.count*(kGroupCells / kCuThreads), kCuThreads, 0, s>>>(b, prm);
}

// VL2 (Stone & Gardiner 2009; mol_hydro.hpp): donor-cell predictor over dt/2 on the
// interior plus two ghost layers, corrector over dt on the interior.
template <class Recon, class Riemann>
void launch_vl2(const BatchView& b, const MolParams& prm, cudaStream_t s) {
  constexpr int G = kGhostVl2, N = CuBox<G>::kN;
  const int blocks = b.count * CuBox<G>::kBlocks;
  const Real gamma = prm.eos.gamma;
  init_results_kernel<<<(b.count + 127) / 128, 128, 0, s>>>(b.results, b.count);
  primitive_kernel<G><<<blocks, kCuThreads, 0, s>>>(b.in, b.prim, prm.eos, b.count);
  flux_kernel<G, ReconPcm, Riemann>
      <<<blocks, kCuThreads, 0, s>>>(b, 1, N - 1, gamma, PlaneMode::kNone);
  stage1_kernel<G><<<blocks, kCuThreads, 0, s>>>(b, prm, 1, N - 1, Real(0.5) * prm.dt_over_dx);
  flux_kernel<G, Recon, Riemann>
      <<<blocks, kCuThreads, 0, s>>>(b, G, G + kGroupSize, gamma, PlaneMode::kStore);
  final_kernel<G, true><<<b.count*(kGroupCells / kCuThreads), kCuThreads, 0, s>>>(b, prm);
}

template <class Recon, class Riemann>
void launch_integrator(const Scheme& sc, const BatchView& b, const MolParams& prm, cudaStream_t s) {
  switch (sc.integrator) {
    case Integrator::kRk2:
      return launch_rk2<Recon, Riemann>(b, prm, s);
    case Integrator::kVl2:
      return launch_vl2<Recon, Riemann>(b, prm, s);
  }
}

template <class Recon>
void launch_riemann(const Scheme& sc, const BatchView& b, const MolParams& prm, cudaStream_t s) {
  switch (sc.riemann) {
    case RiemannSolver::kHll:
      return launch_integrator<Recon, RiemannHll>(sc, b, prm, s);
    case RiemannSolver::kHllc:
      return launch_integrator<Recon, RiemannHllc>(sc, b, prm, s);
    case RiemannSolver::kLlf:
      return launch_integrator<Recon, RiemannLlf>(sc, b, prm, s);
  }
}

// Enqueues the whole step of b.count groups on stream s; the box arrays of `b` must be
// laid out for ghost_width(sc.integrator).
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
