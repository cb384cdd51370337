// Floating-point type and the host/device qualifier shared by every kernel.
#pragma once

#if defined(__CUDACC__)
#define TESSERA_HD __host__ __device__
#else
#define TESSERA_HD
#endif

namespace tessera {

// Real is chosen at configure time (TESSERA_PRECISION=double|single) so one build
// holds one precision; outputs and checkpoints record which.
#if defined(TESSERA_SINGLE_PRECISION)
using Real = float;
inline constexpr const char* kPrecisionName = "single";
#else
using Real = double;
inline constexpr const char* kPrecisionName = "double";
#endif

}  // namespace tessera
