// The device solve of the relaxing-TVD scheme: the batch's scratch holds, for its groups,
// the state between sweeps and the four relaxed-flux arrays of their boxes.
#include "kernels/rtvd_cuda.cuh"
#include "tessera/evolve/relaxing_tvd_solver.hpp"

namespace tessera::evolve {

void RelaxingTvdSolver::solve_device(const DeviceBatch& b, void* stream) const {
  const std::size_t box = shape().in_reals() * b.count;
  Real* s = b.scratch;
  const kernels::RtvdArrays a{b.in,  s,      s + box,   s + 2 * box, s + 3 * box, s + 4 * box,
                              b.out, b.flux, b.results, b.count,     nvar()};
  kernels::launch_rtvd(physics_, limiter_, a, params_, static_cast<cudaStream_t>(stream));
}

}  // namespace tessera::evolve
