// The patch-group solver on a GPU: the scheme is dispatched (scheme.hpp) to the
// integrator's stage body (mol_stages.hpp) over the device loops (loop_cuda.cuh). Included
// by the CUDA executor and by the GPU tests (each translation unit gets its own copy, so a
// test can build it with other floating-point flags).
#pragma once

#include "kernels/loop_cuda.cuh"

namespace tessera::kernels {
namespace {

// Enqueues the whole step of a.count groups on stream s; the box arrays of `a` must be
// laid out for ghost_width(sc.integrator) and a.nvar = solver_vars(sc, prm.scalars).
inline void launch_mol(const Scheme& sc, const BoxArrays& a, const MolParams& prm, cudaStream_t s) {
  dispatch_scheme(sc, [&](auto types) { run_integrator(types, CudaLoop{a.count, s}, a, prm); });
}

}  // namespace
}  // namespace tessera::kernels
