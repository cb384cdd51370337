// The device copy of a patch store (exec/resident.hpp): both time levels of the pool, and
// the gather tables of its level with patches given as pool positions (on several ranks
// the pool holds a rank's own families and its buffer copies of the others', in any order:
// PatchStore::position), so that the gather and scatter kernels read and write the pool
// directly. Shared by the executor (cuda_executor.cu) and the halo exchange (cuda_halo.cu).
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "src/exec/cuda/cuda_util.cuh"
#include "tessera/core/log.hpp"
#include "tessera/exec/resident.hpp"

namespace tessera::exec::gpu {

using tessera::cuda::DeviceBuffer;

constexpr int kMaxFields = 32;
struct FieldSigns {
  signed char component[kMaxFields];  // FieldInfo::vector_component of each input field
};

class CudaDeviceMesh final : public DeviceMesh {
 public:
  CudaDeviceMesh(const mesh::Mesh& m, int level, const std::vector<int>* groups)
      : tables_(build_gather_tables(m, level, groups)),
        patch_reals_(m.patch_reals()),
        patches_(m.store().pool_patches()) {
    if (m.nvar() > kMaxFields)
      throw Error(ErrorKind::kInternal, strprintf("%d fields: device residency handles at most %d",
                                                  m.nvar(), kMaxFields));
    std::vector<int> blocks(tables_.blocks.size()), first(tables_.first_patch.size());
    for (std::size_t b = 0; b < blocks.size(); ++b)
      blocks[b] = tables_.blocks[b] >= 0 ? position(m, tables_.blocks[b]) : -1;
    for (std::size_t g = 0; g < first.size(); ++g) first[g] = position(m, tables_.first_patch[g]);
    for (auto& p : pool_) p = DeviceBuffer<Real>(patches_ * patch_reals_);
    blocks_ = to_device(blocks);
    codes_ = to_device(tables_.codes);
    first_position_ = to_device(first);
    for (int f = 0; f < kMaxFields; ++f)
      signs_.component[f] = f < m.nvar() ? static_cast<signed char>(m.fields()[f].vector_component)
                                         : static_cast<signed char>(-1);
  }

  ~CudaDeviceMesh() override {
    for (void* p : registered_) cudaHostUnregister(p);
  }

  void upload(const mesh::Mesh& m) override {
    check_shape(m);
    // The host pool is page-locked while this copy exists, so that the copies back for
    // outputs and log lines run at the link's speed (several times a pageable copy's).
    // Best effort: without it they are slower, not wrong. The owner frees this copy before
    // the mesh's pool.
    for (int s = 0; s < 2; ++s) {
      void* p = const_cast<Real*>(m.store().pool_data(s));
      if (std::find(registered_.begin(), registered_.end(), p) != registered_.end()) continue;
      if (cudaHostRegister(p, bytes_per_slot(), cudaHostRegisterDefault) == cudaSuccess)
        registered_.push_back(p);
      else
        cudaGetLastError();  // clear it: the copies fall back to pageable memory
    }
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    for (int s = 0; s < 2; ++s)
      TESSERA_CUDA_CHECK(cudaMemcpy(pool_[s].get(), m.store().pool_data(s), bytes_per_slot(),
                                    cudaMemcpyHostToDevice));
  }
  void download(mesh::Mesh& m, int slot) override {
    check_shape(m);
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    m.set_host_stale(slot, false);
    TESSERA_CUDA_CHECK(cudaMemcpy(m.store().pool_data(slot), pool_[slot].get(), bytes_per_slot(),
                                  cudaMemcpyDeviceToHost));
  }
  void copy_fields(const std::vector<int>& fields, int from, int to) override {
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    const std::size_t pitch = patch_reals_ * sizeof(Real);
    for (const int f : fields)
      TESSERA_CUDA_CHECK(cudaMemcpy2D(pool_[to].get() + std::size_t(f) * mesh::kPatchCells, pitch,
                                      pool_[from].get() + std::size_t(f) * mesh::kPatchCells, pitch,
                                      mesh::kPatchCells * sizeof(Real), patches_,
                                      cudaMemcpyDeviceToDevice));
  }
  const GatherTables& tables() const override { return tables_; }
  double bytes() const override {
    return 2.0 * bytes_per_slot() +
           double(tables_.blocks.size() + tables_.codes.size() + tables_.first_patch.size()) *
               sizeof(int);
  }

  Real* pool(int slot) const { return pool_[slot].get(); }
  std::size_t patch_reals() const { return patch_reals_; }
  const int* blocks() const { return blocks_.get(); }
  const int* codes() const { return codes_.get(); }
  const int* first_position() const { return first_position_.get(); }
  const FieldSigns& signs() const { return signs_; }

  // Where patch p lies in the pool (in patches); the pool must hold it.
  static int position(const mesh::Mesh& m, int p) {
    return static_cast<int>(m.store().position(p));
  }
  template <class T>
  static DeviceBuffer<T> to_device(const std::vector<T>& v) {
    DeviceBuffer<T> d(v.size());
    if (!v.empty())
      TESSERA_CUDA_CHECK(
          cudaMemcpy(d.get(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
  }

 private:
  std::size_t bytes_per_slot() const { return patches_ * patch_reals_ * sizeof(Real); }
  void check_shape(const mesh::Mesh& m) const {
    if (m.store().pool_patches() != patches_ || m.patch_reals() != patch_reals_)
      throw Error(ErrorKind::kInternal, "the mesh changed under its device-resident copy");
  }

  GatherTables tables_;
  std::size_t patch_reals_;
  std::size_t patches_;
  DeviceBuffer<Real> pool_[2];
  DeviceBuffer<int> blocks_, codes_, first_position_;
  FieldSigns signs_{};
  std::vector<void*> registered_;  // page-locked host pools
};

// The halo exchange of a device copy's buffer patches (cuda_halo.cu; Executor::make_halo).
std::unique_ptr<DeviceHalo> make_halo(CudaDeviceMesh& dm, const mesh::Mesh& m, parallel::Comm& comm,
                                      const HaloPlan& plan, const std::string& route);

}  // namespace tessera::exec::gpu
