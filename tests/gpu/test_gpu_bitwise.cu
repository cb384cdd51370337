// GPU kernels built with --fmad=false: the same operations in the same order as the CPU
// loops, so every output is bitwise equal.
#include "kernel_compare.cuh"

namespace tessera::kernels {
namespace {

TEST(GpuKernelsNoFma, BitwiseEqualToCpuForEveryScheme) {
  for (const Scheme& s : all_schemes())
    EXPECT_EQ(compare_with_cpu(s, 12, 101 + scheme_seed(s)), 0.0)
        << "integrator " << int(s.integrator) << " recon " << int(s.recon) << " riemann "
        << int(s.riemann);
}

}  // namespace
}  // namespace tessera::kernels
