// Device residency of a simulation (docs/architecture.md, "Data residency"): the device
// copy of the patch data is made at the first step that needs it (and again after anything
// that moved the host pool: a new mesh, a restart, a regrid, an output gathered on rank 0),
// with the halo exchange of its buffer patches on several ranks; the host copy is brought
// up to date before anything on the host reads it.
#include <chrono>

#include "tessera/core/log.hpp"
#include "tessera/evolve/simulation.hpp"

namespace tessera::evolve {

void Simulation::ensure_device() {
  if (device_current_) return;
  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  const auto t0 = Clock::now();
  double halo_seconds = 0;
  // Several ranks: this rank's groups, those that read no other rank's patch first (the
  // order of a step that overlaps the halo exchange), and the exchange of the buffer
  // patches on the device (a collective: every rank gets here at the same step).
  const bool ranks = comm_->size() > 1;
  const std::vector<int>& groups = ranks ? exchanges_[0].overlap : mesh_->groups(0);
  if (!resident_ || resident_->tables().groups() != static_cast<int>(groups.size())) {
    drop_halo();
    resident_.reset();  // free the old copy before allocating the new one
    resident_ = executor_->make_resident(*mesh_, 0, &groups);
    if (ranks) {
      const auto th = Clock::now();
      const exec::HaloPlan plan{exchanges_[0].send, exchanges_[0].receive};
      halo_ = executor_->make_halo(*resident_, *mesh_, *comm_, plan,
                                   params_.string("mpi.device_exchange"));
      // The routes every rank took, counted over the pairs (once per run).
      long long routes[4] = {0, 0, 0, 0};
      for (int q = 0; q < comm_->size(); ++q) ++routes[static_cast<int>(halo_->route_to(q))];
      for (long long& n : routes) n = comm_->sum(n);
      if (!halo_logged_)
        log_line(
            "device-resident on %d ranks: buffer patches go GPU to GPU (CUDA IPC) between %lld "
            "ordered pairs of ranks, by CUDA-aware MPI between %lld, through page-locked host "
            "memory between %lld (mpi.device_exchange = \"%s\")",
            comm_->size(), routes[int(exec::HaloRoute::kPeer)], routes[int(exec::HaloRoute::kMpi)],
            routes[int(exec::HaloRoute::kHost)], params_.string("mpi.device_exchange").c_str());
      halo_logged_ = true;
      halo_seconds = since(th);
    }
  }
  const auto tu = Clock::now();
  // The host is the newest copy here; a time level still marked stale is one the device
  // wrote and the host never read (the previous state), which nothing reads before the
  // next step overwrites it.
  mesh_->set_host_stale(0, false);
  mesh_->set_host_stale(1, false);
  resident_->upload(*mesh_);
  device_current_ = true;
  // The copy to the GPU (and its set-up: device memory, page-locking the host copy, the
  // halo's routes) is part of the time loop when a step needs it: logged the first time.
  const double seconds = since(t0), upload = since(tu);
  device_setup_seconds_ += seconds;
  if (!device_setup_logged_) {
    const double most[3] = {comm_->max(seconds), comm_->max(halo_seconds), comm_->max(upload)};
    log_line(
        "device-resident: set up in %.3f s%s: the halo's routes %.3f s, page-locking the host "
        "copy and copying it to the GPU %.3f s",
        most[0], ranks ? " (the most of any rank)" : "", most[1], most[2]);
  }
  device_setup_logged_ = true;
}

void Simulation::drop_halo() {
  if (!halo_) return;
  const std::vector<double> b = halo_->bytes_sent();
  for (std::size_t r = 0; r < b.size() && r < halo_bytes_.size(); ++r) halo_bytes_[r] += b[r];
  halo_.reset();
}

void Simulation::release_device() {
  sync_host();
  free_device();
}

void Simulation::free_device() {
  device_current_ = false;
  drop_halo();
  resident_.reset();
}

void Simulation::sync_host() const {
  if (!resident_ || !device_current_) return;
  const int slot = mesh_->current_slot(0);
  if (mesh_->host_stale(slot)) resident_->download(*mesh_, slot);
}

}  // namespace tessera::evolve
