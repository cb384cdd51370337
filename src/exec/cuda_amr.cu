// Adaptive levels on the device (docs/architecture.md, "Data residency"): the flux
// registers (Berger & Colella 1989; Schive et al. 2010 §2.1), refluxing, restriction and
// the refinement flags of a device-resident mesh, with the operations of the host's
// FluxRegisters (exec/flux_register.cpp), mesh::restrict_family (mesh/prolongation.cpp)
// and flag_patch (evolve/refinement.cpp) in their order, so that a resident adaptive run
// equals the staged one bit for bit. This file is compiled without contractions
// (CMakeLists.txt: --fmad=false), as the host computes these without fused multiply-adds.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "kernels/exact_ops.hpp"
#include "kernels/flagging.hpp"
#include "kernels/group_layout.hpp"
#include "src/exec/cuda/cuda_util.cuh"
#include "src/exec/cuda/device_mesh.cuh"
#include "tessera/core/parallel.hpp"

namespace tessera::exec::gpu {

namespace {

constexpr int P = kernels::kPatchSize;
constexpr int kFace = P * P;

// One block per group and face slot (48 coarse: child c's face f at 6 c + f; 6 fine: the
// group's outer faces), one thread per face cell (a, b) of a patch face.
__global__ void close_registers_kernel(const Real* __restrict__ flux, std::size_t flux_reals,
                                       int nflux, const int* __restrict__ group_coarse,
                                       const int* __restrict__ group_fine, Real* data, Real* fine,
                                       Real rdt, const int* __restrict__ list) {
  constexpr int G = kernels::kGroupSize;
  // g: the group's flux planes in the batch; t: its entry in the tables.
  const int g = blockIdx.x, slot = blockIdx.y, a = threadIdx.x / P, b = threadIdx.x % P;
  const int t = list ? list[g] : g;
  const Real* planes = flux + g * flux_reals;
  const auto plane_value = [&](int dir, int plane, int v, int i, int j) {
    return planes[(kernels::flux_plane(dir, plane) * nflux + v) * kernels::kFaceCells + i * G + j];
  };
  if (slot < 48) {
    const int r = group_coarse[t * 48 + slot];
    if (r < 0) return;
    const int c = slot / 6, face = slot % 6, dir = face / 2, side = face % 2;
    const int pos[3] = {(c & 1) * P, ((c >> 1) & 1) * P, ((c >> 2) & 1) * P};
    int a0, b0;
    kernels::register_transverse(dir, pos, a0, b0);
    const int plane = ((c >> dir) & 1) + side;
    for (int v = 0; v < nflux; ++v)
      data[(std::size_t(r) * nflux + v) * kFace + a * P + b] -=
          kernels::mul_rn(rdt, plane_value(dir, plane, v, a0 + a, b0 + b));
    return;
  }
  const int face = slot - 48;
  const int r = group_fine[t * 6 + face];
  if (r < 0) return;
  const int dir = face / 2, plane = 2 * (face % 2);
  for (int v = 0; v < nflux; ++v) {
    const Real sum = plane_value(dir, plane, v, 2 * a, 2 * b) +
                     plane_value(dir, plane, v, 2 * a, 2 * b + 1) +
                     plane_value(dir, plane, v, 2 * a + 1, 2 * b) +
                     plane_value(dir, plane, v, 2 * a + 1, 2 * b + 1);
    fine[(std::size_t(r) * nflux + v) * kFace + a * P + b] +=
        kernels::mul_rn(kernels::mul_rn(Real(0.25), rdt), sum);
  }
}

// data += fine, fine = -0 (the identity of IEEE addition, as the host keeps it).
__global__ void finish_fine_kernel(Real* data, Real* fine, std::size_t n) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  data[i] += fine[i];
  fine[i] = -Real(0);
}

__global__ void fill_kernel(Real* x, std::size_t n, Real value) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] = value;
}

