// The ranks of a simulation (docs/architecture.md, "Ranks"): every rank holds the whole
// mesh structure and steps the groups of its piece of the partition. Before a pass that
// reads neighbours it receives the buffer patches those groups read (the neighbour table's
// blocks owned by other ranks); after the finer level's steps the averages of its families
// go to their parents' ranks (the flux registers' contributions to theirs:
// flux_register.cpp); at a regrid the families that change rank move and a new family's
// rank receives the coarse patches its prolongation reads; before an output every patch is
// gathered on rank 0, which writes it. Everything is packed per peer rank in an order both
// sides derive from the mesh, one message per peer.
#include <algorithm>
#include <limits>
#include <numeric>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/parallel.hpp"
#include "tessera/evolve/simulation.hpp"
#include "tessera/io/collective.hpp"
#include "tessera/mesh/prolongation.hpp"
#include "tessera/parallel/mpi.hpp"

namespace tessera::evolve {

void Simulation::repartition(bool trim, bool follow) {
  partition_levels(follow);
  if (comm_->size() > 1) hold_wanted(trim);
}

void Simulation::partition_levels(bool follow) {
  const int ranks = comm_->size(), rank = comm_->rank();
  if (follow && ranks > 1) {
    partition_ =
        parallel::Partition::following(*mesh_, partition_, params_.real("mpi.imbalance_tolerance"),
                                       params_.real("mpi.coarse_fine_cost"));
    regrid_stats_.rebalances += static_cast<long long>(partition_.recut_levels().size());
  } else {
    partition_ =
        parallel::Partition::along_curve(*mesh_, ranks, params_.real("mpi.coarse_fine_cost"));
  }
  exchanges_.assign(mesh_->num_levels(), {});
  for (int level = 0; level < mesh_->num_levels(); ++level) {
    LevelExchange& x = exchanges_[level];
    for (const int g : mesh_->groups(level))
      if (partition_.owns(rank, g)) x.groups.push_back(g);
    if (ranks == 1) continue;
    // What rank q receives from this one is what this one sends to q. The refined levels'
    // Poisson solves read the coarser level around every group.
    const bool every_parent = poisson_ != nullptr;
    const parallel::ExchangePlan in =
        parallel::plan_receives(*mesh_, partition_, rank, level, every_parent);
    const parallel::ExchangePlan out =
        parallel::plan_sends(*mesh_, partition_, rank, level, every_parent);
    x.send.resize(ranks);
    x.receive.resize(ranks);
    x.send_same.resize(ranks);
    x.receive_same.resize(ranks);
    // Interior groups first: those whose ghost zones read only this rank's patches.
    std::vector<int> boundary;
    for (const int g : x.groups)
      (parallel::reads_only_own(*mesh_, partition_, rank, g) ? x.overlap : boundary).push_back(g);
    x.interior = x.overlap.size();
    x.overlap.insert(x.overlap.end(), boundary.begin(), boundary.end());
    for (int q = 0; q < ranks; ++q) {
      x.send_same[q] = out.same_level[q].size();
      x.receive_same[q] = in.same_level[q].size();
      x.send[q] = out.same_level[q];
      x.send[q].insert(x.send[q].end(), out.coarse[q].begin(), out.coarse[q].end());
      x.receive[q] = in.same_level[q];
      x.receive[q].insert(x.receive[q].end(), in.coarse[q].begin(), in.coarse[q].end());
    }
  }
}

void Simulation::hold_wanted(bool trim) {
  // The store: room for every family this rank now needs (what it held before stays until
  // trim_store: a regrid's moves still read it).
  mesh_->make_sparse();
  const std::vector<char> want = wanted_families();
  // An empty store (a new mesh of several ranks) takes exactly the room it needs.
  if (mesh_->held_families() == 0)
    mesh_->reserve_families(static_cast<int>(std::count(want.begin(), want.end(), 1)));
  for (std::size_t f = 0; f < want.size(); ++f)
    if (want[f]) mesh_->hold(static_cast<int>(f) * mesh::kFamilySize);
  if (trim) trim_store();
}

void Simulation::hold_new_store() {
  repartition();
  // Zero in both time levels, as a mesh with data starts (hold() fills with NaN; the first
  // solves of self-gravity read the other time level's potential).
  for (int p = 0; p < mesh_->num_patches(); p += mesh::kFamilySize)
    if (mesh_->holds(p))
      for (int slot = 0; slot < 2; ++slot)
        std::fill_n(mesh_->data(slot, p), mesh::kFamilySize * mesh_->patch_reals(), Real(0));
}

std::vector<char> Simulation::wanted_families() const {
  std::vector<char> want(mesh_->num_patches() / mesh::kFamilySize, 0);
  auto mark = [&](int p) { want[p / mesh::kFamilySize] = 1; };
  for (int level = 0; level < static_cast<int>(exchanges_.size()); ++level) {
    const LevelExchange& x = exchanges_[level];
    for (const int g : x.groups) {
      mark(g);
      if (level > 0) mark(mesh_->patch(g).parent);  // the restriction's target
    }
    for (const auto& list : x.receive)
      for (const int p : list) mark(p);
  }
  return want;
}

void Simulation::trim_store(bool compact) {
  if (comm_->size() == 1) return;
  mesh_->make_sparse();
  const std::vector<char> want = wanted_families();
  for (std::size_t f = 0; f < want.size(); ++f)
    if (!want[f]) mesh_->release(static_cast<int>(f) * mesh::kFamilySize);
  // Compacting copies every held family: only when more than a fifth of the pool is
  // unused room (the next regrid's new families fill released positions first).
  if (compact && mesh_->free_families() * 4 > mesh_->held_families()) mesh_->compact();
}

namespace {

// Where patch i of a list starts in its message: the first `same` patches hold one time
// level, the others two.
std::size_t offset(std::size_t i, std::size_t same, std::size_t n) {
  return i < same ? i * n : (same + 2 * (i - same)) * n;
}

// The listed patches in list order: the first `same` (a level's own neighbours, whose
// ghost zones are read at the current time only; one-level fields live in the current
// slot too) in their current state, the rest (the coarser level's, which finer levels
// interpolate in time) with both time levels. `same` = 0: every patch with both. Copied
// by the OpenMP threads: a message of a large level is tens of megabytes.
std::vector<double> pack(const mesh::Mesh& m, const std::vector<int>& patches,
                         std::size_t same = 0) {
  const std::size_t n = m.patch_reals();
  std::vector<double> buf(offset(patches.size(), same, n));
  ParallelErrors errors;
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < patches.size(); ++i)
    errors.run(static_cast<std::int64_t>(i), [&] {
      const int p = patches[i];
      double* at = buf.data() + offset(i, same, n);
      if (i < same) {
        std::copy_n(m.current(p), n, at);
        return;
      }
      for (int slot = 0; slot < 2; ++slot) std::copy_n(m.data(slot, p), n, at + slot * n);
    });
  errors.rethrow();
  return buf;
}

void unpack(mesh::Mesh& m, const std::vector<int>& patches, std::size_t same,
            const std::vector<double>& buf, int from) {
  const std::size_t n = m.patch_reals();
  if (buf.size() != offset(patches.size(), same, n))
    throw Error(ErrorKind::kInternal, strprintf("rank %d sent %zu values for %zu patches", from,
                                                buf.size(), patches.size()));
  ParallelErrors errors;
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < patches.size(); ++i)
    errors.run(static_cast<std::int64_t>(i), [&] {
      const int p = patches[i];
      const double* at = buf.data() + offset(i, same, n);
      if (i < same) {
        std::copy_n(at, n, m.data(m.current_slot(m.patch(p).level), p));
        return;
      }
      for (int slot = 0; slot < 2; ++slot) std::copy_n(at + slot * n, n, m.data(slot, p));
    });
  errors.rethrow();
}

}  // namespace

