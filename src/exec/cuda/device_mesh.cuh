// The device copy of a patch store (exec/resident.hpp): both time levels of the pool, and
// the gather tables of each level with patches given as pool positions (on several ranks
// the pool holds a rank's own families and its buffer copies of the others', in any order:
// PatchStore::position), so that the gather and scatter kernels read and write the pool
// directly. Shared by the executor (cuda_executor.cu) and the halo exchange (cuda_halo.cu).
#pragma once

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "src/exec/cuda/cuda_util.cuh"
#include "tessera/core/log.hpp"
#include "tessera/exec/resident.hpp"

namespace tessera::exec::gpu {

using tessera::cuda::DeviceBuffer;

// The problem-defined sides' ghost cells of a level for the gather kernel (ProblemGhosts on
// the device): null `side` where the level has none.
struct ProblemArgs {
  const int* side = nullptr;  // 6 per group, offsets into `entries` (-1: not such a side)
  const int* entries = nullptr;
  const Real* states = nullptr;
  int nvar = 0;
};

constexpr int kMaxFields = 32;
struct FieldSigns {
  signed char component[kMaxFields];  // FieldInfo::vector_component of each input field
};

class CudaDeviceMesh final : public DeviceMesh {
 public:
  // The device pools hold the host pool's capacity, so that a regrid that stays within it
  // keeps this copy (regrid()).
  CudaDeviceMesh(const mesh::Mesh& m, const std::vector<std::vector<int>>& groups)
      : patch_reals_(m.patch_reals()),
        patches_(m.store().pool_patches()),
        capacity_(std::max(m.store().pool_capacity_patches(), m.store().pool_patches())) {
    if (m.nvar() > kMaxFields)
      throw Error(ErrorKind::kInternal, strprintf("%d fields: device residency handles at most %d",
                                                  m.nvar(), kMaxFields));
    build_tables(m, groups);
    for (auto& p : pool_) p = DeviceBuffer<Real>(capacity_ * patch_reals_);
    std::vector<int> restricted;
    for (int f = 0; f < m.nvar(); ++f)
      if (m.fields()[f].restricted) restricted.push_back(f);
    restricted_ = to_device(restricted);
    nrestricted_ = static_cast<int>(restricted.size());
    admissible_ = m.fields().admissible();
    for (int f = 0; f < kMaxFields; ++f)
      signs_.component[f] = f < m.nvar() ? static_cast<signed char>(m.fields()[f].vector_component)
                                         : static_cast<signed char>(-1);
  }

  ~CudaDeviceMesh() override { unpin_host(); }

  void upload(const mesh::Mesh& m) override {
    check_shape(m);
    pin_host(m);
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    for (int s = 0; s < 2; ++s)
      TESSERA_CUDA_CHECK(cudaMemcpy(pool_[s].get(), m.store().pool_data(s), bytes_per_slot(),
                                    cudaMemcpyHostToDevice));
    // Where the pool could not be page-locked the copy may return before its last bytes
    // land, and the batches' non-blocking streams do not wait for the legacy stream.
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  }
  void download(mesh::Mesh& m, int slot) override {
    check_shape(m);
    pin_host(m);  // after grow(): at the first copy back
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    m.set_host_stale(slot, false);
    TESSERA_CUDA_CHECK(cudaMemcpy(m.store().pool_data(slot), pool_[slot].get(), bytes_per_slot(),
                                  cudaMemcpyDeviceToHost));
  }
  void copy_fields(const std::vector<int>& fields, int from, int to, int level = -1) override {
    if (level >= 0) return copy_level_fields(fields, from, to, level);
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    const std::size_t pitch = patch_reals_ * sizeof(Real);
    for (const int f : fields)
      TESSERA_CUDA_CHECK(cudaMemcpy2D(pool_[to].get() + std::size_t(f) * mesh::kPatchCells, pitch,
                                      pool_[from].get() + std::size_t(f) * mesh::kPatchCells, pitch,
                                      mesh::kPatchCells * sizeof(Real), patches_,
                                      cudaMemcpyDeviceToDevice));
    // A copy within the GPU returns before it is done: done before the next batches read it.
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  }
  void exchange_fields(const std::vector<int>& fields, int level) override;
  void zero_field(int field) override {
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
    const std::size_t pitch = patch_reals_ * sizeof(Real);
    for (int s = 0; s < 2; ++s)
      TESSERA_CUDA_CHECK(cudaMemset2D(pool_[s].get() + std::size_t(field) * mesh::kPatchCells,
                                      pitch, 0, mesh::kPatchCells * sizeof(Real), patches_));
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());
  }
  long long tables_version() const override { return tables_version_; }
  const GatherTables& tables(int level) const override { return tables_.at(level); }
  int levels() const override { return static_cast<int>(tables_.size()); }
  double bytes() const override {
    double ints = 0;
    for (const GatherTables& t : tables_)
      ints += double(t.blocks.size() + t.codes.size() + t.first_patch.size() + t.coarse.size() +
                     t.clamp.size());
    return 2.0 * bytes_per_slot() + ints * sizeof(int);
  }