// One block per listed register, threads over its values: taken out into `buffer` (and
// -0 left), or put in from it.
__global__ void move_fine_kernel(Real* fine, const int* __restrict__ registers, std::size_t reals,
                                 Real* buffer, bool take) {
  Real* r = fine + std::size_t(registers[blockIdx.x]) * reals;
  Real* b = buffer + std::size_t(blockIdx.x) * reals;
  for (std::size_t k = threadIdx.x; k < reals; k += blockDim.x) {
    if (take) {
      b[k] = r[k];
      r[k] = -Real(0);
    } else {
      r[k] = b[k];
    }
  }
}

// One block per listed patch (x) and field (y), threads over its cells: read into
// `buffer` or written from it.
__global__ void move_fields_kernel(Real* pool, std::size_t patch_reals,
                                   const int* __restrict__ positions, FieldSigns fields,
                                   int nfields, Real* buffer, bool read) {
  Real* u = pool + std::size_t(positions[blockIdx.x]) * patch_reals +
            std::size_t(fields.component[blockIdx.y]) * mesh::kPatchCells;
  Real* b = buffer + (std::size_t(blockIdx.x) * nfields + blockIdx.y) * mesh::kPatchCells;
  for (int c = threadIdx.x; c < mesh::kPatchCells; c += blockDim.x) {
    if (read)
      b[c] = u[c];
    else
      u[c] = b[c];
  }
}

// One block per run of a patch's registers (its faces, in order: they share edge cells),
// one thread per face cell; FluxRegisters::reflux_one per register.
__global__ void reflux_kernel(Real* pool, std::size_t patch_reals, const int* __restrict__ runs,
                              const int* __restrict__ reg_position,
                              const int* __restrict__ reg_face, Real* data, const Real* fine,
                              int nflux, const int* __restrict__ flux_vars, Real inv_dx,
                              const kernels::AdmissibleState admissible,
                              unsigned long long* withheld) {
  const int a = threadIdx.x / P, b = threadIdx.x % P;
  Real before[kMaxFields];
  for (int i = runs[blockIdx.x]; i < runs[blockIdx.x + 1]; ++i) {
    // Another rank's register (its coarse patch's rank refluxes it): cleared only.
    if (reg_position[i] < 0) {
      for (int v = 0; v < nflux; ++v) data[(std::size_t(i) * nflux + v) * kFace + a * P + b] = 0;
      continue;
    }
    Real* u = pool + std::size_t(reg_position[i]) * patch_reals;
    const int dir = reg_face[i] / 2, side = reg_face[i] % 2;
    const Real sign = side ? Real(-1) : Real(1);
    const int cell = kernels::register_cell(dir, side, a, b);
    for (int v = 0; v < nflux; ++v) {
      const std::size_t k = (std::size_t(i) * nflux + v) * kFace + a * P + b;
      Real& value = u[std::size_t(flux_vars[v]) * mesh::kPatchCells + cell];
      // FluxRegisters::reflux adds the fine sums first (finish_fine_step; -0 when added).
      const Real reg = data[k] + fine[k];
      before[v] = value;
      value += kernels::mul_rn(kernels::mul_rn(sign, inv_dx), reg);
      data[k] = 0;
    }
    if (admissible && !admissible(u + cell, mesh::kPatchCells)) {
      for (int v = 0; v < nflux; ++v)
        u[std::size_t(flux_vars[v]) * mesh::kPatchCells + cell] = before[v];
      atomicAdd(withheld, 1ULL);
    }
    __syncthreads();  // the next face of the patch may touch this face's edge cells
  }
}

// One block per family and octant of the parent (its child c), one thread per parent cell
// of the octant: mesh::restrict_family's sum in its order.
__global__ void restrict_kernel(const Real* __restrict__ children, Real* parents,
                                std::size_t patch_reals, const int* __restrict__ first_position,
                                const int* __restrict__ parent_position,
                                const int* __restrict__ restricted, int nrestricted) {
  constexpr int h = P / 2;
  const int g = blockIdx.x, c = blockIdx.y;
  const int i = threadIdx.x % h, j = (threadIdx.x / h) % h, k = threadIdx.x / (h * h);
  const Real* uc = children + std::size_t(first_position[g] + c) * patch_reals;
  Real* up = parents + std::size_t(parent_position[g]) * patch_reals;
  const int ox = (c & 1) * h, oy = ((c >> 1) & 1) * h, oz = ((c >> 2) & 1) * h;
  for (int r = 0; r < nrestricted; ++r) {
    const int v = restricted[r];
    Real sum = 0;
    for (int dk = 0; dk < 2; ++dk)
      for (int dj = 0; dj < 2; ++dj)
        for (int di = 0; di < 2; ++di)
          sum += uc[v * mesh::kPatchCells + ((2 * k + dk) * P + (2 * j + dj)) * P + 2 * i + di];
    up[v * mesh::kPatchCells + ((k + oz) * P + (j + oy)) * P + (i + ox)] = Real(0.125) * sum;
  }
}

