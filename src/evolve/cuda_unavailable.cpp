// Builds without the CUDA backend (TESSERA_CUDA=OFF, or no nvcc at configure time).
#include "tessera/core/error.hpp"
#include "tessera/evolve/executor.hpp"
#include "tessera/evolve/memory.hpp"
#include "tessera/evolve/mol_solver.hpp"
#include "tessera/evolve/relaxing_tvd_solver.hpp"
#include "tessera/gravity/fft_poisson.hpp"
#include "tessera/gravity/sor_solver.hpp"

namespace tessera::evolve {

std::unique_ptr<Executor> make_cuda_executor(int, int) {
  throw Error(ErrorKind::kInput,
              "run.backend = \"cuda\", but this build has no CUDA backend (configure with "
              "TESSERA_CUDA=ON or AUTO on a machine with the CUDA toolkit)");
}

void MolSolver::solve_device(const DeviceBatch&, void*) const {
  throw Error(ErrorKind::kInternal, "a device solve was requested from a build without CUDA");
}

void RelaxingTvdSolver::solve_device(const DeviceBatch&, void*) const {
  throw Error(ErrorKind::kInternal, "a device solve was requested from a build without CUDA");
}

bool cuda_backend_built() {
  return false;
}

bool cuda_device_available() {
  return false;
}

std::string cuda_device_description() {
  return "CUDA backend not built";
}

int select_cuda_device(int) {
  return -1;
}

std::optional<std::pair<double, double>> device_memory() {
  return std::nullopt;
}

}  // namespace tessera::evolve

namespace tessera::gravity {

std::unique_ptr<RootPoissonSolver> make_cufft_poisson(std::array<int, 3>, double, bool) {
  throw Error(ErrorKind::kInput,
              "the Poisson solve on the GPU (cuFFT) was requested from a build without the "
              "CUDA backend");
}

void SorSolver::solve_device(const evolve::DeviceBatch&, void*) const {
  throw Error(ErrorKind::kInternal, "a device SOR solve was requested from a build without CUDA");
}

}  // namespace tessera::gravity