  Real* pool(int slot) const { return pool_[slot].get(); }
  std::size_t patch_reals() const { return patch_reals_; }
  const int* blocks(int level) const { return levels_.at(level).blocks.get(); }
  const int* codes(int level) const { return levels_.at(level).codes.get(); }
  const int* first_position(int level) const { return levels_.at(level).first_position.get(); }
  const int* coarse(int level) const { return levels_.at(level).coarse.get(); }
  const int* clamp(int level) const { return levels_.at(level).clamp.get(); }
  const FieldSigns& signs() const { return signs_; }

  void problem_ghosts(const mesh::Mesh& m, int level, int ghost, double time) override {
    Level& d = levels_.at(level);
    if (!tables_[level].problem || (d.pg_ghost == ghost && d.pg_time == time)) return;
    const ProblemGhosts pg = build_problem_ghosts(m, tables_[level], ghost, time);
    TESSERA_CUDA_CHECK(cudaDeviceSynchronize());  // a batch in flight may read the last ones
    d.pg_side = to_device(pg.side);
    d.pg_entries = to_device(pg.entries);
    d.pg_states = to_device(pg.states);
    d.pg_nvar = pg.nvar;
    d.pg_ghost = ghost;
    d.pg_time = time;
  }
  // Those of a batch of `level` at box width `ghost` and time `time` (none where the level
  // has no problem-defined side).
  ProblemArgs problem_args(int level, int ghost, double time) const {
    const Level& d = levels_.at(level);
    if (!tables_[level].problem) return {};
    if (d.pg_ghost != ghost || d.pg_time != time)
      throw Error(ErrorKind::kInternal,
                  strprintf("level %d: a batch at time %.17g without its problem-defined ghost "
                            "cells (made for time %.17g)",
                            level, time, d.pg_time));
    return {d.pg_side.get(), d.pg_entries.get(), d.pg_states.get(), d.pg_nvar};
  }

  // Adaptive levels (cuda_amr.cu; a regrid's data: cuda_regrid.cu).
  void grow(const mesh::Mesh& m, const std::function<void()>& reallocate) override;
  bool regrid(const mesh::Mesh& m, const mesh::MeshChange& change,
              const std::vector<std::vector<int>>& groups, kernels::Physics physics,
              const kernels::PhysicsParams& params, std::vector<double>& speeds) override;
  double prolong(const mesh::Mesh& m, int level, const std::vector<int>& families,
                 kernels::Physics physics, const kernels::PhysicsParams& params) override;
  bool retable(const mesh::Mesh& m, const std::vector<std::vector<int>>& groups) override;
  void set_registers(const mesh::Mesh& m, const FluxRegisters& r) override;
  void finish_fine_step(int level) override;
  std::vector<Real> take_fine(int level, const std::vector<int>& registers) override;
  void put_fine(int level, const std::vector<int>& registers,
                const std::vector<Real>& values) override;
  long long reflux(const mesh::Mesh& m, int level) override;
  void restrict_level(const mesh::Mesh& m, int level) override;
  using DeviceMesh::read_fields;
  void read_fields(const mesh::Mesh& m, const std::vector<int>& patches, int slot,
                   const std::vector<int>& fields, std::vector<Real>& values) override;
  void write_fields(const mesh::Mesh& m, const std::vector<int>& patches, int slot,
                    const std::vector<int>& fields, const std::vector<Real>& values) override;
  void flag(const mesh::Mesh& m, int level, const kernels::FlagCriteria& c,
            kernels::Physics physics, const kernels::PhysicsParams& params,
            std::vector<std::uint32_t>& marks) override;
  // Adds the flux planes of the groups [first_group, first_group + n) of `level`'s tables
  // (`flux`, one group every flux_reals) to the registers, as FluxRegisters::close_group;
  // with `list` (device memory, n entries) the groups first_group + list[i].
  void close_registers(int level, int first_group, int n, const Real* flux, std::size_t flux_reals,
                       double dt, cudaStream_t stream, const int* list = nullptr);

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
  // The host pool is page-locked while this copy exists, so that the copies back for
  // outputs and log lines run at the link's speed (several times a pageable copy's).
  // Best effort: without it they are slower, not wrong. The owner frees this copy before
  // the mesh's pool (or lets grow() follow it). Only the patches in use are pinned (the
  // spare capacity stays untouched host memory), again when a regrid added patches; pinning
  // takes time in proportion to them, so grow() and regrid() leave it to the next copy.
  void pin_host(const mesh::Mesh& m) {
    if (pinned_patches_ >= patches_) return;  // tried for these: a failure is not retried
    unpin_host();
    pinned_patches_ = patches_;
    for (int s = 0; s < 2; ++s) {
      const Real* pool = static_cast<const Real*>(m.store().pool_address(s));
      void* p = const_cast<Real*>(pool);
      host_pool_[s] = pool;
      if (cudaHostRegister(p, bytes_per_slot(), cudaHostRegisterDefault) == cudaSuccess)
        registered_.push_back(p);
      else
        cudaGetLastError();  // clear it: the copies fall back to pageable memory
    }
  }
  void unpin_host() {
    for (void* p : registered_) cudaHostUnregister(p);
    registered_.clear();
    pinned_patches_ = 0;
  }
  void check_shape(const mesh::Mesh& m) const {
    if (m.store().pool_patches() != patches_ || m.patch_reals() != patch_reals_)
      throw Error(ErrorKind::kInternal, "the mesh changed under its device-resident copy");
  }
  // The tables made again for the host's pool as it is now (a regrid).
  void rebuild_tables(const mesh::Mesh& m, const std::vector<std::vector<int>>& groups) {
    patches_ = m.store().pool_patches();
    tables_.clear();
    levels_.clear();
    build_tables(m, groups);
  }
  // Level tables on the device (patches as pool positions) and the families' parents.
  void build_tables(const mesh::Mesh& m, const std::vector<std::vector<int>>& groups) {
    // Unique over every device copy of the process: a copy made again at the same address
    // does not pass for the one before.
    static std::atomic<long long> made{0};
    tables_version_ = ++made;
    for (int level = 0; level < m.num_levels(); ++level) {
      const std::size_t l = static_cast<std::size_t>(level);
      tables_.push_back(build_gather_tables(m, level, l < groups.size() ? &groups[l] : nullptr));
      const GatherTables& t = tables_.back();
      // Patches as pool positions; -1 (beyond a side) and kGatherCoarse stay.
      const auto positions = [&](const std::vector<int>& patches) {
        std::vector<int> out(patches.size());
        for (std::size_t i = 0; i < out.size(); ++i)
          out[i] = patches[i] >= 0 ? position(m, patches[i]) : patches[i];
        return out;
      };
      Level d;
      d.blocks = to_device(positions(t.blocks));
      d.codes = to_device(t.codes);
      d.first_position = to_device(positions(t.first_patch));
      d.coarse = to_device(positions(t.coarse));
      d.clamp = to_device(t.clamp);
      std::vector<int> parents(t.first_patch.size(), -1);
      if (level > 0)
        for (std::size_t g = 0; g < parents.size(); ++g)
          parents[g] = position(m, m.patch(t.first_patch[g]).parent);
      d.parent_position = to_device(parents);
      levels_.push_back(std::move(d));
    }
  }