void Simulation::poison_families(int level, const std::function<bool(int)>& foreign) const {
  // Only the time levels the host holds: one held on the GPU (a device-resident run that
  // brought only the current one back, as div B's statistics do) cannot be read on the
  // host unnoticed anyway, and writing it would be refused.
  for (const int g : mesh_->groups(level))
    if (foreign(g) && mesh_->holds(g))
      for (int c = 0; c < mesh::kFamilySize; ++c)
        for (int slot = 0; slot < 2; ++slot)
          if (!mesh_->host_stale(slot))
            std::fill_n(mesh_->data(slot, g + c), mesh_->patch_reals(),
                        std::numeric_limits<Real>::quiet_NaN());
}

void Simulation::move_patches(const std::vector<PatchMove>& moves, exec::DeviceMesh* dev) const {
  const int rank = comm_->rank();
  std::vector<std::vector<int>> send(comm_->size()), receive(comm_->size());
  for (const PatchMove& mv : moves) {
    if (mv.from == mv.to) continue;
    if (mv.from == rank) send[mv.to].push_back(mv.patch);
    if (mv.to == rank) receive[mv.from].push_back(mv.patch);
  }
  // Room for what arrives (hold() may move the pool: before any pointer into it is taken).
  for (const auto& list : receive)
    for (const int p : list) mesh_->hold(p - p % mesh::kFamilySize);
  std::vector<std::vector<double>> out(comm_->size());
  for (int q = 0; q < comm_->size(); ++q)
    out[q] = dev ? pack_device(*dev, send[q]) : pack(*mesh_, send[q]);
  const auto got = comm_->exchange(std::move(out));
  for (int q = 0; q < comm_->size(); ++q)
    if (dev)
      unpack_device(*dev, receive[q], got[q], q);
    else
      unpack(*mesh_, receive[q], 0, got[q], q);
}

