// The solve stage of the pipeline: advances a batch of prepared patch groups. The CPU
// executor runs the kernels on OpenMP threads; the CUDA executor runs the same kernel
// source on a GPU with streams. Everything else in the pipeline is shared.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernels/group_layout.hpp"
#include "kernels/mol_hydro_cpu.hpp"

namespace tessera::evolve {

struct SolveArgs {
  kernels::Scheme scheme;
  kernels::MolParams params;
};

// Per-group buffer sizes, in Reals. The input box depends on the integrator's ghost
// width (kernels::ghost_width): 5 * 24^3 for rk2, 5 * 22^3 for vl2.
constexpr std::size_t group_in_reals(int ghost) {
  return std::size_t(kernels::kNumHydroVars) * kernels::box_cells(ghost);
}
inline constexpr std::size_t kGroupOutReals =
    std::size_t(kernels::kNumHydroVars) * kernels::kGroupCells;
inline constexpr std::size_t kGroupFluxReals =
    std::size_t(kernels::kNumFluxPlanes) * kernels::kNumHydroVars * kernels::kFaceCells;

// Host staging of one batch: prepared inputs and the solver's outputs. A device executor
// allocates it in pinned memory (and owns the matching device buffers).
class Staging {
 public:
  virtual ~Staging() = default;
  int ghost = 0;                            // ghost layers of the input boxes
  std::size_t in_reals = 0;                 // group_in_reals(ghost): one group's input
  Real* in = nullptr;                       // capacity * in_reals
  Real* out = nullptr;                      // capacity * kGroupOutReals
  Real* flux = nullptr;                     // capacity * kGroupFluxReals
  kernels::GroupResult* results = nullptr;  // capacity
  int capacity = 0;
};

// Staging in ordinary host memory (the CPU executor's, and tests').
class HostStaging final : public Staging {
 public:
  HostStaging(int groups, int ghost);

 private:
  std::vector<Real> in_, out_, flux_;
  std::vector<kernels::GroupResult> results_;
};

// Seconds spent per stage of the device, summed over batches (zero for the CPU).
struct DeviceTimes {
  double h2d = 0, kernel = 0, d2h = 0;
  double bytes_h2d = 0, bytes_d2h = 0;
};

class Executor {
 public:
  virtual ~Executor() = default;
  virtual const char* name() const = 0;
  // Host staging for `groups` groups whose input boxes have `ghost` layers.
  virtual std::unique_ptr<Staging> allocate(int groups, int ghost) = 0;
  // Starts advancing the first `count` groups of `staging`, whose ghost width must be
  // that of args.scheme.integrator; may return before they are done (the CPU executor
  // finishes them first). The caller must not touch `staging` until wait() has returned.
  virtual void submit(const SolveArgs& args, Staging& staging, int count) = 0;
  virtual void wait(Staging& staging) = 0;
  virtual DeviceTimes device_times() const { return {}; }
  // Pinned host-to-device bandwidth measured on this machine (bytes/s); 0 on the CPU.
  virtual double pinned_h2d_bandwidth() { return 0; }
  // Groups per batch that suit this executor.
  virtual int preferred_batch() const = 0;
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

}  // namespace tessera::evolve
