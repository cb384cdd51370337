// RunWatch (evolve/run_watch.hpp): a time step below 1e-6 of the recent median, or a
// conserved total that changes beyond 1e-6 where nothing may change it, stops the run with a
// numerical error; ordinary variation does not.
#include <gtest/gtest.h>

#include <cmath>

#include "tessera/core/error.hpp"
#include "tessera/evolve/run_watch.hpp"

namespace tessera::evolve {
namespace {

TEST(RunWatch, ACollapsingTimeStepIsANumericalError) {
  RunWatch w;
  // A blast's time step growing, then shrinking by 10% per step for 100 steps (e^-10.5: a
  // factor 3e-5, gradual): never a collapse.
  double dt = 1e-3;
  for (long s = 1; s <= 50; ++s) EXPECT_NO_THROW(w.time_step(s, dt *= 1.05, 0));
  for (long s = 51; s <= 150; ++s) EXPECT_NO_THROW(w.time_step(s, dt *= 0.9, 0));
  try {
    w.time_step(151, dt * 1e-7, 2);
    ADD_FAILURE() << "a step 1e-7 of the last ones passed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNumerical);
    EXPECT_NE(std::string(e.what()).find("step 151: the time step collapsed"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("set by level 2"), std::string::npos) << e.what();
  }
}

TEST(RunWatch, TheFirstStepsAreNotJudged) {
  RunWatch w;
  for (long s = 1; s < static_cast<long>(RunWatch::kMinSteps); ++s) w.time_step(s, 1.0, 0);
  EXPECT_NO_THROW(w.time_step(RunWatch::kMinSteps, 1e-9, 0));  // no median yet
}

TEST(RunWatch, ARunawayTotalIsANumericalError) {
  RunWatch w;
  w.watch_totals({0, 4}, {"mass", "energy"}, {1.0, 0, 0, 0, 2.0});
  EXPECT_NO_THROW(w.totals(10, {1.0 + 1e-9, 5.0, 5.0, 5.0, 2.0 - 1e-9}, 0));  // momenta unwatched
  try {
    w.totals(11, {1.0, 0, 0, 0, 2.0 * (1 + 1e-5)}, 7);
    ADD_FAILURE() << "a change of 1e-5 passed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNumerical);
    EXPECT_NE(std::string(e.what()).find("step 11: the total energy"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("7 cells were floored"), std::string::npos) << e.what();
  }
  EXPECT_THROW(w.totals(12, {std::nan(""), 0, 0, 0, 2.0}, 0), Error);
}

}  // namespace
}  // namespace tessera::evolve
