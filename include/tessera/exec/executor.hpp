// The solve stage of the pipeline: advances a batch of prepared patch groups. The CPU
// executor runs the kernels on OpenMP threads; the CUDA executor runs the same kernel
// source on a GPU with streams. Everything else in the pipeline is shared.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/group_layout.hpp"
#include "tessera/exec/group_solver.hpp"
#include "tessera/exec/resident.hpp"

namespace tessera::exec {

// Host staging of one batch: prepared inputs and the solver's outputs. A device executor
// allocates it in pinned memory (and owns the matching device buffers).
class Staging {
 public:
  virtual ~Staging() = default;
  // Sets the sizes below for `groups` groups of the given shape.
  void set_shape(int groups, const GroupShape& s) {
    capacity = groups, shape = s, ghost = s.ghost;
    in_reals = s.in_reals(), out_reals = s.out_reals(), flux_reals = s.flux_reals();
  }
  GroupShape shape;                         // what one group holds
  int ghost = 0;                            // ghost layers of the input boxes
  std::size_t in_reals = 0;                 // one group's input box
  std::size_t out_reals = 0;                // one group's interior output
  std::size_t flux_reals = 0;               // one group's flux planes
  Real* in = nullptr;                       // capacity * in_reals
  Real* out = nullptr;                      // capacity * out_reals
  Real* flux = nullptr;                     // capacity * flux_reals
  kernels::GroupResult* results = nullptr;  // capacity
  int capacity = 0;
};

// Staging in ordinary host memory (the CPU executor's, and tests').
class HostStaging final : public Staging {
 public:
  HostStaging(int groups, const GroupShape& shape);

 private:
  std::vector<Real> in_, out_, flux_;
  std::vector<kernels::GroupResult> results_;
};

// Seconds spent per stage of the device, summed over batches (zero for the CPU).
struct DeviceTimes {
  double h2d = 0, kernel = 0, d2h = 0;
  double gather = 0;  // device-resident batches: gather and scatter kernels
  double bytes_h2d = 0, bytes_d2h = 0;
};

class Executor {
 public:
  virtual ~Executor() = default;
  virtual const char* name() const = 0;
  // Host staging (and, for a device, its buffers) for `groups` groups of `solver`.
  virtual std::unique_ptr<Staging> allocate(int groups, const GroupSolver& solver) = 0;
  // Starts solving the first `count` groups of `staging`, which must have been allocated
  // for a solver of the same shape and scratch; may return before they are done (the CPU
  // executor finishes them first). The caller must not touch `staging` or change `solver`
  // until wait() has returned.
  virtual void submit(const GroupSolver& solver, Staging& staging, int count) = 0;
  virtual void wait(Staging& staging) = 0;
  virtual DeviceTimes device_times() const { return {}; }
  // Pinned host-to-device bandwidth measured on this machine (bytes/s); 0 on the CPU.
  virtual double pinned_h2d_bandwidth() { return 0; }
  // Groups per batch that suit this executor.
  virtual int preferred_batch() const = 0;

  // Device residency (resident.hpp). A copy of `m`'s patch data in this executor's memory,
  // with the gather tables of each level (none may touch a problem-defined side); null when
  // the executor has none (the CPU). `groups[L]`: the groups of level L's tables, in the
  // order batches run (build_gather_tables); a level beyond them: the mesh's groups.
  virtual std::unique_ptr<DeviceMesh> make_resident(
      const mesh::Mesh& m, const std::vector<std::vector<int>>& groups = {});
  // The exchange of `dm`'s buffer patches with the other ranks of `comm` (a collective);
  // `route`: "auto" (peer within a host, else mpi where the library reads GPU memory, else
  // host), "peer", "mpi" or "host" (Error(kInput) where the route cannot be taken).
  virtual std::unique_ptr<DeviceHalo> make_halo(DeviceMesh& dm, const mesh::Mesh& m,
                                                parallel::Comm& comm, const HaloPlan& plan,
                                                const std::string& route);
  // As submit(), for the groups [rb.first_group, rb.first_group + count) of `dm`'s level:
  // their input boxes (fields from rb.in_first) are gathered on the device from time level
  // rb.read, their interiors scattered into the fields from rb.out_first of time level
  // rb.write; only the per-group results come back to `staging`.
  // in_count >= 0: only that many fields are gathered; the input boxes' other variables
  // are copied from `staging`'s host input boxes (a correcting pass's flags).
  // `level`: the level whose tables the batch's groups index; `coarse`: the parent level's
  // time levels and weight its coarse-fine ghost cells are interpolated from; reflux_dt != 0:
  // the flux planes go to the device's flux registers as FluxRegisters::close_group puts
  // them, with that time step (negative: taken back out); scatter false: the interiors are
  // not written (a solve repeated only for its fluxes).
  struct ResidentBatch {
    int first_group, read, write, in_first, out_first;
    int in_count = -1;
    int level = 0;
    CoarseSlots coarse = {};
    double reflux_dt = 0;
    bool scatter = true;
    double time = 0;  // the level's time: that of its problem-defined ghost cells
    // The pass's own gather (GroupPass::resident_gather) in place of the tables' (null:
    // the tables').
    const DeviceGather* gather = nullptr;
    // The batch's groups (`count` increasing indices in the level's tables) in place of
    // first_group onwards: a correcting pass's flagged groups, wherever they lie. Only with
    // the tables' gather.
    const int* groups = nullptr;
  };
  virtual void submit_resident(const GroupSolver& solver, Staging& staging, int count,
                               DeviceMesh& dm, const ResidentBatch& rb);
  // After wait() on a resident batch: copies its input boxes and new interiors to the
  // host staging (`in`, `out`), for an error report.
  virtual void fetch_resident(Staging& staging, int count);
  // After wait() on a resident batch: copies the new interior of its group `g` alone to
  // the host staging's `out` (the cells flagged for a correcting pass are read there).
  virtual void fetch_resident_output(Staging& staging, int g);
};

std::unique_ptr<Executor> make_cpu_executor();

// The CUDA executor (streams, pinned double-buffered staging). groups_per_batch and
// streams of 0 choose from the device's multiprocessor count. Throws tessera::Error
// when the build has no CUDA backend or no GPU is present.
std::unique_ptr<Executor> make_cuda_executor(int groups_per_batch, int streams);
// Whether this build has the CUDA backend; whether a CUDA device is usable, and its
// description ("NVIDIA H100 ..., 132 SMs").
bool cuda_backend_built();
bool cuda_device_available();
std::string cuda_device_description();
// Makes the GPU of a rank the calling thread's device: the node-local rank modulo the
// GPUs this process sees (several ranks may share one). Returns its index, -1 without GPUs.
int select_cuda_device(int node_rank);
// Free and total memory of the current CUDA device, when there is one.
std::optional<std::pair<double, double>> device_memory();
// The PCI bus id of the current CUDA device ("0000:3b:00.0"): the same GPU's on its host
// whichever devices each process is shown (CUDA_VISIBLE_DEVICES); empty without one.
std::string cuda_device_bus_id();

}  // namespace tessera::exec
