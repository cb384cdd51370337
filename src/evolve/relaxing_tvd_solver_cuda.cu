// The device solve of the relaxing-TVD scheme: the batch's scratch holds, for its groups,
// the state between sweeps.
#include "kernels/rtvd_cuda.cuh"
#include "tessera/evolve/relaxing_tvd_solver.hpp"

namespace tessera::evolve {

void RelaxingTvdSolver::solve_device(const exec::DeviceBatch& b, void* stream) const {
  // The fused sweeps (rtvd_cuda.cuh) read and write the state between sweeps only; the
  // relaxed-flux arrays of the generic loops are not used on the device. The floor marks
  // follow the states of all the batch's groups (device_scratch_reals).
  const kernels::RtvdArrays a{
      b.in,      b.scratch, nullptr, nullptr,
      nullptr,   nullptr,   b.out,   b.flux,
      b.results, b.count,   nvar(),  b.scratch + std::size_t(b.count) * shape().in_reals()};
  kernels::launch_rtvd(physics_, limiter_, a, params_, static_cast<cudaStream_t>(stream));
}

}  // namespace tessera::evolve