// One block per family and child patch, threads over the patch's cells, fields in turn:
// copied, or with `exchange` the two time levels' values exchanged.
__global__ void copy_level_kernel(Real* from, Real* to, std::size_t patch_reals,
                                  const int* __restrict__ first_position, FieldSigns fields,
                                  int nfields, bool exchange) {
  const std::size_t patch = std::size_t(first_position[blockIdx.x] + blockIdx.y) * patch_reals;
  for (int f = 0; f < nfields; ++f) {
    const std::size_t at = patch + std::size_t(fields.component[f]) * mesh::kPatchCells;
    for (int c = threadIdx.x; c < mesh::kPatchCells; c += blockDim.x) {
      const Real x = from[at + c];
      if (exchange) from[at + c] = to[at + c];
      to[at + c] = x;
    }
  }
}

// One block per patch of a family (blockIdx.y: the child), one thread per cell: the
// patch's density and pressure with one layer around it in shared memory (converted as
// the host's gather_family, and where the family's neighbourhood has no same-level patch,
// the nearest cell of the patch itself, as patch_halo), then the criteria per cell and
// the patches the flagged cells reach (flag_patch, evolve/refinement.cpp).
template <class Phys>
__global__ void flag_kernel(const Real* __restrict__ pool, std::size_t patch_reals,
                            const int* __restrict__ blocks,
                            const unsigned char* __restrict__ refined,
                            const kernels::FlagCriteria c, const typename Phys::Params params,
                            bool energy, double sound_speed, std::uint32_t* marks) {
  constexpr int H = P + 2, kHalo = H * H * H;
  __shared__ double rho[kHalo], pres[kHalo];
  __shared__ unsigned patch_marks;
  const int g = blockIdx.x, child = blockIdx.y;
  const int* row = blocks + std::size_t(g) * kernels::kGatherBlocks;
  const int o[3] = {(child & 1) * P, ((child >> 1) & 1) * P, ((child >> 2) & 1) * P};
  if (threadIdx.x == 0) patch_marks = 0;
  for (int t = threadIdx.x; t < kHalo; t += blockDim.x) {
    const int h[3] = {t % H - 1, (t / H) % H - 1, t / (H * H) - 1};
    int x[3], b[3];
    for (int d = 0; d < 3; ++d) x[d] = o[d] + h[d], b[d] = (x[d] + P) / P - 1;
    int src = row[(b[0] + 1) + 4 * (b[1] + 1) + 16 * (b[2] + 1)];
    if (src < 0) {
      for (int d = 0; d < 3; ++d) {
        x[d] = o[d] + (h[d] < 0 ? 0 : h[d] > P - 1 ? P - 1 : h[d]);
        b[d] = x[d] / P;
      }
      src = row[(b[0] + 1) + 4 * (b[1] + 1) + 16 * (b[2] + 1)];
    }
    const int local = ((x[2] - b[2] * P) * P + (x[1] - b[1] * P)) * P + (x[0] - b[0] * P);
    const Real* u = pool + std::size_t(src) * patch_reals + local;
    typename Phys::Vars cv;
    for (int v = 0; v < Phys::kNumVars; ++v) cv[v] = u[std::size_t(v) * mesh::kPatchCells];
    const auto w = Phys::cons_to_prim(cv, params);
    rho[t] = w[0];
    pres[t] = energy ? double(w[kernels::HydroAdiabatic::kPres]) : sound_speed * sound_speed * w[0];
  }
  __syncthreads();
  const int i = threadIdx.x % P, j = (threadIdx.x / P) % P, k = threadIdx.x / (P * P);
  const int r = refined[std::size_t(g) * mesh::kFamilySize + child];
  const int cell = ((k + 1) * H + (j + 1)) * H + (i + 1);
  const int s[3] = {1, H, H * H};
  bool flag = false;
  double num, den;
  if (c.lohner_density) {
    kernels::lohner_sums<1, H, H * H>(rho + cell, c.filter, num, den);
    flag = kernels::lohner_exceeds(num, den, c.lohner[r]);
  }
  if (!flag && c.lohner_pressure) {
    kernels::lohner_sums<1, H, H * H>(pres + cell, c.filter, num, den);
    flag = kernels::lohner_exceeds(num, den, c.lohner[r]);
  }
  if (!flag && c.gradient)
    flag = kernels::relative_gradient(rho + cell, s) > c.gradient_threshold[r] ||
           kernels::relative_gradient(pres + cell, s) > c.gradient_threshold[r];
  if (!flag && c.density) flag = rho[cell] > c.density_threshold[r];
  if (flag) {
    const int reach[3] = {kernels::flag_reach_axis(i, c.flag_buffer),
                          kernels::flag_reach_axis(j, c.flag_buffer),
                          kernels::flag_reach_axis(k, c.flag_buffer)};
    atomicOr(&patch_marks, kernels::flag_marks(reach));
  }
  __syncthreads();
  if (threadIdx.x == 0) marks[std::size_t(g) * mesh::kFamilySize + child] = patch_marks;
}

}  // namespace

