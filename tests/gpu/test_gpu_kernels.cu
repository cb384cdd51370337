// GPU kernels as the executor builds them (FMA contraction allowed) against the CPU.
#include "kernel_compare.cuh"

namespace tessera::kernels {
namespace {

TEST(GpuKernels, AgreeWithCpuToRoundOffForEveryScheme) {
  for (const Scheme& s : all_schemes()) {
    const double worst = compare_with_cpu(s, 12, 7 + scheme_seed(s));
    std::printf("integrator %d recon %d riemann %d: max relative difference %.3e\n",
                int(s.integrator), int(s.recon), int(s.riemann), worst);
    EXPECT_LE(worst, sizeof(Real) == 8 ? 1e-12 : 1e-4);
  }
}

}  // namespace
}  // namespace tessera::kernels
