// Exceptions thrown inside OpenMP parallel regions reach the caller (and so main's error
// handling and its exit codes) instead of terminating the process: the region helper on
// its own, then through whole code paths that run user problem code in parallel.
#include <gtest/gtest.h>

#include <omp.h>
#include <algorithm>

#include <string>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/parallel.hpp"
#include "tessera/evolve/schema.hpp"
#include "tessera/evolve/simulation.hpp"
#include "tessera/problem/problem.hpp"

namespace tessera {
namespace {

TEST(ParallelErrors, KeepsTheLowestFailingIterationForAnyThreadCount) {
  for (const int threads : {1, 2, 4, 7}) {
    ParallelErrors errors;
    int ran = 0;
#pragma omp parallel for num_threads(threads) schedule(dynamic) reduction(+ : ran)
    for (int i = 0; i < 1000; ++i)
      errors.run(i, [&] {
        ++ran;
        if (i == 900 || i == 301 || i == 700) throw Error(ErrorKind::kInput, std::to_string(i));
      });
    ASSERT_TRUE(errors.failed());
    try {
      errors.rethrow();
      FAIL() << "nothing rethrown";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInput);
      EXPECT_STREQ(e.what(), "301") << threads << " threads";
    }
    EXPECT_GE(ran, 302);  // every iteration up to the lowest failure ran
  }
}

TEST(ParallelErrors, NothingToRethrowWithoutFailure) {
  ParallelErrors errors;
#pragma omp parallel for num_threads(4)
  for (int i = 0; i < 100; ++i) errors.run(i, [] {});
  EXPECT_FALSE(errors.failed());
  EXPECT_NO_THROW(errors.rethrow());
}

// Problems whose code throws where the mesh is filled and where it is flagged, both done
// by OpenMP loops over patches.
class ThrowingProblem final : public Problem {
 public:
  explicit ThrowingProblem(bool in_refine) : in_refine_(in_refine) {}
  void initial_state(const CellBox& cell, Real* u) const override {
    if (!in_refine_ && cell.center()[0] > 0.75)
      throw Error(ErrorKind::kInput, "initial_state refuses x > 0.75");
    const Real state[5] = {1, 0, 0, 0, 1};
    std::copy(state, state + 5, u);
  }
  bool has_refine_criterion() const override { return in_refine_; }
  bool refine(const CellBox& cell, double, int) const override {
    if (cell.center()[1] > 0.5) throw Error(ErrorKind::kInput, "refine refuses y > 0.5");
    return false;
  }

 private:
  bool in_refine_;
};

const ProblemRegistrar kThrowInit{{"test_throw_init",
                                   "throws in initial_state (tests)",
                                   [] { return std::vector<ParamSpec>{}; },
                                   [](const Params&) -> std::unique_ptr<Problem> {
                                     return std::make_unique<ThrowingProblem>(false);
                                   },
                                   {},
                                   {}}};
const ProblemRegistrar kThrowRefine{{"test_throw_refine",
                                     "throws in refine (tests)",
                                     [] { return std::vector<ParamSpec>{}; },
                                     [](const Params&) -> std::unique_ptr<Problem> {
                                       return std::make_unique<ThrowingProblem>(true);
                                     },
                                     {},
                                     {}}};

void expect_error_from_run(const std::string& problem, const std::string& text) {
  set_log_quiet(true);
  const std::string params =
      "[run]\nt_end = 0.1\nthreads = 4\n[mesh]\nnx = [32, 32, 32]\n"
      "[amr]\nmax_level = 1\n[output]\nenabled = false\n"
      "[problem]\nname = \"" +
      problem + "\"\n";
  evolve::Simulation sim(load_params_from_string(params, "test", {}, parameter_schema()));
  try {
    sim.initialize();
    FAIL() << "no error from " << problem;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(ParallelErrors, ProblemErrorInInitialStateReachesTheCaller) {
  expect_error_from_run("test_throw_init", "initial_state refuses x > 0.75");
}

TEST(ParallelErrors, ProblemErrorInRefineReachesTheCaller) {
  expect_error_from_run("test_throw_refine", "refine refuses y > 0.5");
}

}  // namespace
}  // namespace tessera