void CudaDeviceMesh::flag(const mesh::Mesh& m, int level, const kernels::FlagCriteria& c,
                          kernels::Physics physics, const kernels::PhysicsParams& params,
                          std::vector<std::uint32_t>& marks) {
  const GatherTables& t = tables_.at(level);
  const int groups = t.groups();
  marks.assign(std::size_t(groups) * mesh::kFamilySize, 0);
  if (groups == 0) return;
  std::vector<unsigned char> refined(marks.size());
  for (int g = 0; g < groups; ++g)
    for (int ch = 0; ch < mesh::kFamilySize; ++ch)
      refined[std::size_t(g) * mesh::kFamilySize + ch] =
          m.patch(t.first_patch[g] + ch).is_leaf() ? 0 : 1;
  const DeviceBuffer<unsigned char> d_refined = to_device(refined);
  DeviceBuffer<std::uint32_t> d_marks(marks.size());
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  const Real* data = pool(m.current_slot(level));
  const dim3 grid(groups, mesh::kFamilySize);
  const bool energy = physics != kernels::Physics::kIsothermal;
  const double cs = double(params.isothermal.sound_speed);
  switch (physics) {
    case kernels::Physics::kAdiabatic:
      flag_kernel<kernels::HydroAdiabatic><<<grid, mesh::kPatchCells>>>(
          data, patch_reals_, levels_[level].blocks.get(), d_refined.get(), c, params.adiabatic,
          energy, cs, d_marks.get());
      break;
    case kernels::Physics::kIsothermal:
      flag_kernel<kernels::HydroIsothermal><<<grid, mesh::kPatchCells>>>(
          data, patch_reals_, levels_[level].blocks.get(), d_refined.get(), c, params.isothermal,
          energy, cs, d_marks.get());
      break;
    case kernels::Physics::kMhd:
      flag_kernel<kernels::MhdGlm>
          <<<grid, mesh::kPatchCells>>>(data, patch_reals_, levels_[level].blocks.get(),
                                        d_refined.get(), c, params.mhd, energy, cs, d_marks.get());
      break;
  }
  TESSERA_CUDA_CHECK(cudaGetLastError());
  TESSERA_CUDA_CHECK(cudaMemcpy(marks.data(), d_marks.get(), marks.size() * sizeof(std::uint32_t),
                                cudaMemcpyDeviceToHost));
}