namespace {
// Every field of the mesh, as DeviceMesh::read_fields and write_fields list them.
std::vector<int> all_fields(const mesh::Mesh& m) {
  std::vector<int> all(m.nvar());
  for (int v = 0; v < m.nvar(); ++v) all[v] = v;
  return all;
}
}  // namespace

// Both time levels of the listed patches from the device copy, as pack() lays them out
// (with same = 0: patch by patch, each time level's data whole).
std::vector<double> Simulation::pack_device(exec::DeviceMesh& dev,
                                            const std::vector<int>& patches) const {
  const std::size_t n = mesh_->patch_reals();
  const std::vector<int> all = all_fields(*mesh_);
  std::vector<double> buf(2 * patches.size() * n);
  for (int slot = 0; slot < 2; ++slot) {
    const std::vector<Real> got = dev.read_fields(*mesh_, patches, slot, all);
    for (std::size_t i = 0; i < patches.size(); ++i)
      std::copy_n(got.data() + i * n, n, buf.data() + (2 * i + slot) * n);
  }
  return buf;
}

void Simulation::unpack_device(exec::DeviceMesh& dev, const std::vector<int>& patches,
                               const std::vector<double>& buf, int from) const {
  const std::size_t n = mesh_->patch_reals();
  if (buf.size() != 2 * patches.size() * n)
    throw Error(ErrorKind::kInternal, strprintf("rank %d sent %zu values for %zu patches", from,
                                                buf.size(), patches.size()));
  const std::vector<int> all = all_fields(*mesh_);
  for (int slot = 0; slot < 2; ++slot) {
    std::vector<Real> values(patches.size() * n);
    for (std::size_t i = 0; i < patches.size(); ++i)
      std::copy_n(buf.data() + (2 * i + slot) * n, n, values.data() + i * n);
    dev.write_fields(*mesh_, patches, slot, all, values);
  }
}

void Simulation::restrict_level(int level) {
  const bool ranks = comm_->size() > 1;
  // Device-resident levels: the device's copy of this rank's families (its tables).
  exec::DeviceMesh* const dev = device_levels() && device_current_ ? resident_.get() : nullptr;
  const auto& groups = ranks ? exchanges_[level].groups : mesh_->groups(level);
  if (dev) {
    dev->restrict_level(*mesh_, level);
  } else {
#pragma omp parallel for schedule(static)
    for (std::size_t g = 0; g < groups.size(); ++g) mesh::restrict_family(*mesh_, groups[g]);
  }
  if (!ranks) return;
  // Each family's average goes to the rank of its parent: the restricted fields of the
  // parent's current state, families in canonical order on both sides.
  const int rank = comm_->rank(), slot = mesh_->current_slot(level - 1);
  const std::vector<int> fields =
      fields_.select([](const mesh::FieldInfo& f) { return f.restricted; });
  std::vector<std::vector<int>> out(comm_->size()), in(comm_->size());
  for (const int g : mesh_->groups(level)) {
    const int parent = mesh_->patch(g).parent;
    const int from = partition_.owner(g), to = partition_.owner(parent);
    if (from == to) continue;
    if (from == rank) out[to].push_back(parent);
    if (to == rank) in[from].push_back(parent);
  }
  const std::size_t n = fields.size() * mesh::kPatchCells;
  std::vector<std::vector<double>> send(comm_->size());
  for (int q = 0; q < comm_->size(); ++q) {
    if (dev) {
      const std::vector<Real> v = dev->read_fields(*mesh_, out[q], slot, fields);
      send[q].assign(v.begin(), v.end());
      continue;
    }
    for (const int parent : out[q]) {
      const Real* u = mesh_->data(slot, parent);
      for (const int v : fields)
        send[q].insert(send[q].end(), u + v * mesh::kPatchCells, u + (v + 1) * mesh::kPatchCells);
    }
  }
  const auto got = comm_->exchange(std::move(send));
  for (int q = 0; q < comm_->size(); ++q) {
    if (got[q].size() != in[q].size() * n)
      throw Error(ErrorKind::kInternal,
                  strprintf("restriction of level %d: rank %d sent %zu values for %zu", level, q,
                            got[q].size(), in[q].size() * n));
    if (dev) {
      dev->write_fields(*mesh_, in[q], slot, fields,
                        std::vector<Real>(got[q].begin(), got[q].end()));
      continue;
    }
    for (std::size_t i = 0; i < in[q].size(); ++i) {
      Real* u = mesh_->data(slot, in[q][i]);
      for (std::size_t f = 0; f < fields.size(); ++f)
        std::copy_n(got[q].data() + i * n + f * mesh::kPatchCells, mesh::kPatchCells,
                    u + fields[f] * mesh::kPatchCells);
    }
  }
}

