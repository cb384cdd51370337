// The ranks of a simulation (docs/architecture.md, "Ranks"): every rank holds the whole
// mesh structure and steps the groups of its piece of the partition. Before a level step
// it receives the buffer patches those groups read (the neighbour table's blocks owned by
// other ranks); before an output every patch is gathered on rank 0, which writes it.
// Everything is packed per peer rank in canonical order, one message per peer.
#include <algorithm>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/evolve/simulation.hpp"

namespace tessera::evolve {

void Simulation::repartition() {
  const int ranks = comm_->size(), rank = comm_->rank();
  partition_ = parallel::Partition::along_curve(*mesh_, ranks);
  exchanges_.assign(mesh_->num_levels(), {});
  for (int level = 0; level < mesh_->num_levels(); ++level) {
    LevelExchange& x = exchanges_[level];
    for (const int g : mesh_->groups(level))
      if (partition_.owns(rank, g)) x.groups.push_back(g);
    if (ranks == 1) continue;
    // What rank q receives from this one is what this one sends to q.
    const std::vector<parallel::ExchangePlan> plans =
        parallel::plan_level(*mesh_, partition_, level);
    x.send.resize(ranks);
    x.receive.resize(ranks);
    for (int q = 0; q < ranks; ++q) {
      x.send[q] = plans[q].same_level[rank];
      x.send[q].insert(x.send[q].end(), plans[q].coarse[rank].begin(), plans[q].coarse[rank].end());
      x.receive[q] = plans[rank].same_level[q];
      x.receive[q].insert(x.receive[q].end(), plans[rank].coarse[q].begin(),
                          plans[rank].coarse[q].end());
    }
  }
}

namespace {

// Both time levels of each listed patch, in list order: a buffer's previous state serves
// the time interpolation of finer levels, and one-level fields live in the current slot.
std::vector<double> pack(const mesh::Mesh& m, const std::vector<int>& patches) {
  std::vector<double> buf;
  buf.reserve(patches.size() * 2 * m.patch_reals());
  for (const int p : patches)
    for (int slot = 0; slot < 2; ++slot)
      buf.insert(buf.end(), m.data(slot, p), m.data(slot, p) + m.patch_reals());
  return buf;
}

void unpack(mesh::Mesh& m, const std::vector<int>& patches, const std::vector<double>& buf,
            int from) {
  if (buf.size() != patches.size() * 2 * m.patch_reals())
    throw Error(ErrorKind::kInternal, strprintf("rank %d sent %zu values for %zu patches", from,
                                                buf.size(), patches.size()));
  const double* at = buf.data();
  for (const int p : patches)
    for (int slot = 0; slot < 2; ++slot) {
      std::copy_n(at, m.patch_reals(), m.data(slot, p));
      at += m.patch_reals();
    }
}

}  // namespace

void Simulation::exchange_buffers(int level) const {
  const LevelExchange& x = exchanges_[level];
  std::vector<std::vector<double>> send(comm_->size());
  for (int q = 0; q < comm_->size(); ++q) send[q] = pack(*mesh_, x.send[q]);
  const auto got = comm_->exchange(std::move(send));
  for (int q = 0; q < comm_->size(); ++q) unpack(*mesh_, x.receive[q], got[q], q);
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
  for (int q = 1; q < comm_->size(); ++q) {
    std::vector<int> theirs;
    for (int level = 0; level < mesh_->num_levels(); ++level)
      for (const int g : mesh_->groups(level))
        if (partition_.owns(q, g))
          for (int c = 0; c < mesh::kFamilySize; ++c) theirs.push_back(g + c);
    unpack(*mesh_, theirs, got[q], q);
  }
}

void Simulation::run_on_root(const std::function<void()>& f) {
  if (comm_->size() == 1) return f();
  gather_on_root();
  std::exception_ptr error;
  if (comm_->rank() == 0) try {
      f();
    } catch (...) {
      error = std::current_exception();
    }
  comm_->agree(error);
}

void Simulation::check_ranks_supported() const {
  if (comm_->size() == 1) return;
  auto refuse = [&](const char* what) {
    throw Error(ErrorKind::kInput,
                strprintf("%d ranks: %s run on one rank only for now (the decomposed level step "
                          "has no flux registers, restriction, regrid or Poisson solve across "
                          "ranks yet)",
                          comm_->size(), what));
  };
  if (refinement_.max_level > 0 || mesh_->num_levels() > 1) refuse("adaptive meshes");
  if (gravity_) refuse("self-gravitating runs");
  if (resident_mode_) refuse("device-resident runs");
}

}  // namespace tessera::evolve