void CudaDeviceMesh::set_registers(const mesh::Mesh& m, const FluxRegisters& r) {
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  nflux_ = static_cast<int>(r.flux_vars().size());
  flux_vars_ = to_device(r.flux_vars());
  for (int level = 0; level < levels(); ++level) {
    Level& d = levels_[level];
    d.registers = r.count(level);
    d.data = DeviceBuffer<Real>(std::size_t(d.registers) * nflux_ * kFace);
    d.fine = DeviceBuffer<Real>(std::size_t(d.registers) * nflux_ * kFace);
    if (d.data.size() > 0) {
      fill_kernel<<<(d.data.size() + 255) / 256, 256>>>(d.data.get(), d.data.size(), Real(0));
      fill_kernel<<<(d.fine.size() + 255) / 256, 256>>>(d.fine.get(), d.fine.size(), -Real(0));
      TESSERA_CUDA_CHECK(cudaGetLastError());
    }
    // Another rank's registers (on several ranks: those its coarse patches' ranks hold)
    // have no position: reflux_kernel only clears them.
    std::vector<int> pos(d.registers), face(d.registers);
    for (int i = 0; i < d.registers; ++i)
      pos[i] = r.owns(level, i) ? position(m, r.patch_of(level, i)) : -1,
      face[i] = r.face_of(level, i);
    d.reg_position = to_device(pos);
    d.reg_face = to_device(face);
    d.reg_runs = to_device(r.runs(level));
    d.runs = static_cast<int>(r.runs(level).size()) - 1;
    const GatherTables& t = tables_[level];
    std::vector<int> coarse(t.first_patch.size() * 48), fine(t.first_patch.size() * 6);
    for (std::size_t g = 0; g < t.first_patch.size(); ++g)
      r.group_slots(m, t.first_patch[g], coarse.data() + 48 * g, fine.data() + 6 * g);
    d.group_coarse = to_device(coarse);
    d.group_fine = to_device(fine);
  }
  // The fills above ran on the legacy stream and a copy from pageable memory may return
  // before it lands: the next step's batches (non-blocking streams) add to these registers.
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
}

void CudaDeviceMesh::close_registers(int level, int first_group, int n, const Real* flux,
                                     std::size_t flux_reals, double dt, cudaStream_t stream,
                                     const int* list) {
  if (n <= 0 || level >= levels()) return;
  const Level& d = levels_[level];
  if (d.group_coarse.size() == 0) return;  // no registers were set
  Real* parent_fine = level > 0 ? levels_[level - 1].fine.get() : nullptr;
  close_registers_kernel<<<dim3(n, 54), kFace, 0, stream>>>(
      flux, flux_reals, nflux_, d.group_coarse.get() + std::size_t(first_group) * 48,
      d.group_fine.get() + std::size_t(first_group) * 6, d.data.get(), parent_fine, Real(dt), list);
  TESSERA_CUDA_CHECK(cudaGetLastError());
}

void CudaDeviceMesh::finish_fine_step(int level) {
  if (level < 0 || level >= levels() || levels_[level].registers == 0) return;
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  Level& d = levels_[level];
  const std::size_t n = d.data.size();
  finish_fine_kernel<<<(n + 255) / 256, 256>>>(d.data.get(), d.fine.get(), n);
  TESSERA_CUDA_CHECK(cudaGetLastError());
  // The legacy stream does not order the batches' non-blocking streams: the next fine
  // step's register kernels add to `fine` only after this has cleared it.
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
}

std::vector<Real> CudaDeviceMesh::take_fine(int level, const std::vector<int>& registers) {
  const std::size_t reals = std::size_t(nflux_) * kFace;
  std::vector<Real> values(registers.size() * reals);
  if (registers.empty()) return values;
  Level& d = levels_.at(level);
  const DeviceBuffer<int> list = to_device(registers);
  DeviceBuffer<Real> buffer(values.size());
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());  // the batches that added to them are done
  move_fine_kernel<<<registers.size(), 256>>>(d.fine.get(), list.get(), reals, buffer.get(), true);
  TESSERA_CUDA_CHECK(cudaGetLastError());
  TESSERA_CUDA_CHECK(cudaMemcpy(values.data(), buffer.get(), values.size() * sizeof(Real),
                                cudaMemcpyDeviceToHost));
  return values;
}

