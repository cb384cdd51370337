// The GPU part of SlabPoisson (fft_poisson.hpp) when the ranks solve on their GPUs: the
// same z-slab transform as SlabFft3d (slab_fft.hpp), its passes done by cuFFT and its
// transposes GPU to GPU (src/gravity/slab_poisson_cuda.cu; docs/architecture.md,
// "Self-gravity on several GPUs").
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "tessera/parallel/comm.hpp"

namespace tessera::gravity {

struct DeviceSlabSetup {
  std::array<int, 3> n{};       // the root grid
  std::array<int, 3> m{};       // the transform grid (n, or 2n for isolated boundaries)
  int data_planes = 0;          // input planes of the transform (SlabFft3d's data_planes)
  std::vector<int> out_planes;  // the transform's planes behind the ghosted planes
  bool periodic = true;
  std::string route;  // mpi.device_exchange: auto, peer, mpi or host
};

class DeviceSlabSolve {
 public:
  virtual ~DeviceSlabSolve() = default;
  // A collective: this rank's density planes (rho, [planes][n1][n0] on the host) to its
  // ghosted potential planes ([out_count][n1 + 2][n0 + 2] on the host). The source is
  // fill_scale (rho - mean) (periodic) or rho (isolated); each mode is multiplied by
  // multiplier (periodic) or mode_scale * multiplier (isolated), as SlabPoisson::solve does.
  virtual void solve(const double* rho, int planes, double fill_scale, double mean,
                     double mode_scale, double* ghosted) = 0;
  // The same solve from and to GPU memory (a device-resident run; a collective on several
  // ranks): this rank's density planes `rho` and ghosted potential planes `ghosted` are
  // device pointers, nothing crosses the bus. Returns once the potential is written.
  virtual void solve_on_device(const double* rho, int planes, double fill_scale, double mean,
                               double mode_scale, double* ghosted) = 0;
  // The GPU's time of the last solve (fill to ghost gather, the transposes included) and
  // the bytes this rank sent to others by each route (GPU to GPU, through the host).
  virtual double last_device_seconds() const = 0;
  virtual double peer_bytes() const = 0;
  virtual double host_bytes() const = 0;
  // How the transposes travel, for the log ("GPU to GPU (CUDA IPC)", ...).
  virtual std::string routes() const = 0;
};

// A collective. multipliers: this rank's modes, [y_count][m2][m0 / 2 + 1] (SlabFft3d's
// spectrum layout). Throws Error(kInput) in a build without the CUDA backend.
std::unique_ptr<DeviceSlabSolve> make_device_slab_solve(const DeviceSlabSetup& setup,
                                                        const std::vector<double>& multipliers,
                                                        parallel::Comm& comm);

}  // namespace tessera::gravity
