// A product rounded on its own: never contracted with a following addition into a fused
// multiply-add, whatever the compiler's flags. The data moved between levels (coarse-fine
// ghost cells, flux registers, refluxing) are computed on the host for staged runs and on
// the GPU for device-resident ones; with these products the two agree bit for bit also
// when the solver's kernels are compiled with contractions (TESSERA_CUDA_FMAD).
#pragma once

#include "tessera/core/real.hpp"

namespace tessera::kernels {

TESSERA_HD inline Real mul_rn(Real a, Real b) {
#if defined(__CUDA_ARCH__) && defined(TESSERA_SINGLE_PRECISION)
  return __fmul_rn(a, b);
#elif defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

}  // namespace tessera::kernels
