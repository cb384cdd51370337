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
#include "src/gravity/kick_launch.cuh"
#include "src/gravity/potential_box.cuh"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"

namespace tessera::gravity {

namespace {

using cuda::DeviceBuffer;
using exec::gpu::CudaDeviceMesh;
using namespace potential_gpu;

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

// The parent's box of group blockIdx.x into boxes[blockIdx.x].
__global__ void __launch_bounds__(kThreads) box_kernel(Args a, Real* boxes) {
  __shared__ Real box[kBoxCells];
  parent_box(a, blockIdx.x, box);
  for (int c = threadIdx.x; c < kBoxCells; c += blockDim.x)
    boxes[std::size_t(blockIdx.x) * kBoxCells + c] = box[c];
}

class CudaPotential final : public DevicePotential {
 public:
  void set_tables(const mesh::Mesh& m, const PotentialTables& t) override { tables_.set(m, t); }

  void gather(const mesh::Mesh& m, exec::DeviceMesh& dm, int first, int count, int phi_field,
              int source_field, double weight, bool coarse_ghosts, const DeviceRootPotential& root,
              Real* boxes, void* stream) override {
    if (count <= 0) return;
    if (first + count > tables_.groups)
      throw Error(ErrorKind::kInternal,
                  strprintf("level %d's potential tables hold %d groups, %d asked", tables_.level,
                            tables_.groups, first + count));
    const Args a = tables_.args(m, dynamic_cast<CudaDeviceMesh&>(dm), phi_field, weight, root);
    gather_kernel<<<count, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        a, first, coarse_ghosts, source_field, boxes);
    TESSERA_CUDA_CHECK(cudaGetLastError());
  }

  double kick(const mesh::Mesh& m, exec::DeviceMesh& dm, int phi_field, double weight, double dt,
              kernels::Physics physics, const kernels::PhysicsParams& params,
              const DeviceRootPotential& root) override {
    if (tables_.groups == 0) return 0;
    auto& d = dynamic_cast<CudaDeviceMesh&>(dm);
    const Args a = tables_.args(m, d, phi_field, weight, root);
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());  // the passes before wrote the pool
    TESSERA_CUDA_CHECK(cudaMemset(speed_.get(), 0, sizeof(unsigned long long)));
    const double h = m.dx(tables_.level);
    Real* level = d.pool(m.current_slot(tables_.level));
    const auto launch = [&](auto phys, const auto& prm, bool energy) {
      using P = decltype(phys);
      kick_kernel<P>
          <<<tables_.groups, kThreads>>>(a, level, 0.5 / h, h, Real(dt), energy, prm, speed_.get());
    };
    gpu::launch_kick(physics, params, launch);
    return gpu::kick_speed(speed_.get());
  }

  void add_coarse_change(const mesh::Mesh& m, exec::DeviceMesh& dm, int phi_field) override {
    if (tables_.groups == 0) return;
    auto& d = dynamic_cast<CudaDeviceMesh&>(dm);
    const Args a = tables_.args(m, d, phi_field, 0.0, {}, false);  // no exterior: as the host
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    add_change_kernel<<<tables_.groups, kThreads>>>(a, d.pool(m.current_slot(tables_.level)));
    TESSERA_CUDA_CHECK(cudaGetLastError());
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  }

  void parent_boxes(const mesh::Mesh& m, exec::DeviceMesh& dm, int phi_field, double weight,
                    const DeviceRootPotential& root, Real* boxes) override {
    if (tables_.groups == 0) return;
    const Args a = tables_.args(m, dynamic_cast<CudaDeviceMesh&>(dm), phi_field, weight, root);
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    box_kernel<<<tables_.groups, kThreads>>>(a, boxes);
    TESSERA_CUDA_CHECK(cudaGetLastError());
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  }

 private:
  DeviceTables tables_;
  DeviceBuffer<unsigned long long> speed_{1};
};

}  // namespace

std::unique_ptr<DevicePotential> make_device_potential() {
  return std::make_unique<CudaPotential>();
}

}  // namespace tessera::gravity
