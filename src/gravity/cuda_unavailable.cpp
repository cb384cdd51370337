// Builds without the CUDA backend: the cuFFT root solve is an input error, the SOR's
// device entry point is never called (the CPU executor runs solve_host).
#include "tessera/core/error.hpp"
#include "tessera/gravity/fft_poisson.hpp"
#include "tessera/gravity/sor_solver.hpp"

namespace tessera::gravity {

std::unique_ptr<RootPoissonSolver> make_cufft_poisson(std::array<int, 3>, double, bool) {
  throw Error(ErrorKind::kInput,
              "the Poisson solve on the GPU (cuFFT) was requested from a build without the "
              "CUDA backend");
}

void SorSolver::solve_device(const exec::DeviceBatch&, void*) const {
  throw Error(ErrorKind::kInternal, "a device SOR solve was requested from a build without CUDA");
}

}  // namespace tessera::gravity
