// A refined level's potential on the GPU (device_potential.hpp): one block per patch group
// makes its parent's potential box in shared memory in the passes of
// kernels/potential_gather.hpp (a barrier between passes, each reading only cells it does
// not write), then writes the SOR's input boxes, or kicks the group's cells
// (kernels::gravity_kick) with the ghost values it needs evaluated where they are read.
// Compiled without contractions (CMakeLists.txt: --fmad=false): the host's bits.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/gravity.hpp"
#include "kernels/poisson_sor.hpp"
#include "src/exec/cuda/cuda_util.cuh"
#include "src/exec/cuda/device_mesh.cuh"
#include "src/gravity/device_potential.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"

namespace tessera::gravity {

namespace {

using cuda::DeviceBuffer;
using exec::gpu::CudaDeviceMesh;
constexpr int kThreads = 256;
constexpr int kN = mesh::kPatchSize;
constexpr int kG = 2 * kN;
constexpr int kCells = static_cast<int>(mesh::kPatchCells);
constexpr int kBoxCells = kernels::kPotentialBoxCells;
constexpr int kS = kernels::kSorBox;
constexpr int kS3 = kS * kS * kS;

// What the kernels read: the coarser level's two time levels and the level's current one
// (device pools), the tables as pool positions, the time weight and the root's exterior.
struct Args {
  const Real* now;
  const Real* before;
  const Real* level;
  std::size_t patch_reals;
  const int* first;
  const int* blocks;
  const int* coarse;
  const int* clamp;
  const kernels::PotentialBoxPlace* place;
  int phi_field;
  double weight;
  Real wn, wo;
  bool root_exterior;
  DeviceRootPotential root;
};

// Whether group g's ghost layer needs its parent's box: always for the SOR's boundary,
// else where a block around the group has no same-level patch (`faces`: only the blocks
// across its faces, all a kick reads).
__device__ bool needs_box(const Args& a, int g, bool coarse_ghosts, bool faces = false) {
  if (coarse_ghosts) return true;
  const int* b = a.blocks + std::size_t(g) * kernels::kGatherBlocks;
  for (int i = 0; i < kernels::kGatherBlocks; ++i) {
    const int c[3] = {i % 4 - 1, (i / 4) % 4 - 1, i / 16 - 1};
    int beyond = 0;
    for (const int x : c) beyond += x < 0 || x > 1;
    if (faces && beyond != 1) continue;
    if (b[i] < 0) return true;  // the group's own blocks are never negative
  }
  return false;
}

// The parent's potential box of group g in shared memory `box`, made by every thread of the
// block (parent_potential_box's passes; block-uniform control flow around the barriers).
__device__ void parent_box(const Args& a, int g, Real* box) {
  const int* coarse = a.coarse + std::size_t(g) * kernels::kCoarseBlocks;
  const int* clamp = a.clamp + std::size_t(g) * kernels::kCoarseClamp;
  const kernels::PotentialBoxPlace& place = a.place[g];
  const std::size_t off = std::size_t(a.phi_field) * kCells;
  const auto value = [&](int patch, int cell) {
    const std::size_t i = std::size_t(patch) * a.patch_reals + off + cell;
    const Real n = a.now[i];
    if (a.weight == 1) return n;
    const Real b = a.before[i];
    return a.weight == 0 ? b : a.wo * b + a.wn * n;
  };
  constexpr int n = kernels::kPotentialBox;
  for (int c = threadIdx.x; c < kBoxCells; c += blockDim.x)
    box[c] = kernels::potential_box_cell(value, coarse, clamp, c % n, (c / n) % n, c / (n * n));
  __syncthreads();
  for (int d = 0; d < 3; ++d) {
    for (int c = threadIdx.x; c < kBoxCells; c += blockDim.x)
      kernels::continue_potential_cell(box, place, d, c % n, (c / n) % n, c / (n * n));
    __syncthreads();
  }
  if (!a.root_exterior) return;
  const auto exterior = [&](int i, int j, int k) {
    const std::size_t at =
        (std::size_t(k + 1) * (a.root.n1 + 2) + (j + 1)) * (a.root.n0 + 2) + i + 1;
    // SelfGravity::exterior's interpolation in time.
    return a.weight == 1.0 ? a.root.phi[at]
                           : (1 - a.weight) * a.root.phi_prev[at] + a.weight * a.root.phi[at];
  };
  for (int c = threadIdx.x; c < kBoxCells; c += blockDim.x)
    kernels::exterior_potential_cell(box, place, exterior, c % n, (c / n) % n, c / (n * n));
  __syncthreads();
  for (int d = 0; d < 3; ++d) {
    for (int c = threadIdx.x; c < kBoxCells; c += blockDim.x)
      kernels::continue_exterior_cell(box, place, d, c % n, (c / n) % n, c / (n * n));
    __syncthreads();
  }
}

// The potential of group g's cell (x, y, z) (relative to its first cell, -1 .. 16): its own
// patches inside, else a same-level neighbour's value (unless `coarse_ghosts`), else the
// parent's box interpolated (gather_potential_tables).
__device__ Real group_phi(const Args& a, int g, const Real* box, bool coarse_ghosts, int x, int y,
                          int z) {
  const std::size_t off = std::size_t(a.phi_field) * kCells;
  const int b[3] = {x, y, z};
  if (x >= 0 && y >= 0 && z >= 0 && x < kG && y < kG && z < kG) {
    const int child = (x / kN) + 2 * (y / kN) + 4 * (z / kN);
    return a.level[std::size_t(a.first[g] + child) * a.patch_reals + off +
                   ((z % kN) * kN + (y % kN)) * kN + (x % kN)];
  }
  if (!coarse_ghosts) {
    int blk[3], local[3];
    for (int d = 0; d < 3; ++d) {
      blk[d] = b[d] < 0 ? -1 : b[d] / kN;
      local[d] = b[d] - blk[d] * kN;
    }
    const int src = a.blocks[std::size_t(g) * kernels::kGatherBlocks + (blk[0] + 1) +
                             4 * (blk[1] + 1) + 16 * (blk[2] + 1)];
    if (src >= 0)
      return a.level[std::size_t(src) * a.patch_reals + off + (local[2] * kN + local[1]) * kN +
                     local[0]];
  }
  return kernels::interpolate_potential_cell(box, b);
}

__global__ void __launch_bounds__(kThreads)
    gather_kernel(Args a, int first_group, bool coarse_ghosts, int source_field, Real* boxes) {
  __shared__ Real box[kBoxCells];
  const int g = first_group + blockIdx.x;
  if (needs_box(a, g, coarse_ghosts)) parent_box(a, g, box);
  Real* rho = boxes + std::size_t(blockIdx.x) * 2 * kS3;
  Real* phi = rho + kS3;
  for (int c = threadIdx.x; c < kS3; c += blockDim.x) {
    const int x = c % kS - 1, y = (c / kS) % kS - 1, z = c / (kS * kS) - 1;
    const bool inside = x >= 0 && y >= 0 && z >= 0 && x < kG && y < kG && z < kG;
    if (inside) {
      const int child = (x / kN) + 2 * (y / kN) + 4 * (z / kN);
      const Real* u = a.level + std::size_t(a.first[g] + child) * a.patch_reals +
                      ((z % kN) * kN + (y % kN)) * kN + (x % kN);
      rho[c] = source_field >= 0 ? u[0] + u[std::size_t(source_field) * kCells] : u[0];
      phi[c] = u[std::size_t(a.phi_field) * kCells];
    } else {
      rho[c] = 0;
      phi[c] = group_phi(a, g, box, coarse_ghosts, x, y, z);
    }
  }
}

// SelfGravity::kick_refined on group blockIdx.x, and the largest of the gas's signal speed
// and sqrt(h |g|) into *speed (a maximum: exact in any order; non-negative doubles order
// as their bit patterns).
template <class Phys>
__global__ void __launch_bounds__(kThreads)
    kick_kernel(Args a, Real* level, double inv_2h, double h, Real dt, bool energy,
                const typename Phys::Params params, unsigned long long* speed) {
  __shared__ Real box[kBoxCells];
  __shared__ double most[kThreads];
  const int g = blockIdx.x;
  if (needs_box(a, g, false, true)) parent_box(a, g, box);
  double s = 0;
  for (int c = threadIdx.x; c < kG * kG * kG; c += blockDim.x) {
    const int x = c % kG, y = (c / kG) % kG, z = c / (kG * kG);
    const Real lo[3] = {group_phi(a, g, box, false, x - 1, y, z),
                        group_phi(a, g, box, false, x, y - 1, z),
                        group_phi(a, g, box, false, x, y, z - 1)};
    const Real hi[3] = {group_phi(a, g, box, false, x + 1, y, z),
                        group_phi(a, g, box, false, x, y + 1, z),
                        group_phi(a, g, box, false, x, y, z + 1)};
    Real acc[3];
    kernels::gravity_acceleration(lo, hi, Real(inv_2h), acc);
    const int child = (x / kN) + 2 * (y / kN) + 4 * (z / kN);
    Real* cell = level + std::size_t(a.first[g] + child) * a.patch_reals +
                 ((z % kN) * kN + (y % kN)) * kN + (x % kN);
    kernels::gravity_kick(cell, mesh::kPatchCells, acc, dt, energy);
    typename Phys::Vars u;
    for (int v = 0; v < Phys::kNumVars; ++v) u[v] = cell[std::size_t(v) * kCells];
    const double g2 = double(acc[0]) * acc[0] + double(acc[1]) * acc[1] + double(acc[2]) * acc[2];
    s = fmax(s, fmax(double(Phys::max_signal_speed(Phys::cons_to_prim(u, params), params)),
                     sqrt(h * sqrt(g2))));
  }
  most[threadIdx.x] = s;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) most[threadIdx.x] = fmax(most[threadIdx.x], most[threadIdx.x + w]);
    __syncthreads();
  }
  if (threadIdx.x == 0)
    atomicMax(speed, static_cast<unsigned long long>(__double_as_longlong(most[0])));
}

