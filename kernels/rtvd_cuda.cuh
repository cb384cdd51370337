// The relaxing-TVD group solver on a GPU (relaxing_tvd.hpp over loop_cuda.cuh). Included by
// the solver's device file and by the GPU tests.
#pragma once

#include "kernels/loop_cuda.cuh"
#include "kernels/relaxing_tvd.hpp"

namespace tessera::kernels {
namespace {

// Enqueues the step of a.count groups on stream s.
inline void launch_rtvd(Physics physics, TvdLimiter limiter, const RtvdArrays& a,
                        const RtvdParams& p, cudaStream_t s) {
  dispatch_rtvd(physics, limiter, [&](auto types) { run_rtvd(types, CudaLoop{a.count, s}, a, p); });
}

}  // namespace
}  // namespace tessera::kernels
