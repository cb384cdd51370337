// A regrid of a device-resident adaptive mesh (docs/architecture.md, "Data residency"):
// the host plans the new hierarchy and changes its octree; the patch data follow on the
// device. A pool that must grow is made again larger on the device (grow), families moved
// into the holes of removed ones are copied there, and each new
// family is prolonged from its parent with mesh::prolong_family's operations
// (kernels::prolong_new_cell: minmod-limited slopes, Schive et al. 2010 §2.1, and the
// injection fallback where a fine state would not be admissible), so that nothing is
// copied between the host and the GPU but the tables and one speed per new patch. This file
// is compiled without contractions (CMakeLists.txt: --fmad=false), as the host prolongs
// without fused multiply-adds: the new families equal the staged run's bit for bit.
#include <algorithm>
#include <functional>
#include <vector>

#include "kernels/coarse_fine_gather.hpp"
#include "kernels/physics_adiabatic.hpp"
#include "kernels/physics_isothermal.hpp"
#include "kernels/physics_mhd.hpp"
#include "src/exec/cuda/cuda_util.cuh"
#include "src/exec/cuda/device_mesh.cuh"

namespace tessera::exec::gpu {

namespace {

constexpr int P = kernels::kPatchSize;

// One block per new family and child patch (blockIdx.y), one thread per cell of the
// child: its state from the parent level's current data, and the child's largest signal
// speed (the host's patch_max_speed) into speeds[8 family + child].
template <class Phys>
__global__ void prolong_kernel(Real* fine_pool, const Real* coarse_pool, std::size_t patch_reals,
                               const int* __restrict__ first_position,
                               const int* __restrict__ coarse, const int* __restrict__ clamp,
                               const kernels::ProlongFields pf, const typename Phys::Params params,
                               double* speeds) {
  __shared__ double most[mesh::kPatchCells];
  const int family = blockIdx.x, child = blockIdx.y, cell = threadIdx.x;
  const int f[3] = {(child & 1) * P + cell % P, ((child >> 1) & 1) * P + (cell / P) % P,
                    ((child >> 2) & 1) * P + cell / (P * P)};
  Real* out = fine_pool + std::size_t(first_position[family] + child) * patch_reals + cell;
  const auto value = [&](int patch, int v, int at, bool) {
    return coarse_pool[std::size_t(patch) * patch_reals + std::size_t(v) * mesh::kPatchCells + at];
  };
  typename Phys::Vars u;
  kernels::prolong_new_cell(value, coarse + std::size_t(family) * kernels::kCoarseBlocks,
                            clamp + std::size_t(family) * kernels::kCoarseClamp, pf, f,
                            [&](int v, Real x) {
                              out[std::size_t(v) * mesh::kPatchCells] = x;
                              if (v < Phys::kNumVars) u[v] = x;
                            });
  most[cell] = double(Phys::max_signal_speed(Phys::cons_to_prim(u, params), params));
  __syncthreads();
  // The maximum is exact: any order of the reduction gives the host's.
  for (int s = mesh::kPatchCells / 2; s > 0; s /= 2) {
    if (cell < s) most[cell] = fmax(most[cell], most[cell + s]);
    __syncthreads();
  }
  if (cell == 0) speeds[std::size_t(family) * mesh::kFamilySize + child] = most[0];
}

}  // namespace

void CudaDeviceMesh::grow(const mesh::Mesh& m, const std::function<void()>& reallocate) {
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  unpin_host();
  reallocate();
  const std::size_t capacity =
      std::max(m.store().pool_capacity_patches(), m.store().pool_patches());
  if (capacity > capacity_) {
    // One time level at a time: the old pool is freed as soon as it was copied.
    for (int s = 0; s < 2; ++s) {
      DeviceBuffer<Real> larger(capacity * patch_reals_);
      TESSERA_CUDA_CHECK(
          cudaMemcpy(larger.get(), pool_[s].get(), bytes_per_slot(), cudaMemcpyDeviceToDevice));
      pool_[s] = std::move(larger);
    }
    capacity_ = capacity;
  }
  for (int s = 0; s < 2; ++s) host_pool_[s] = static_cast<const Real*>(m.store().pool_address(s));
}

bool CudaDeviceMesh::regrid(const mesh::Mesh& m, const mesh::MeshChange& change,
                            const std::vector<std::vector<int>>& groups, kernels::Physics physics,
                            const kernels::PhysicsParams& params, std::vector<double>& speeds) {
  // A dense pool at the place and with the capacity of this copy: positions are patch
  // indices on both sides, and the moves below are those the host's store made.
  if (m.sparse() || m.patch_reals() != patch_reals_ || m.store().pool_patches() > capacity_ ||
      m.store().pool_capacity_patches() != capacity_)
    return false;
  for (int s = 0; s < 2; ++s)
    if (host_pool_[s] != m.store().pool_address(s)) return false;
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  const std::size_t family = mesh::kFamilySize * patch_reals_;
  for (const auto& [from, to] : change.moves)  // in order: a later move may read an earlier's
    for (int s = 0; s < 2; ++s)
      TESSERA_CUDA_CHECK(cudaMemcpyAsync(pool_[s].get() + std::size_t(to) * patch_reals_,
                                         pool_[s].get() + std::size_t(from) * patch_reals_,
                                         family * sizeof(Real), cudaMemcpyDeviceToDevice));
  rebuild_tables(m, groups);
  // New families, coarse to fine: a new family's parent may itself be new.
  speeds.resize(std::max<std::size_t>(speeds.size(), m.num_levels()), 0.0);
  for (int level = 1; level < m.num_levels(); ++level)
    if (std::size_t(level) < change.added.size())
      speeds[level] =
          std::max(speeds[level], prolong(m, level, change.added[level], physics, params));
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());  // the moves are done before anything reads
  return true;
}

