// GPU kernels built with --fmad=false: the same operations in the same order as the CPU
// loops, so every output is bitwise equal.
#include "kernel_compare.cuh"

namespace tessera::kernels {
namespace {

TEST(GpuKernelsNoFma, BitwiseEqualToCpuForEveryScheme) {
  for (const Case& s : all_schemes())
    EXPECT_EQ(compare_with_cpu(s, 12, 101 + scheme_seed(s)), 0.0) << case_name(s);
}

// The floor and bad-cell paths: near-vacuum slabs below both floors and one non-finite
// cell in each of 3 groups, for every scheme. The GPU must give every output bit for bit,
// floor the same number of cells per group and report the same first bad cell; the CPU
// must actually floor and find the bad cells, or the comparison would be 0 against 0.
TEST(GpuKernelsNoFma, FloorsAndBadCellsBitwiseEqualToCpu) {
  for (const Case& s : all_schemes()) {
    ExtremeCounts counts;
    EXPECT_EQ(compare_with_cpu(s, 12, 307 + scheme_seed(s), &counts), 0.0) << case_name(s);
    std::printf("%s: %lld floored cells, %d groups with a bad cell\n", case_name(s).c_str(),
                counts.floored, counts.bad_groups);
    EXPECT_GT(counts.floored, 0);
    EXPECT_EQ(counts.bad_groups, 3);  // groups 3, 7 and 11
  }
}

// First-order flux correction: the detecting pass flags (and does not floor) the cells of
// the extreme cases that the step leaves unphysical, non-finite ones included; the
// correcting pass takes first-order fluxes on the faces of flagged cells. Every output
// bit for bit, the same cells flagged and floored per group.
TEST(GpuKernelsNoFma, FirstOrderFluxCorrectionBitwiseEqualToCpu) {
  for (const Case& s : all_schemes()) {
    ExtremeCounts detect, correct;
    EXPECT_EQ(compare_with_cpu(s, 12, 409 + scheme_seed(s), &detect, FofcMode::kDetect), 0.0)
        << case_name(s);
    EXPECT_GT(detect.flagged, 0) << case_name(s);
    EXPECT_EQ(detect.bad_groups, 0) << case_name(s);  // flagged instead
    EXPECT_EQ(compare_with_cpu(s, 12, 509 + scheme_seed(s), &correct, FofcMode::kCorrect), 0.0)
        << case_name(s);
  }
}

// The relaxing-TVD solver: both physics (isothermal with a scalar), every flux limiter,
// forward and backward sweeps, with floors and bad cells.
TEST(GpuKernelsNoFma, RelaxingTvdBitwiseEqualToCpu) {
  int seed = 500;
  for (auto ph : {Physics::kAdiabatic, Physics::kIsothermal})
    for (auto lim :
         {TvdLimiter::kVanLeer, TvdLimiter::kMinmod, TvdLimiter::kMc, TvdLimiter::kSuperbee})
      for (bool forward : {true, false}) {
        const Case cs{{Reconstruction::kPlmMc, RiemannSolver::kHll, Integrator::kRk2, ph},
                      ph == Physics::kIsothermal ? 1 : 0};
        const std::string what = case_name(cs) + " limiter " + std::to_string(int(lim)) +
                                 (forward ? " forward" : " backward");
        EXPECT_EQ(compare_rtvd_with_cpu(cs, lim, forward, 8, ++seed), 0.0) << what;
        ExtremeCounts counts;
        EXPECT_EQ(compare_rtvd_with_cpu(cs, lim, forward, 8, ++seed, &counts), 0.0) << what;
        EXPECT_GT(counts.floored, 0) << what;
        EXPECT_EQ(counts.bad_groups, 2) << what;  // groups 3 and 7
      }
}

}  // namespace
}  // namespace tessera::kernels
