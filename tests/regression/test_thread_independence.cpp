// Results must not depend on the number of OpenMP threads: each patch group is computed
// independently and reductions are order-free (max), so runs agree bit for bit.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "run_problem.hpp"

namespace tessera {
namespace {

// The first `nvar` variables of every leaf cell after running `file` with `threads` threads.
std::vector<double> final_state(const std::string& file, std::vector<std::string> overrides,
                                int threads, int nvar, int levels = 1) {
  overrides.push_back("run.threads=" + std::to_string(threads));
  auto sim = testing::run_problem(file, overrides);
  EXPECT_EQ(sim->mesh().num_levels(), levels);
  std::vector<double> out;
  testing::for_each_cell(*sim, [&](std::array<double, 3>, double, const double* u) {
    out.insert(out.end(), u, u + nvar);
  });
  return out;
}

void expect_thread_independent(const std::string& file, const std::vector<std::string>& overrides,
                               int nvar, int levels = 1) {
  const auto one = final_state(file, overrides, 1, nvar, levels);
  const auto two = final_state(file, overrides, 2, nvar, levels);
  ASSERT_EQ(one.size(), two.size());
  EXPECT_TRUE(one == two);
}

TEST(ThreadIndependence, SedovBitwiseEqualFor1And2Threads) {
  expect_thread_independent("sedov/sedov.toml", {"mesh.nx=[32,32,32]", "run.max_steps=20"}, 5);
}

TEST(ThreadIndependence, SelfGravityBitwiseEqualFor1And2Threads) {
  // The FFT Poisson solve and the kicks must not depend on the thread count either (the
  // five conserved variables and phi).
  expect_thread_independent("uniform_sphere/uniform_sphere.toml",
                            {"mesh.nx=[32,32,32]", "run.max_steps=10"}, 6);
}

TEST(ThreadIndependence, RefinedSelfGravityBitwiseEqualFor1And2Threads) {
  // Two refined levels: the SOR passes, the potential correction's V-cycles (sources,
  // restricted residuals, prolongations, all parallel over patches) and the subcycled kicks.
  expect_thread_independent("uniform_sphere/uniform_sphere.toml",
                            {"mesh.nx=[16,16,16]", "amr.max_level=2", "amr.density_refine=[0.5]",
                             "amr.lohner_refine=[0]", "amr.lohner_derefine=[0]", "run.max_steps=2"},
                            6, 3);
}

}  // namespace
}  // namespace tessera
