// GPU kernels as the executor builds them (FMA contraction allowed) against the CPU.
#include "kernel_compare.cuh"

namespace tessera::kernels {
namespace {

TEST(GpuKernels, AgreeWithCpuToRoundOffForEveryScheme) {
  for (const Case& s : all_schemes()) {
    const double worst = compare_with_cpu(s, 12, 7 + scheme_seed(s));
    std::printf("%s: max relative difference %.3e\n", case_name(s).c_str(), worst);
    EXPECT_LE(worst, sizeof(Real) == 8 ? 1e-12 : 1e-4);
  }
}

// The floor and bad-cell paths are compared in the --fmad=false build only
// (test_gpu_bitwise.cu): near vacuum, pressure is the difference of two nearly equal
// energies, so the last-bit differences of contracted multiply-adds grow without bound
// there (measured up to 1e30 relative in floored cells, and one cell more or less floored
// per group), and no tolerance would mean anything.

}  // namespace
}  // namespace tessera::kernels