// add_coarse_change_tables on group blockIdx.x: the parent's box of the change (weight 0,
// no exterior: `a` says so), interpolated per cell and added to the group's potential.
__global__ void __launch_bounds__(kThreads) add_change_kernel(Args a, Real* level) {
  __shared__ Real box[kBoxCells];
  const int g = blockIdx.x;
  parent_box(a, g, box);
  for (int c = threadIdx.x; c < kG * kG * kG; c += blockDim.x) {
    const int f[3] = {c % kG, (c / kG) % kG, c / (kG * kG)};
    const int child = (f[0] / kN) + 2 * (f[1] / kN) + 4 * (f[2] / kN);
    level[std::size_t(a.first[g] + child) * a.patch_reals + std::size_t(a.phi_field) * kCells +
          ((f[2] % kN) * kN + (f[1] % kN)) * kN + (f[0] % kN)] +=
        kernels::interpolate_group_cell(box, f);
  }
}

class CudaPotential final : public DevicePotential {
 public:
  void set_tables(const mesh::Mesh& m, const PotentialTables& t) override {
    const auto positions = [&](const std::vector<int>& patches) {
      std::vector<int> out(patches.size());
      for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = patches[i] >= 0 ? CudaDeviceMesh::position(m, patches[i]) : patches[i];
      return out;
    };
    level_ = t.level;
    groups_ = t.groups();
    root_exterior_ = t.root_exterior;
    first_ = CudaDeviceMesh::to_device(positions(t.first_patch));
    blocks_ = CudaDeviceMesh::to_device(positions(t.blocks));
    coarse_ = CudaDeviceMesh::to_device(positions(t.coarse));
    clamp_ = CudaDeviceMesh::to_device(t.clamp);
    place_ = CudaDeviceMesh::to_device(t.place);
    // From pageable memory: complete before a batch on another stream reads them.
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  }