  void copy_level_fields(const std::vector<int>& fields, int from, int to, int level);

  // One level's tables on the device, patches as pool positions; its families' parents;
  // its flux registers (FluxRegisters' layout: the coarse patch, face and values of each,
  // where each patch's begin, and for each group of the tables the registers its faces
  // close, as FluxRegisters::group_slots gives them).
  struct Level {
    DeviceBuffer<int> blocks, codes, first_position, coarse, clamp, parent_position;
    int registers = 0, runs = 0;
    DeviceBuffer<Real> data, fine;
    DeviceBuffer<int> reg_position, reg_face, reg_runs, group_coarse, group_fine;
    // Its problem-defined sides' ghost cells (problem_ghosts), for this width and time.
    DeviceBuffer<int> pg_side, pg_entries;
    DeviceBuffer<Real> pg_states;
    int pg_nvar = 0, pg_ghost = -1;
    double pg_time = 0;
  };
  DeviceBuffer<int> flux_vars_, restricted_;
  int nflux_ = 0, nrestricted_ = 0;
  kernels::AdmissibleState admissible_;
  DeviceBuffer<unsigned long long> withheld_{1};
  std::vector<GatherTables> tables_;
  std::vector<Level> levels_;
  long long tables_version_ = 0;
  std::size_t patch_reals_;
  std::size_t patches_;   // the host pool's patches (what the copies move)
  std::size_t capacity_;  // patches the device pools hold
  DeviceBuffer<Real> pool_[2];
  const Real* host_pool_[2] = {nullptr, nullptr};  // the host pools uploaded from
  FieldSigns signs_{};
  std::vector<void*> registered_;   // page-locked host pools
  std::size_t pinned_patches_ = 0;  // the patches pin_host last page-locked (or tried to)
  // read_fields' and write_fields' staging: the values packed on the device, and their
  // page-locked copy on the host (a copy from or to pageable memory runs at a fraction of
  // the bus's rate). Grown when a call needs more, kept for the next.
  DeviceBuffer<Real> stage_device_;
  cuda::PinnedBuffer<Real> stage_host_;
  void stage(std::size_t reals);
};

// The halo exchange of a device copy's buffer patches (cuda_halo.cu; Executor::make_halo).
std::unique_ptr<DeviceHalo> make_halo(CudaDeviceMesh& dm, const mesh::Mesh& m, parallel::Comm& comm,
                                      const HaloPlan& plan, const std::string& route);

}  // namespace tessera::exec::gpu
