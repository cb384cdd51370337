// Builds without the CUDA backend (TESSERA_CUDA=OFF, or no nvcc at configure time): the
// executor's device queries say so, and asking for the CUDA executor is an input error.
#include "tessera/core/error.hpp"
#include "tessera/exec/executor.hpp"

namespace tessera::exec {

std::unique_ptr<Executor> make_cuda_executor(int, int) {
  throw Error(ErrorKind::kInput,
              "run.backend = \"cuda\", but this build has no CUDA backend (configure with "
              "TESSERA_CUDA=ON or AUTO on a machine with the CUDA toolkit)");
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

std::string cuda_device_bus_id() {
  return {};
}

}  // namespace tessera::exec
