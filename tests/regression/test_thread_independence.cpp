// Results must not depend on the number of OpenMP threads: each patch group is computed
// independently and reductions are order-free (max), so runs agree bit for bit.
#include <gtest/gtest.h>

#include "run_problem.hpp"

namespace tessera {
namespace {

std::vector<double> final_state(int threads) {
  auto sim = testing::run_problem("sedov/sedov.toml", {"mesh.nx=[32,32,32]", "run.max_steps=20",
                                                       "run.threads=" + std::to_string(threads)});
  std::vector<double> out;
  testing::for_each_cell(*sim, [&](std::array<double, 3>, double, const double* u) {
    out.insert(out.end(), u, u + 5);
  });
  return out;
}

TEST(ThreadIndependence, SedovBitwiseEqualFor1And2Threads) {
  const auto one = final_state(1), two = final_state(2);
  ASSERT_EQ(one.size(), two.size());
  EXPECT_TRUE(one == two);
}

TEST(ThreadIndependence, SelfGravityBitwiseEqualFor1And2Threads) {
  // The FFT Poisson solve and the kicks must not depend on the thread count either.
  auto state = [](int threads) {
    auto sim = testing::run_problem(
        "uniform_sphere/uniform_sphere.toml",
        {"mesh.nx=[32,32,32]", "run.max_steps=10", "run.threads=" + std::to_string(threads)});
    std::vector<double> out;
    testing::for_each_cell(*sim, [&](std::array<double, 3>, double, const double* u) {
      out.insert(out.end(), u, u + 6);  // the five conserved variables and phi
    });
    return out;
  };
  const auto one = state(1), two = state(2);
  ASSERT_EQ(one.size(), two.size());
  EXPECT_TRUE(one == two);
}

TEST(ThreadIndependence, RefinedSelfGravityBitwiseEqualFor1And2Threads) {
  // Two refined levels: the SOR passes, the potential correction's V-cycles (sources,
  // restricted residuals, prolongations, all parallel over patches) and the subcycled kicks.
  auto state = [](int threads) {
    auto sim =
        testing::run_problem("uniform_sphere/uniform_sphere.toml",
                             {"mesh.nx=[16,16,16]", "amr.max_level=2", "amr.density_refine=[0.5]",
                              "amr.lohner_refine=[0]", "amr.lohner_derefine=[0]", "run.max_steps=2",
                              "run.threads=" + std::to_string(threads)});
    EXPECT_EQ(sim->mesh().num_levels(), 3);
    std::vector<double> out;
    testing::for_each_cell(*sim, [&](std::array<double, 3>, double, const double* u) {
      out.insert(out.end(), u, u + 6);  // the five conserved variables and phi
    });
    return out;
  };
  const auto one = state(1), two = state(2);
  ASSERT_EQ(one.size(), two.size());
  EXPECT_TRUE(one == two);
}

}  // namespace
}  // namespace tessera
