// The solve stage of the pipeline: advances a batch of prepared patch groups. The CPU
// executor runs the kernels on OpenMP threads; the CUDA executor runs the same kernel
// source on a GPU with streams. Everything else in the pipeline is shared.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernels/group_layout.hpp"
#include "kernels/mol_cpu.hpp"

namespace tessera::evolve {

struct SolveArgs {
  kernels::Scheme scheme;
  kernels::MolParams params;
  // Variables of the solver's boxes: the physics' and the passive scalars.
  int nvar() const { return kernels::solver_vars(scheme, params.scalars); }
};

// Per-group buffer sizes, in Reals, for boxes of nvar variables. The input box depends on
// the integrator's ghost width (kernels::ghost_width): nvar * 24^3 for rk2, nvar * 22^3
// for vl2.
constexpr std::size_t group_in_reals(int ghost, int nvar) {
  return std::size_t(nvar) * kernels::box_cells(ghost);
}
constexpr std::size_t group_out_reals(int nvar) {
  return std::size_t(nvar) * kernels::kGroupCells;
}
constexpr std::size_t group_flux_reals(int nvar) {
  return std::size_t(kernels::kNumFluxPlanes) * nvar * kernels::kFaceCells;
}

// Host staging of one batch: prepared inputs and the solver's outputs. A device executor
// allocates it in pinned memory (and owns the matching device buffers).
class Staging {
 public:
  virtual ~Staging() = default;
  // Sets the sizes below for groups of `ghost` layers and `nvar` variables.
  void set_shape(int groups, int ghost_layers, int vars) {
    capacity = groups, ghost = ghost_layers, nvar = vars;
    in_reals = group_in_reals(ghost, nvar);
    out_reals = group_out_reals(nvar);
    flux_reals = group_flux_reals(nvar);
  }
  int ghost = 0;                            // ghost layers of the input boxes
  int nvar = 0;                             // variables of every box
  std::size_t in_reals = 0;                 // group_in_reals(ghost, nvar): one group's input
  std::size_t out_reals = 0;                // group_out_reals(nvar)
  std::size_t flux_reals = 0;               // group_flux_reals(nvar)
  Real* in = nullptr;                       // capacity * in_reals
  Real* out = nullptr;                      // capacity * out_reals
  Real* flux = nullptr;                     // capacity * flux_reals
  kernels::GroupResult* results = nullptr;  // capacity
  int capacity = 0;
};

// Staging in ordinary host memory (the CPU executor's, and tests').
class HostStaging final : public Staging {
 public:
  HostStaging(int groups, int ghost, int nvar);

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
  // Host staging for `groups` groups whose input boxes have `ghost` layers of `nvar`
  // variables.
  virtual std::unique_ptr<Staging> allocate(int groups, int ghost, int nvar) = 0;
  // Starts advancing the first `count` groups of `staging`, whose ghost width and
  // variables must be those of args (ghost_width(args.scheme.integrator), args.nvar()); may return
  // before they are done (the CPU executor finishes them first). The caller must not touch
  // `staging` until wait() has returned.
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
