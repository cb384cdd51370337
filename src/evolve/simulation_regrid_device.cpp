// A regrid of device-resident adaptive levels (docs/architecture.md, "Data residency" and
// "Adaptive levels resident on several ranks"): the flags made on the GPU, and on several
// ranks the regrid's data kept there too. The host plans the hierarchy and the partition as
// for a staged run; what the data need is done on the device copy: each family that changes
// rank and each coarse patch a new family's prolongation reads go from the GPU of one rank
// to the GPU of another (through the hosts), and each rank prolongs its new families on its
// GPU. Nothing else is copied between the host and the GPU.
#include <algorithm>
#include <chrono>
#include <unordered_map>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/evolve/simulation.hpp"

namespace tessera::evolve {

std::vector<std::vector<std::uint32_t>> Simulation::flag_on_device() {
  std::vector<std::vector<std::uint32_t>> marks;
  const int top = std::min(refinement_.max_level, mesh_->num_levels());
  std::vector<kernels::FlagCriteria> criteria;
  for (int level = 0; level < top; ++level) {
    const auto c = device_flag_criteria(refinement_, *problem_, level);
    if (!c) break;
    criteria.push_back(*c);
  }
  const bool ranks = comm_->size() > 1;
  const int levels = static_cast<int>(criteria.size());
  // Several ranks: a family's flags read its neighbours (the flag buffer, the gradients at
  // its faces), other ranks' among them: their buffer copies are made current on the device
  // first (the same number of levels on every rank: the criteria are the run's).
  if (ranks)
    for (int level = 0; level < levels; ++level) {
      exec::DeviceHalo& halo = *halos_.at(level);
      start_halo(halo, level);
      halo.finish();
    }
  for (int level = 0; level < levels; ++level) {
    std::vector<std::uint32_t> got;
    resident_->flag(*mesh_, level, criteria[level], model_.physics(), model_.params(), got);
    if (!ranks) {
      marks.push_back(std::move(got));
      continue;
    }
    // The device's tables hold this rank's groups in the order of a step that overlaps the
    // halo (exchanges_.overlap); plan_hierarchy takes them in the level's order.
    const LevelExchange& x = exchanges_[level];
    std::unordered_map<int, std::size_t> index;
    for (std::size_t i = 0; i < x.groups.size(); ++i) index[x.groups[i]] = i;
    if (got.size() != x.overlap.size() * mesh::kFamilySize)
      throw Error(ErrorKind::kInternal,
                  strprintf("level %d: the device flagged %zu patches of %zu", level, got.size(),
                            x.overlap.size() * mesh::kFamilySize));
    std::vector<std::uint32_t> ordered(got.size());
    for (std::size_t i = 0; i < x.overlap.size(); ++i)
      std::copy_n(got.data() + i * mesh::kFamilySize, mesh::kFamilySize,
                  ordered.data() + index.at(x.overlap[i]) * mesh::kFamilySize);
    marks.push_back(std::move(ordered));
  }
  return marks;
}

void Simulation::regrid_ranks_on_device(const mesh::MeshChange& change,
                                        const FamilyOwners& before) {
  partition_levels(true);
  // What this rank's store will hold: what it keeps between regrids, and the coarse patches
  // (a parent and its 26 neighbours) that its new families' prolongation reads
  // (migrate_level). The pool takes them within its capacity, which the device copy
  // mirrors: grown on both sides first where that is too small.
  const int rank = comm_->rank();
  std::vector<char> want = wanted_families();
  for (int level = 1; level < mesh_->num_levels(); ++level) {
    if (std::size_t(level) >= change.added.size()) break;
    for (const int g : change.added[level]) {
      if (!partition_.owns(rank, g)) continue;
      const int parent = mesh_->patch(g).parent;
      for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            const int q = mesh_->neighbours().neighbour(parent, dx, dy, dz);
            if (q >= 0) want[q / mesh::kFamilySize] = 1;
          }
    }
  }
  long long missing = 0;
  for (std::size_t f = 0; f < want.size(); ++f)
    if (want[f] && !mesh_->holds(static_cast<int>(f) * mesh::kFamilySize)) ++missing;
  const long long added = std::max(0LL, missing - static_cast<long long>(mesh_->free_families()));
  const std::size_t patches =
      mesh_->store().pool_patches() + std::size_t(added) * mesh::kFamilySize;
  const bool fits = patches <= mesh_->pool_capacity_patches() || grow_device(patches);
  // Every rank goes on alike: the halos are made again together below.
  if (!agree_all(fits)) {
    log_line(
        "note: at step %ld a regrid's new families do not fit in the GPU's free memory: the "
        "levels are copied back and the regrid is made on the host",
        step_);
    sync_all_slots();
    free_device();
    hold_wanted(false);
    prolong_on_host(change, before);
    return;
  }
  hold_wanted(false);
  using Clock = std::chrono::steady_clock;
  const auto seconds = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  const auto t0 = Clock::now();
  exec::DeviceMesh* const dev = resident_.get();
  migrate_level(0, before, {}, dev);
  for (int level = 1; level < mesh_->num_levels(); ++level) {
    std::vector<int> own;
    migrate_level(level, before, change.added[level], dev);
    for (const int g : change.added[level])
      if (partition_.owns(rank, g)) own.push_back(g);
    const double s = dev->prolong(*mesh_, level, own, model_.physics(), model_.params());
    speeds_[level] = std::max(speeds_[level], comm_->max(s));
  }
  // What the moves read and nothing needs now goes; the positions stay (the device copy
  // mirrors them), released ones are taken first by the next regrid's new families.
  const auto t1 = Clock::now();
  trim_store(false);
  registers_.build(*mesh_, partition_, rank);
  std::vector<std::vector<int>> order;
  for (int level = 0; level < mesh_->num_levels(); ++level)
    order.push_back(exchanges_[level].overlap);
  if (!dev->retable(*mesh_, order))
    throw Error(ErrorKind::kInternal,
                "the host pool moved under its device copy during a regrid on several ranks");
  dev->set_registers(*mesh_, registers_);
  mesh_->set_host_stale(0, true);
  mesh_->set_host_stale(1, true);
  const auto t2 = Clock::now();
  make_halos();
  ++regrid_stats_.device_regrids;
  regrid_stats_.device_data_seconds += seconds(t0, t1);
  regrid_stats_.device_tables_seconds += seconds(t1, t2);
  regrid_stats_.device_halo_seconds += seconds(t2, Clock::now());
}

}  // namespace tessera::evolve
