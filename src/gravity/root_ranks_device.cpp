// The root solve of a resident root level on several ranks with the GPU slabs
// (docs/architecture.md, "Self-gravity on several GPUs"): the density goes from each
// rank's own root patches on its GPU to the z-slabs on the GPUs, the cuFFT slab solve runs
// there, and the potential goes from the slabs to the GPUs of the ranks that read it, each
// move GPU to GPU (device_rows.hpp), with the bits of the host's moves (root_ranks.cpp)
// and of one rank.
#include <chrono>

#include "device_root.hpp"
#include "device_rows.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/exec/resident.hpp"
#include "tessera/gravity/fft_poisson.hpp"
#include "tessera/gravity/self_gravity.hpp"
#include "tessera/parallel/comm.hpp"

namespace tessera::gravity {

void SelfGravity::solve_on_gpus(mesh::Mesh& m, exec::DeviceMesh& resident) {
  using Clock = std::chrono::steady_clock;
  auto t = Clock::now();
  auto since = [&t] {
    const auto now = Clock::now();
    const double s = std::chrono::duration<double>(now - t).count();
    t = now;
    return s;
  };
  SlabPoisson& solver = *slab_solver_;
  // The moves follow the mesh: made again (a collective) when any rank's device tables
  // were, which a regrid or a new device copy does on every rank (and so do the partition
  // and the families a rank holds, which the plans follow).
  const bool stale = moves_version_ != resident.tables_version();
  const bool replan = comm_->max(stale ? 1.0 : 0.0) > 0;
  if (replan) {
    // Every rank closes its mappings of the others' buffers before any frees its own.
    if (density_moves_) {
      density_moves_->disconnect();
      potential_moves_->disconnect();
      comm_->agree(nullptr);
    }
    density_moves_.reset();
    potential_moves_.reset();
    // (The plans' checks agreed: potential_rows's one collective comes before them.)
    RowPlan density, potential;
    parallel::agreed(*comm_, [&] {
      density = density_rows(m, solver);
      potential = potential_rows(m, solver);
    });
    density_moves_ = make_device_rows(density, *comm_, route_);
    potential_moves_ = make_device_rows(potential, *comm_, route_);
    if (moves_version_ < 0 && comm_->rank() == 0)
      log_line("root density and potential between the ranks' GPUs: %s",
               density_moves_->routes().c_str());
    moves_version_ = resident.tables_version();
    since();  // (not a solve's time)
  }
  // A failure of one rank's GPU work is agreed, so that no rank waits for it in a
  // collective.
  const double* own_rho = nullptr;
  double *planes = nullptr, *ghosted = nullptr, *phi = nullptr;
  const std::size_t plane = std::size_t(n_[0]) * n_[1];
  parallel::agreed(*comm_, [&] {
    follow_held(m);  // the boxes of the families held now (potential_rows' readers')
    // The potential's rows land in the boxes as they were laid out when planned: the
    // families held may change only where the moves are planned again.
    if (replan || moves_slots_.empty())
      moves_slots_ = box_slot_;
    else if (moves_slots_ != box_slot_)
      throw Error(ErrorKind::kInternal,
                  "root potential of self-gravity: the boxes changed without the moves");
    make_device_current();  // the previous potential there, before begin_potential's swap
    std::vector<int> own;
    for (const int g : m.groups(0))
      if (partition_->owns(comm_->rank(), g)) own.push_back(g);
    own_rho = device_->own_density(m, resident, own, source_field_);
    planes = device_->slab_density(std::size_t(solver.planes()) * plane);
    ghosted =
        device_->slab_potential(std::size_t(solver.ghosted_planes()) * (n_[0] + 2) * (n_[1] + 2));
  });
  root_times_.read += since();
  density_moves_->move(own_rho, planes);
  double mean = 0;
  if (periodic_) {
    // The mean as SlabPoisson::solve forms it: each plane summed in order, then the planes
    // in order.
    std::vector<double> sums;
    parallel::agreed(*comm_, [&] { sums = device_->plane_sums(solver.planes(), plane); });
    const auto all = comm_->allgather(std::move(sums));
    double sum = 0;
    for (const auto& q : all)
      for (const double s : q) sum += s;
    mean = sum / (double(plane) * n_[2]);
  }
  root_times_.to_slabs += since();
  solver.solve_on_device(planes, four_pi_g_, mean, ghosted);
  root_times_.fft += since();
  root_times_.fft_device += solver.last_device_seconds();
  parallel::agreed(*comm_, [&] { phi = device_->begin_potential(); });
  potential_moves_->move(ghosted, phi);
  root_times_.to_readers += since();
  parallel::agreed(*comm_, [&] { device_->finish_potential(m, resident, phi_field_); });
  root_times_.up += since();
  root_times_.on_gpus = true;
  mean_ = mean;
  host_current_ = false;
  device_current_ = true;
  m.set_host_stale(m.current_slot(0), true);  // the root's phi was written on the device
  ++solves_;
}

}  // namespace tessera::gravity