void CudaDeviceMesh::put_fine(int level, const std::vector<int>& registers,
                              const std::vector<Real>& values) {
  const std::size_t reals = std::size_t(nflux_) * kFace;
  if (values.size() != registers.size() * reals)
    throw Error(ErrorKind::kInternal, "fine sums of another size than their registers");
  if (registers.empty()) return;
  Level& d = levels_.at(level);
  const DeviceBuffer<int> list = to_device(registers);
  const DeviceBuffer<Real> buffer = to_device(values);
  move_fine_kernel<<<registers.size(), 256>>>(d.fine.get(), list.get(), reals, buffer.get(), false);
  TESSERA_CUDA_CHECK(cudaGetLastError());
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());  // before the buffers are freed
}

namespace {
FieldSigns field_list(const std::vector<int>& fields) {
  if (fields.size() > std::size_t(kMaxFields))
    throw Error(ErrorKind::kInternal, "more fields than a device copy holds");
  FieldSigns list{};  // the fields' indices, in the same small struct
  for (std::size_t i = 0; i < fields.size(); ++i)
    list.component[i] = static_cast<signed char>(fields[i]);
  return list;
}
}  // namespace

void CudaDeviceMesh::stage(std::size_t reals) {
  if (stage_device_.size() >= reals) return;  // the host's copy has the same size
  const std::size_t n = std::max(reals, stage_device_.size() + stage_device_.size() / 2);
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());  // nothing reads the old ones any more
  stage_device_ = DeviceBuffer<Real>();
  stage_host_ = cuda::PinnedBuffer<Real>();
  stage_device_ = DeviceBuffer<Real>(n);
  stage_host_ = cuda::PinnedBuffer<Real>(n);
}

namespace {
// Host memory to host memory with the rank's threads (one thread reaches a fraction of
// the memory's rate).
void copy_values(Real* to, const Real* from, std::size_t n) {
  if constexpr (std::is_same_v<Real, double>)
    parallel_copy(to, from, n);
  else
    std::copy_n(from, n, to);
}
}  // namespace

void CudaDeviceMesh::read_fields(const mesh::Mesh& m, const std::vector<int>& patches, int slot,
                                 const std::vector<int>& fields, std::vector<Real>& values) {
  values.resize(patches.size() * fields.size() * mesh::kPatchCells);
  if (values.empty()) return;
  std::vector<int> positions(patches.size());
  for (std::size_t i = 0; i < patches.size(); ++i) positions[i] = position(m, patches[i]);
  const DeviceBuffer<int> d_positions = to_device(positions);
  stage(values.size());
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());  // the kernels that wrote them are done
  move_fields_kernel<<<dim3(patches.size(), fields.size()), 256>>>(
      pool(slot), patch_reals_, d_positions.get(), field_list(fields),
      static_cast<int>(fields.size()), stage_device_.get(), true);
  TESSERA_CUDA_CHECK(cudaGetLastError());
  TESSERA_CUDA_CHECK(cudaMemcpy(stage_host_.get(), stage_device_.get(),
                                values.size() * sizeof(Real), cudaMemcpyDeviceToHost));
  copy_values(values.data(), stage_host_.get(), values.size());
}

void CudaDeviceMesh::write_fields(const mesh::Mesh& m, const std::vector<int>& patches, int slot,
                                  const std::vector<int>& fields, const std::vector<Real>& values) {
  if (values.size() != patches.size() * fields.size() * mesh::kPatchCells)
    throw Error(ErrorKind::kInternal, "field values of another size than their patches");
  if (values.empty()) return;
  std::vector<int> positions(patches.size());
  for (std::size_t i = 0; i < patches.size(); ++i) positions[i] = position(m, patches[i]);
  const DeviceBuffer<int> d_positions = to_device(positions);
  stage(values.size());
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());  // the last use of the staging is done
  copy_values(stage_host_.get(), values.data(), values.size());
  TESSERA_CUDA_CHECK(cudaMemcpy(stage_device_.get(), stage_host_.get(),
                                values.size() * sizeof(Real), cudaMemcpyHostToDevice));
  move_fields_kernel<<<dim3(patches.size(), fields.size()), 256>>>(
      pool(slot), patch_reals_, d_positions.get(), field_list(fields),
      static_cast<int>(fields.size()), stage_device_.get(), false);
  TESSERA_CUDA_CHECK(cudaGetLastError());
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());  // before the positions are freed
}