void Simulation::finish_fine_on_device(int level) {
  if (comm_->size() > 1) {
    // The sums of other ranks' registers go to them, in the registers' order; those of this
    // rank's that other ranks' fine groups made arrive where this rank's own would be.
    std::vector<std::vector<int>> out, in;
    registers_.fine_routes(level, comm_->size(), out, in);
    std::vector<std::vector<double>> send(comm_->size());
    for (int q = 0; q < comm_->size(); ++q) {
      const std::vector<Real> v = resident_->take_fine(level, out[q]);
      send[q].assign(v.begin(), v.end());
    }
    const auto got = comm_->exchange(std::move(send));
    for (int q = 0; q < comm_->size(); ++q)
      resident_->put_fine(level, in[q], std::vector<Real>(got[q].begin(), got[q].end()));
  }
  resident_->finish_fine_step(level);
}

Simulation::FamilyOwners Simulation::family_owners() const {
  FamilyOwners owners(mesh_->num_patches() / mesh::kFamilySize, -1);
  for (int level = 0; level < mesh_->num_levels(); ++level)
    for (const int g : mesh_->groups(level)) owners[g / mesh::kFamilySize] = partition_.owner(g);
  return owners;
}

Simulation::FamilyOwners Simulation::owners_after(const FamilyOwners& before,
                                                  const mesh::MeshChange& change) const {
  // Kept families keep their positions; the moved ones were families from before (a
  // regrid moves the last families into holes, and new ones took the lowest holes), each
  // moved once; new families take freed or new positions.
  constexpr int kF = mesh::kFamilySize;
  FamilyOwners after(mesh_->num_patches() / kF, -1);
  std::copy_n(before.begin(), std::min(before.size(), after.size()), after.begin());
  for (const auto& [from, to] : change.moves) after[to / kF] = before.at(from / kF);
  for (const auto& level : change.added)
    for (const int g : level) after[g / kF] = -1;
  return after;
}

void Simulation::migrate_level(int level, const FamilyOwners& before, const std::vector<int>& added,
                               exec::DeviceMesh* dev) {
  if (poison_foreign_ && !dev)
    poison_families(level, [&](int g) { return before[g / mesh::kFamilySize] != comm_->rank(); });
  std::vector<PatchMove> moves;
  // Families that stay go from their old rank to their new one.
  for (const int g : mesh_->groups(level)) {
    const int was = before[g / mesh::kFamilySize];
    if (was < 0) continue;  // new: prolonged by its rank
    if (was != partition_.owner(g)) ++regrid_stats_.families_migrated;
    for (int c = 0; c < mesh::kFamilySize; ++c) moves.push_back({g + c, was, partition_.owner(g)});
  }
  // A new family's rank receives what its prolongation reads: the parent and the parent's
  // 26 neighbours (prolong_family's box reaches one coarse cell beyond the parent).
  if (level > 0) {
    std::vector<std::pair<int, int>> reads;  // (rank, coarse patch)
    for (const int g : added) {
      const int parent = mesh_->patch(g).parent;
      for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            const int q = mesh_->neighbours().neighbour(parent, dx, dy, dz);
            if (q >= 0) reads.emplace_back(partition_.owner(g), q);
          }
    }
    std::sort(reads.begin(), reads.end());
    reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
    for (const auto& [to, q] : reads) moves.push_back({q, partition_.owner(q), to});
  }
  move_patches(moves, dev);
}

void Simulation::exchange_buffers(int level) const {
  finish_buffers(level, *start_buffers(level));
}

