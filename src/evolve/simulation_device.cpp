// Device residency of a simulation (docs/architecture.md, "Data residency"): the device
// copy of the patch data is made at the first step that needs it (and again after anything
// that moved the host pool: a new mesh, a restart, a regrid, an output gathered on rank 0),
// with the halo exchange of its buffer patches on several ranks; the host copy is brought
// up to date before anything on the host reads it.
#include <algorithm>
#include <chrono>
#include <limits>

#include "tessera/core/log.hpp"
#include "tessera/evolve/simulation.hpp"
#include "tessera/parallel/mpi.hpp"

namespace tessera::evolve {
namespace {
// The free memory of gpu_memory() is a share when ranks share the GPU: say so.
std::string shared_text(int sharers) {
  return sharers > 1 ? strprintf(" for each of the %d ranks that share it", sharers) : "";
}
}  // namespace

// Device residency (gpu.resident; docs/architecture.md, "Data residency"): the default
// for GPU runs whose data fit; the log says why a run is staged.
void Simulation::choose_residency(parallel::Comm& comm) {
  const std::string& resident = params_.string("gpu.resident");
  const int batch_param = static_cast<int>(params_.integer("gpu.groups_per_batch"));
  const bool on_gpu = executor_->name() != std::string("cpu");
  const bool refined = params_.integer("amr.max_level") > 0;
  const bool self_gravity = params_.boolean("gravity.enabled");
  if (resident == "on" && !on_gpu)
    throw Error(ErrorKind::kInput,
                strprintf("gpu.resident = \"on\" needs the cuda backend; this run has backend %s",
                          executor_->name()));
  // Ranks that share a GPU (several ranks per GPU, or virtual ranks) plan their device
  // copies from its free memory at the same time: each counts on its share (gpu_memory).
  // The GPU is known by its host and bus id, whatever devices each process is shown.
  gpu_sharers_ = parallel::count_alike(
      comm, parallel::host_name() + ", GPU " + (on_gpu ? exec::cuda_device_bus_id() : ""));
  if (const double most = comm.max(gpu_sharers_); on_gpu && most > 1)
    log_line(
        "note: up to %.0f ranks share a GPU: each plans its device memory within its "
        "share of the GPU's free memory",
        most);
  // Self-gravity stays on the GPU: the root's density, cuFFT solve, potential and kicks
  // (gravity/device_root.hpp), the refined levels' SOR boxes and kicks
  // (gravity/device_potential.hpp) and the potential correction
  // (gravity/device_correction.hpp), each equal to the host's bit for bit. The Evrard
  // collapse (64^3 root + 2 levels, 40 steps, one H200) ran at 2.56e8 cell-updates/s
  // resident against 4.1e7 staged. On several ranks the root solve's density and potential
  // cross the bus (SelfGravity::solve); the refined levels' solves, kicks and correction run
  // on each rank's own groups, their buffer patches refreshed by the halos and the
  // correction's terms sent between the ranks from device memory: the Evrard collapse on
  // two ranks sharing one H100 ran at 1.58e8 cell-updates/s resident against 5.2e6 staged
  // (docs/performance.md), so "auto" keeps these runs on the GPUs too.
  // Problem-defined sides: their ghost cells are evaluated on the host at every level step
  // and sent (ProblemGhosts). The double Mach reflection (root 256 x 64 x 16 + 2 levels,
  // 150 steps, one H200) ran resident at 9.4e7 cell-updates/s against 1.19e8 staged, the
  // tables' making (then serial) taking most of the loop: "auto" stages such runs, "on"
  // keeps them on the GPU.
  const bool problem_bc = mesh_->geometry().problem_boundaries();
  if (resident == "auto" && on_gpu && problem_bc)
    log_line(
        "note: the patch data stay on the host and are staged per batch: the problem-defined "
        "boundaries' ghost cells are evaluated on the host (gpu.resident = \"on\" keeps the "
        "data on the GPU and sends them the ghost cells at every level step)");
  if (resident != "off" && on_gpu && (resident == "on" || !problem_bc)) {
    // Resident batches are 4 groups per multiprocessor unless set: with no host stage to
    // overlap, larger batches only save launches (uniform 256^3 MHD on an H100: +6% in
    // double, +8% in single from 1 to 4 or 8 per SM; docs/performance.md). On several ranks
    // a rank holds its share of the level and the buffer copies around it (taken as half
    // as much again: a piece of 1/2 of 256^3 holds 1/8 of its size in buffers).
    const int ranks = comm.size();
    const double level_bytes =
        ranks == 1 ? memory_.root_bytes : std::min(1.0, 1.5 / ranks) * memory_.root_bytes;
    // The root solve's buffers on the GPU (the cuFFT planes, spectrum and multipliers, as
    // MemoryEstimate counts them on the host, and the resident root's density and two
    // ghosted potentials).
    const double gravity_bytes =
        self_gravity ? sizeof(double) * double(mesh_->geometry().root_cell_count()) *
                           (params_.string("gravity.boundary") == "periodic" ? 8.5 : 28.0)
                     : 0.0;
    const double need =
        level_bytes + (batch_param == 0 ? 4 : 1) * memory_.device_bytes + gravity_bytes;
    const auto dev = gpu_memory();
    if (dev && need > 0.95 * dev->first) {
      if (resident == "on")
        throw Error(ErrorKind::kResources,
                    strprintf("gpu.resident = \"on\": the patch data and buffers need %.2f GB "
                              "of GPU memory and the GPU has %.2f GB free%s; set gpu.resident "
                              "= \"auto\" or \"off\" to stage them through the host",
                              need / 1e9, dev->first / 1e9, shared_text(gpu_sharers_).c_str()));
      log_line(
          "note: the patch data (%.2f GB with the buffers) do not fit in the GPU's %.2f GB "
          "free memory%s: they stay on the host and are staged per batch",
          need / 1e9, dev->first / 1e9, shared_text(gpu_sharers_).c_str());
    } else {
      resident_mode_ = true;
      // How the root solve's density and potential travel on several ranks
      // (SelfGravity::solve).
      const char* root_moves =
          params_.string("mpi.root_fft") == "slabs"
              ? "the root solve's density and potential move between the GPUs and the slabs "
                "of the ranks' cuFFT, GPU to GPU"
              : "the root solve's density and potential cross the bus to and from the ranks' "
                "gathered FFT";
      log_line(
          "device-resident: the patch data (%.2f GB%s) stay on the GPU between steps; the "
          "host copy is updated for outputs, checkpoints and the totals of the log line%s%s",
          level_bytes / 1e9,
          ranks > 1 ? " per rank, about"
          : refined ? " on the root level"
                    : "",
          refined && ranks > 1
              ? "; a regrid's flags and new families are made on the GPUs, the families that "
                "change rank sent between them through the hosts (the hosts plan it; a "
                "problem's own criterion, the Jeans length and the field criteria flag on the "
                "hosts, with the levels copied back)"
          : refined ? "; a regrid's flags and new families are made on the GPU (the host plans "
                      "it; a problem's own criterion, the Jeans length and the field criteria "
                      "flag on the host, with the levels copied back)"
          : self_gravity && ranks > 1
              ? strprintf("; self-gravity's kicks and potential too (%s)", root_moves).c_str()
          : self_gravity ? "; self-gravity's root density, cuFFT solve, potential and kicks "
                           "too"
                         : "",
          refined && self_gravity && ranks > 1
              ? strprintf("; self-gravity's solves, kicks and potential correction on every "
                          "level too (%s)",
                          root_moves)
                    .c_str()
          : refined && self_gravity ? "; self-gravity's solves, kicks and potential correction on "
                                      "every level too"
                                    : "");
    }
  }
}

void Simulation::ensure_device() {
  if (device_current_) return;
  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  const auto t0 = Clock::now();
  double halo_seconds = 0;
  // Several ranks: this rank's groups of each level, those that read no other rank's patch
  // first (the order of a step that overlaps the halo exchange), and the exchanges of each
  // level's buffer patches on the device (collectives: every rank gets here at the same
  // step).
  const bool ranks = comm_->size() > 1;
  std::vector<std::vector<int>> order;
  for (int level = 0; level < (ranks ? mesh_->num_levels() : 1); ++level)
    order.push_back(ranks ? exchanges_[level].overlap : mesh_->groups(level));
  if (!resident_ || resident_->tables(0).groups() != static_cast<int>(order[0].size()) ||
      resident_->levels() != mesh_->num_levels()) {
    drop_halo();
    resident_.reset();  // free the old copy before allocating the new one
    if (mesh_->num_levels() > 1 && !refined_fit()) return;
    resident_ = executor_->make_resident(*mesh_, order);
    // Adaptive levels: their flux registers too (the host's layout; built at each regrid).
    if (mesh_->num_levels() > 1) resident_->set_registers(*mesh_, registers_);
    if (ranks) {
      const auto th = Clock::now();
      make_halos();
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

void Simulation::make_halos() {
  drop_halo();
  // A refined level's plan ends with the coarser level's patches that its coarse-fine
  // ghost cells read: they go in both time levels.
  for (int level = 0; level < mesh_->num_levels(); ++level) {
    const LevelExchange& x = exchanges_[level];
    const exec::HaloPlan plan{x.send, x.receive, x.send_same, x.receive_same};
    halos_.push_back(executor_->make_halo(*resident_, *mesh_, *comm_, plan,
                                          params_.string("mpi.device_exchange")));
  }
  if (halo_logged_) return;
  // The routes every rank took, counted over the pairs (once per run; the root level's,
  // which every rank has).
  long long routes[4] = {0, 0, 0, 0};
  for (int q = 0; q < comm_->size(); ++q) ++routes[static_cast<int>(halos_[0]->route_to(q))];
  for (long long& n : routes) n = comm_->sum(n);
  log_line(
      "device-resident on %d ranks: buffer patches go GPU to GPU (CUDA IPC) between %lld "
      "ordered pairs of ranks, by CUDA-aware MPI between %lld, through page-locked host "
      "memory between %lld (mpi.device_exchange = \"%s\")",
      comm_->size(), routes[int(exec::HaloRoute::kPeer)], routes[int(exec::HaloRoute::kMpi)],
      routes[int(exec::HaloRoute::kHost)], params_.string("mpi.device_exchange").c_str());
  halo_logged_ = true;
}

namespace {
// How much larger than the pool a device-resident adaptive mesh's capacity is made (at its
// device copy, and when a regrid outgrows it). Growing costs the host a copy of its pool
// into new memory (sedov64x5, doubling: two growths, 0.17 s and 0.41 s of 0.86 s of
// regrids): a factor of four makes fewer of them. The host's spare capacity is reserved,
// not touched; the GPU's is allocated, within its free memory.
constexpr double kPoolGrowth = 4.0;
}  // namespace

// An adaptive mesh on the device: both time levels of its whole pool. When a regrid has
// grown it beyond the GPU's free memory, the run goes on staged through the host
// (gpu.resident = "auto"; "on" stops with the figures). Where the GPU has the memory, the
// pool's capacity (which the device copy mirrors) is raised to kPoolGrowth times its size (64
// families more at least) first, so that regrids can grow the mesh on the device without copying
// the levels back (DeviceMesh::regrid); one that grows it beyond that makes a new copy.
// On several ranks every rank decides alike, from the largest store and the least free
// memory of any rank (ranks that share a GPU each count on their share of it).
bool Simulation::refined_fit() {
  const bool ranks = comm_->size() > 1;
  const double patch_bytes = 2.0 * double(mesh_->patch_reals()) * sizeof(Real);
  const double pool = comm_->max(double(mesh_->store().pool_patches()));
  const double need = pool * patch_bytes + memory_.device_bytes;
  auto dev = gpu_memory();
  if (ranks) {
    const double least = comm_->min(dev ? dev->first : std::numeric_limits<double>::infinity());
    if (dev) dev->first = least;
  }
  if (dev && need > 0.9 * dev->first) {
    if (params_.string("gpu.resident") == "on")
      throw Error(ErrorKind::kResources,
                  strprintf("gpu.resident = \"on\": the adaptive mesh's patch data and buffers "
                            "need %.2f GB of GPU memory and the GPU has %.2f GB free%s; set "
                            "gpu.resident = \"auto\" to stage them through the host when they do "
                            "not fit",
                            need / 1e9, dev->first / 1e9, shared_text(gpu_sharers_).c_str()));
    log_line(
        "note: at step %ld the adaptive mesh's patch data (%.2f GB with the buffers) no longer "
        "fit in the GPU's %.2f GB free memory%s: from here on they stay on the host and are "
        "staged per batch",
        step_, need / 1e9, dev->first / 1e9, shared_text(gpu_sharers_).c_str());
    resident_mode_ = false;
    return false;
  }
  // A small mesh grows by large factors at its first regrids: 64 families more at least.
  double room = std::max(kPoolGrowth * pool, pool + 64.0 * mesh::kFamilySize);
  if (dev) room = std::min(room, (0.9 * dev->first - memory_.device_bytes) / patch_bytes);
  const int families = static_cast<int>(room / mesh::kFamilySize);
  if (device_pool_room_ &&
      std::size_t(families) * mesh::kFamilySize > mesh_->pool_capacity_patches())
    mesh_->reserve_families(families);
  // The device copy holds the host pool's whole capacity, which the host may have grown
  // beyond this room on its own (a staged stretch of the run): then it stays staged.
  const double held =
      comm_->max(double(mesh_->pool_capacity_patches())) * patch_bytes + memory_.device_bytes;
  if (dev && held > 0.9 * dev->first) {
    log_line(
        "note: at step %ld the adaptive mesh's pool (%.2f GB with its spare capacity and the "
        "buffers) does not fit in the GPU's %.2f GB free memory%s: it stays on the host and "
        "is staged per batch",
        step_, held / 1e9, dev->first / 1e9, shared_text(gpu_sharers_).c_str());
    resident_mode_ = false;
    return false;
  }
  return true;
}

std::optional<std::pair<double, double>> Simulation::gpu_memory() const {
  auto dev = exec::device_memory();
  if (dev) dev->first /= gpu_sharers_;
  return dev;
}

bool Simulation::grow_device(std::size_t patches) {
  const double patch_bytes = 2.0 * double(mesh_->patch_reals()) * sizeof(Real);
  double room = device_pool_room_ ? std::max(kPoolGrowth * double(patches),
                                             double(patches) + 64.0 * mesh::kFamilySize)
                                  : double(patches);
  // The new pools are allocated beside the old ones.
  if (const auto dev = gpu_memory()) room = std::min(room, 0.9 * dev->first / patch_bytes);
  if (room < double(patches)) return false;
  const int families = static_cast<int>(room / mesh::kFamilySize);
  resident_->grow(*mesh_, [&] { mesh_->reserve_families(families); });
  return true;
}

void Simulation::drop_halo() {
  for (const auto& halo : halos_) {
    if (!halo) continue;
    const std::vector<double> b = halo->bytes_sent();
    for (std::size_t r = 0; r < b.size() && r < halo_bytes_.size(); ++r) halo_bytes_[r] += b[r];
  }
  halos_.clear();
}

void Simulation::release_device() {
  sync_host();
  // Adaptive runs: the other time level too. The host works on the whole pool next (a
  // regrid moves families with both of their time levels and prolongs from both), and the
  // device copy is made again from it. Also with one level left: a regrid on the device
  // that removed every refined family left both host time levels stale.
  if (refinement_.max_level > 0) sync_all_slots();
  free_device();
}

void Simulation::sync_all_slots() const {
  if (!resident_ || !device_current_) return;
  for (int slot = 0; slot < 2; ++slot)
    if (mesh_->host_stale(slot)) resident_->download(*mesh_, slot);
}

void Simulation::free_device() {
  device_current_ = false;
  drop_halo();
  resident_.reset();
}

void Simulation::sync_host() const {
  if (!resident_ || !device_current_) return;
  // Each level's current time level (adaptive levels' may differ).
  for (int slot = 0; slot < 2; ++slot) {
    bool current = false;
    for (int level = 0; level < mesh_->num_levels(); ++level)
      current = current || mesh_->current_slot(level) == slot;
    if (current && mesh_->host_stale(slot)) resident_->download(*mesh_, slot);
  }
}

}  // namespace tessera::evolve