  void gather(const mesh::Mesh& m, exec::DeviceMesh& dm, int first, int count, int phi_field,
              int source_field, double weight, bool coarse_ghosts, const DeviceRootPotential& root,
              Real* boxes, void* stream) override {
    if (count <= 0) return;
    check(first + count);
    const Args a = args(m, dynamic_cast<CudaDeviceMesh&>(dm), phi_field, weight, root);
    gather_kernel<<<count, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        a, first, coarse_ghosts, source_field, boxes);
    TESSERA_CUDA_CHECK(cudaGetLastError());
  }

  double kick(const mesh::Mesh& m, exec::DeviceMesh& dm, int phi_field, double weight, double dt,
              kernels::Physics physics, const kernels::PhysicsParams& params,
              const DeviceRootPotential& root) override {
    if (groups_ == 0) return 0;
    auto& d = dynamic_cast<CudaDeviceMesh&>(dm);
    const Args a = args(m, d, phi_field, weight, root);
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());  // the passes before wrote the pool
    TESSERA_CUDA_CHECK(cudaMemset(speed_.get(), 0, sizeof(unsigned long long)));
    const double h = m.dx(level_);
    Real* level = d.pool(m.current_slot(level_));
    const auto launch = [&](auto phys, const auto& prm, bool energy) {
      using P = decltype(phys);
      kick_kernel<P>
          <<<groups_, kThreads>>>(a, level, 0.5 / h, h, Real(dt), energy, prm, speed_.get());
    };
    switch (physics) {
      case kernels::Physics::kAdiabatic:
        launch(kernels::HydroAdiabatic{}, params.adiabatic, true);
        break;
      case kernels::Physics::kIsothermal:
        launch(kernels::HydroIsothermal{}, params.isothermal, false);
        break;
      case kernels::Physics::kMhd:
        launch(kernels::MhdGlm{}, params.mhd, true);
        break;
    }
    TESSERA_CUDA_CHECK(cudaGetLastError());
    unsigned long long bits = 0;
    TESSERA_CUDA_CHECK(cudaMemcpy(&bits, speed_.get(), sizeof bits, cudaMemcpyDeviceToHost));
    double speed = 0;
    std::memcpy(&speed, &bits, sizeof speed);
    return speed;
  }

  void add_coarse_change(const mesh::Mesh& m, exec::DeviceMesh& dm, int phi_field) override {
    if (groups_ == 0) return;
    auto& d = dynamic_cast<CudaDeviceMesh&>(dm);
    const Args a = args(m, d, phi_field, 0.0, {}, false);  // no exterior: as add_coarse_change
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    add_change_kernel<<<groups_, kThreads>>>(a, d.pool(m.current_slot(level_)));
    TESSERA_CUDA_CHECK(cudaGetLastError());
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  }

 private:
  void check(int groups) const {
    if (groups > groups_)
      throw Error(ErrorKind::kInternal,
                  strprintf("level %d's potential tables hold %d groups, %d asked", level_, groups_,
                            groups));
  }
  // `exterior`: level 1's boxes of an isolated solve are bounded by the root's exterior.
  Args args(const mesh::Mesh& m, CudaDeviceMesh& d, int phi_field, double weight,
            const DeviceRootPotential& root, bool exterior = true) const {
    if (exterior && root_exterior_ && (!root.phi || !root.phi_prev))
      throw Error(ErrorKind::kInternal, "level 1's potential boxes without the root's exterior");
    Args a{};
    a.now = d.pool(m.current_slot(level_ - 1));
    a.before = d.pool(m.next_slot(level_ - 1));
    a.level = d.pool(m.current_slot(level_));
    a.patch_reals = d.patch_reals();
    a.first = first_.get();
    a.blocks = blocks_.get();
    a.coarse = coarse_.get();
    a.clamp = clamp_.get();
    a.place = place_.get();
    a.phi_field = phi_field;
    a.weight = weight;
    a.wn = Real(weight);
    a.wo = Real(1 - weight);
    a.root_exterior = exterior && root_exterior_;
    a.root = root;
    return a;
  }

  int level_ = 0, groups_ = 0;
  bool root_exterior_ = false;
  DeviceBuffer<int> first_, blocks_, coarse_, clamp_;
  DeviceBuffer<kernels::PotentialBoxPlace> place_;
  DeviceBuffer<unsigned long long> speed_{1};
};

}  // namespace

std::unique_ptr<DevicePotential> make_device_potential() {
  return std::make_unique<CudaPotential>();
}

}  // namespace tessera::gravity