double CudaDeviceMesh::prolong(const mesh::Mesh& m, int level, const std::vector<int>& families,
                               kernels::Physics physics, const kernels::PhysicsParams& params) {
  if (families.empty()) return 0.0;
  const kernels::ProlongFields pf = prolong_fields(m.fields());
  ProlongTable t = build_prolong_table(m, families);
  for (int& p : t.first_patch) p = position(m, p);
  for (int& p : t.coarse) p = p >= 0 ? position(m, p) : p;
  const DeviceBuffer<int> first = to_device(t.first_patch), coarse = to_device(t.coarse),
                          clamp = to_device(t.clamp);
  DeviceBuffer<double> d_speeds(std::size_t(t.families()) * mesh::kFamilySize);
  const dim3 grid(t.families(), mesh::kFamilySize);
  Real* fine = pool(m.current_slot(level));
  const Real* parents = pool(m.current_slot(level - 1));
  switch (physics) {
    case kernels::Physics::kAdiabatic:
      prolong_kernel<kernels::HydroAdiabatic>
          <<<grid, mesh::kPatchCells>>>(fine, parents, patch_reals_, first.get(), coarse.get(),
                                        clamp.get(), pf, params.adiabatic, d_speeds.get());
      break;
    case kernels::Physics::kIsothermal:
      prolong_kernel<kernels::HydroIsothermal>
          <<<grid, mesh::kPatchCells>>>(fine, parents, patch_reals_, first.get(), coarse.get(),
                                        clamp.get(), pf, params.isothermal, d_speeds.get());
      break;
    case kernels::Physics::kMhd:
      prolong_kernel<kernels::MhdGlm>
          <<<grid, mesh::kPatchCells>>>(fine, parents, patch_reals_, first.get(), coarse.get(),
                                        clamp.get(), pf, params.mhd, d_speeds.get());
      break;
  }
  TESSERA_CUDA_CHECK(cudaGetLastError());
  std::vector<double> got(d_speeds.size());
  TESSERA_CUDA_CHECK(
      cudaMemcpy(got.data(), d_speeds.get(), got.size() * sizeof(double), cudaMemcpyDeviceToHost));
  double most = 0.0;
  for (const double s : got) most = std::max(most, s);
  return most;
}

bool CudaDeviceMesh::retable(const mesh::Mesh& m, const std::vector<std::vector<int>>& groups) {
  // Positions within this copy's capacity, in the host pools it mirrors (a sparse store
  // moves no data when its families change: only new ones take free positions).
  if (m.patch_reals() != patch_reals_ || m.store().pool_patches() > capacity_ ||
      m.store().pool_capacity_patches() > capacity_)
    return false;
  for (int s = 0; s < 2; ++s)
    if (host_pool_[s] != m.store().pool_address(s)) return false;
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  rebuild_tables(m, groups);
  return true;
}

}  // namespace tessera::exec::gpu