long long CudaDeviceMesh::reflux(const mesh::Mesh& m, int level) {
  if (level < 0 || level >= levels() || levels_[level].registers == 0) return 0;
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  Level& d = levels_[level];
  TESSERA_CUDA_CHECK(cudaMemset(withheld_.get(), 0, sizeof(unsigned long long)));
  reflux_kernel<<<d.runs, kFace>>>(pool(m.current_slot(level)), patch_reals_, d.reg_runs.get(),
                                   d.reg_position.get(), d.reg_face.get(), d.data.get(),
                                   d.fine.get(), nflux_, flux_vars_.get(), Real(1 / m.dx(level)),
                                   admissible_, withheld_.get());
  TESSERA_CUDA_CHECK(cudaGetLastError());
  // The fine sums were added: -0 again, as the host's finish_fine_step leaves them.
  fill_kernel<<<(d.fine.size() + 255) / 256, 256>>>(d.fine.get(), d.fine.size(), -Real(0));
  TESSERA_CUDA_CHECK(cudaGetLastError());
  unsigned long long withheld = 0;
  TESSERA_CUDA_CHECK(
      cudaMemcpy(&withheld, withheld_.get(), sizeof(withheld), cudaMemcpyDeviceToHost));
  return static_cast<long long>(withheld);
}

void CudaDeviceMesh::restrict_level(const mesh::Mesh& m, int level) {
  if (level <= 0 || level >= levels() || nrestricted_ == 0) return;
  const int groups = tables_[level].groups();
  if (groups == 0) return;
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  const Level& d = levels_[level];
  restrict_kernel<<<dim3(groups, mesh::kFamilySize), kFace>>>(
      pool(m.current_slot(level)), pool(m.current_slot(level - 1)), patch_reals_,
      d.first_position.get(), d.parent_position.get(), restricted_.get(), nrestricted_);
  TESSERA_CUDA_CHECK(cudaGetLastError());
  // The legacy stream does not order the batches' non-blocking streams: the coarser level's
  // next batch gathers what this wrote. reflux() would wait for it at its start, but a level
  // whose patches all have children (or none next to a finer one) has no registers and
  // returns at once; without this, under a GPU shared with other work, that batch could
  // read the level half restricted (its signal speed, hence the next time step, then
  // differed from run to run).
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
}

void CudaDeviceMesh::copy_level_fields(const std::vector<int>& fields, int from, int to,
                                       int level) {
  const int groups = tables_.at(level).groups();
  if (groups == 0 || fields.empty() || from == to) return;
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  const FieldSigns list = field_list(fields);
  copy_level_kernel<<<dim3(groups, mesh::kFamilySize), 256>>>(
      pool(from), pool(to), patch_reals_, levels_[level].first_position.get(), list,
      static_cast<int>(fields.size()), false);
  TESSERA_CUDA_CHECK(cudaGetLastError());
  // Done before the next pass's batches (on the executor's non-blocking streams) read them.
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
}

void CudaDeviceMesh::exchange_fields(const std::vector<int>& fields, int level) {
  const int groups = tables_.at(level).groups();
  if (groups == 0 || fields.empty()) return;
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());  // the batches that wrote them are done
  const FieldSigns list = field_list(fields);
  copy_level_kernel<<<dim3(groups, mesh::kFamilySize), 256>>>(
      pool(0), pool(1), patch_reals_, levels_[level].first_position.get(), list,
      static_cast<int>(fields.size()), true);
  TESSERA_CUDA_CHECK(cudaGetLastError());
  TESSERA_CUDA_CHECK(cudaDeviceSynchronize());  // as copy_level_fields
}

}  // namespace tessera::exec::gpu
