// Builds without the CUDA backend: the cuFFT root solve is an input error, the SOR's
// device entry point is never called (the CPU executor runs solve_host).
#include "src/gravity/device_correction.hpp"
#include "src/gravity/device_potential.hpp"
#include "src/gravity/device_root.hpp"
#include "src/gravity/device_rows.hpp"
#include "src/gravity/device_slab.hpp"
#include "tessera/core/error.hpp"
#include "tessera/gravity/fft_poisson.hpp"
#include "tessera/gravity/sor_solver.hpp"

namespace tessera::gravity {

namespace {
[[noreturn]] void no_cufft() {
  throw Error(ErrorKind::kInput,
              "the Poisson solve on the GPU (cuFFT) was requested from a build without the "
              "CUDA backend");
}
}  // namespace

std::unique_ptr<RootPoissonSolver> make_cufft3d_poisson(std::array<int, 3>, double, bool) {
  no_cufft();
}

std::unique_ptr<DeviceSlabSolve> make_device_slab_solve(const DeviceSlabSetup&,
                                                        const std::vector<double>&,
                                                        parallel::Comm&) {
  no_cufft();
}

std::unique_ptr<DeviceRootGravity> make_device_root_gravity(std::array<int, 3>) {
  no_cufft();
}

std::unique_ptr<DeviceRows> make_device_rows(const RowPlan&, parallel::Comm&, const std::string&) {
  no_cufft();
}

std::unique_ptr<DevicePotential> make_device_potential() {
  no_cufft();
}

std::unique_ptr<DeviceCorrection> make_device_correction() {
  no_cufft();
}

void SorSolver::solve_device(const exec::DeviceBatch&, void*) const {
  throw Error(ErrorKind::kInternal, "a device SOR solve was requested from a build without CUDA");
}

}  // namespace tessera::gravity