std::unique_ptr<parallel::PendingExchange> Simulation::start_buffers(int level) const {
  const LevelExchange& x = exchanges_[level];
  if (poison_foreign_) {
    poison_families(level, [&](int g) { return !partition_.owns(comm_->rank(), g); });
    // The coarser level's patches it delivers too: a group stepped before they arrive
    // (LevelStep::overlap_groups) must not read them.
    for (int q = 0; q < comm_->size(); ++q)
      for (std::size_t i = x.receive_same[q]; i < x.receive[q].size(); ++i)
        for (int slot = 0; slot < 2; ++slot)
          if (!mesh_->host_stale(slot))
            std::fill_n(mesh_->data(slot, x.receive[q][i]), mesh_->patch_reals(),
                        std::numeric_limits<Real>::quiet_NaN());
  }
  std::vector<std::vector<double>> send(comm_->size());
  for (int q = 0; q < comm_->size(); ++q) {
    send[q] = pack(*mesh_, x.send[q], x.send_same[q]);
    if (q != comm_->rank()) buffer_bytes_ += double(send[q].size() * sizeof(double));
  }
  return comm_->start_exchange(std::move(send));
}

void Simulation::start_halo(exec::DeviceHalo& halo, int level) const {
  if (poison_foreign_ && resident_) {
    const LevelExchange& x = exchanges_[level];
    std::vector<int> patches;
    for (const int g : mesh_->groups(level))
      if (!partition_.owns(comm_->rank(), g) && mesh_->holds(g))
        for (int c = 0; c < mesh::kFamilySize; ++c) patches.push_back(g + c);
    for (int q = 0; q < comm_->size(); ++q)
      patches.insert(patches.end(), x.receive[q].begin() + x.receive_same[q], x.receive[q].end());
    std::vector<int> fields(mesh_->fields().size());
    std::iota(fields.begin(), fields.end(), 0);
    const std::vector<Real> nan(patches.size() * fields.size() * mesh::kPatchCells,
                                std::numeric_limits<Real>::quiet_NaN());
    for (int slot = 0; slot < 2; ++slot)
      resident_->write_fields(*mesh_, patches, slot, fields, nan);
  }
  halo.start(mesh_->current_slot(level));
}

void Simulation::finish_buffers(int level, parallel::PendingExchange& pending) const {
  const LevelExchange& x = exchanges_[level];
  const auto got = pending.finish();
  for (int q = 0; q < comm_->size(); ++q)
    unpack(*mesh_, x.receive[q], x.receive_same[q], got[q], q);
}

void Simulation::gather_on_root() {
  // Every rank sends its own patches of every level to rank 0.
  std::vector<int> mine;
  for (const auto& x : exchanges_)
    for (const int g : x.groups)
      for (int c = 0; c < mesh::kFamilySize; ++c) mine.push_back(g + c);
  std::vector<std::vector<double>> send(comm_->size());
  if (comm_->rank() != 0) send[0] = pack(*mesh_, mine);
  const auto got = comm_->exchange(std::move(send));
  if (comm_->rank() != 0) return;
  // Rank 0 holds every family until the output is written (trim_store after it), each at
  // the position of its first patch, as one rank does (the checkpoint writes slabs of it).
  for (int level = 0; level < mesh_->num_levels(); ++level)
    for (const int g : mesh_->groups(level)) mesh_->hold(g);
  mesh_->make_dense();
  for (int q = 1; q < comm_->size(); ++q) {
    std::vector<int> theirs;
    for (int level = 0; level < mesh_->num_levels(); ++level)
      for (const int g : mesh_->groups(level))
        if (partition_.owns(q, g))
          for (int c = 0; c < mesh::kFamilySize; ++c) theirs.push_back(g + c);
    unpack(*mesh_, theirs, 0, got[q], q);
  }
}

void Simulation::run_on_root(const std::function<void()>& f) {
  if (comm_->size() == 1) return f();
  // Rank 0's store is rebuilt dense for the output, and trimmed after it: the pool moves,
  // so a device copy of it is made again at the next step (every rank alike: the halo's
  // set-up is a collective).
  if (resident_) release_device();
  gather_on_root();
  std::exception_ptr error;
  if (comm_->rank() == 0) try {
      f();
      trim_store();
    } catch (...) {
      error = std::current_exception();
    }
  comm_->agree(error);
}

std::optional<io::Collective> Simulation::collective_output() const {
  if (!io::collective_output_built() || !parallel::is_mpi_world(*comm_) ||
      !params_.boolean("mpi.parallel_io"))
    return std::nullopt;
  io::Collective c;
  c.comm = comm_;
  c.owns = [this](int patch) { return partition_.owns(comm_->rank(), patch); };
  return c;
}

}  // namespace tessera::evolve
