// The device side of a refined level's potential tables (kernels/potential_gather.hpp),
// shared by the kernels of resident_potential_cuda.cu and resident_correction_cuda.cu: what
// a kernel reads (Args), the parent's box made in shared memory by a block, and a group
// cell's potential with its ghost values.
#pragma once

#include <cstddef>

#include "kernels/poisson_sor.hpp"
#include "kernels/potential_gather.hpp"
#include "src/exec/cuda/cuda_util.cuh"
#include "src/exec/cuda/device_mesh.cuh"
#include "src/gravity/device_potential.hpp"
#include "src/gravity/potential_tables.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/mesh/mesh.hpp"

namespace tessera::gravity::potential_gpu {

inline constexpr int kThreads = 256;
inline constexpr int kN = mesh::kPatchSize;
inline constexpr int kG = 2 * kN;
inline constexpr int kCells = static_cast<int>(mesh::kPatchCells);
inline constexpr int kBoxCells = kernels::kPotentialBoxCells;
inline constexpr int kS = kernels::kSorBox;
inline constexpr int kS3 = kS * kS * kS;

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
inline __device__ bool needs_box(const Args& a, int g, bool coarse_ghosts, bool faces = false) {
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
inline __device__ void parent_box(const Args& a, int g, Real* box) {
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
    const std::size_t at = a.root.boxes.at(i, j, k);
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
inline __device__ Real group_phi(const Args& a, int g, const Real* box, bool coarse_ghosts, int x,
                                 int y, int z) {
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

// A level's potential tables on the device (patches as pool positions), and the Args of a
// kernel over them.
struct DeviceTables {
  int level = 0, groups = 0;
  bool root_exterior = false;
  cuda::DeviceBuffer<int> first, blocks, coarse, clamp;
  cuda::DeviceBuffer<kernels::PotentialBoxPlace> place;

  void set(const mesh::Mesh& m, const PotentialTables& t) {
    using exec::gpu::CudaDeviceMesh;
    const auto positions = [&](const std::vector<int>& patches) {
      std::vector<int> out(patches.size());
      for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = patches[i] >= 0 ? CudaDeviceMesh::position(m, patches[i]) : patches[i];
      return out;
    };
    level = t.level;
    groups = t.groups();
    root_exterior = t.root_exterior;
    first = CudaDeviceMesh::to_device(positions(t.first_patch));
    blocks = CudaDeviceMesh::to_device(positions(t.blocks));
    coarse = CudaDeviceMesh::to_device(positions(t.coarse));
    clamp = CudaDeviceMesh::to_device(t.clamp);
    place = CudaDeviceMesh::to_device(t.place);
    // From pageable memory: complete before a batch on another stream reads them.
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  }

  // `exterior`: level 1's boxes of an isolated solve are bounded by the root's exterior.
  Args args(const mesh::Mesh& m, exec::gpu::CudaDeviceMesh& d, int phi_field, double weight,
            const DeviceRootPotential& root, bool exterior = true) const {
    if (exterior && root_exterior && (!root.phi || !root.phi_prev))
      throw Error(ErrorKind::kInternal, "level 1's potential boxes without the root's exterior");
    Args a{};
    a.now = d.pool(m.current_slot(level - 1));
    a.before = d.pool(m.next_slot(level - 1));
    a.level = d.pool(m.current_slot(level));
    a.patch_reals = d.patch_reals();
    a.first = first.get();
    a.blocks = blocks.get();
    a.coarse = coarse.get();
    a.clamp = clamp.get();
    a.place = place.get();
    a.phi_field = phi_field;
    a.weight = weight;
    a.wn = Real(weight);
    a.wo = Real(1 - weight);
    a.root_exterior = exterior && root_exterior;
    a.root = root;
    return a;
  }
};

}  // namespace tessera::gravity::potential_gpu
