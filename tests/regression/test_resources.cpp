// Runs that cannot fit are refused before they allocate, with the figures and exit code 6
// (not std::bad_alloc after minutes, not the OOM killer), and thread requests beyond the
// machine are capped with a note.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "cli_run.hpp"

namespace {

using Result = tessera::testing::CliResult;

Result run(const std::string& args) {
  return tessera::testing::run_tessera(args);
}

const std::string kSource = TESSERA_SOURCE_DIR;

void expect_contains(const Result& r, const std::vector<std::string>& needles) {
  for (const auto& n : needles)
    EXPECT_NE(r.output.find(n), std::string::npos) << "missing '" << n << "' in:\n" << r.output;
}

// 4096^3 root cells: 5.5 TB of field data. Both check and run refuse at once, with the figure.
TEST(Resources, RootGridLargerThanTheMachineIsRefusedBeforeAllocating) {
  for (const char* command : {"check", "run"}) {
    const Result r = run(std::string(command) + " " + kSource +
                         "/problems/sod/sod.toml mesh.nx=[4096,4096,4096] mesh.xmax=[1,1,1] "
                         "output.enabled=false output.dir=/tmp/tessera_resources_root");
    EXPECT_EQ(r.status, 6) << command << ":\n" << r.output;
    expect_contains(
        r, {"needs about 5497", "GB of host memory", "134217728 patches", "use a coarser mesh.nx"});
    EXPECT_LT(r.seconds, 20) << command;
  }
}

TEST(Resources, MemoryLimitBelowTheRootGridIsRefused) {
  const Result r = run("check " + kSource + "/problems/sedov/sedov.toml run.memory_limit=0.02");
  EXPECT_EQ(r.status, 6) << r.output;
  expect_contains(r, {"run.memory_limit = 0.02 GB"});
  // Two threads: the buffers grow with the threads (15 MB each), and a host of 130 cores
  // would need more than 2 GB.
  const Result ok =
      run("check " + kSource + "/problems/sedov/sedov.toml run.memory_limit=2 run.threads=2");
  EXPECT_EQ(ok.status, 0) << ok.output;
  expect_contains(ok, {"# memory: root level", "host memory available 2.0 GB"});
}

// The memory line lists every part of what the run is refused for: a limit a little above
// the listed parts' sum passes, one a little below is refused (before, a fixed 0.25 GB of
// "overhead" was added without being listed, so a limit above the listed sum could fail).
TEST(Resources, MemoryLineListsEverythingTheLimitIsCheckedAgainst) {
  const std::string file = kSource + "/problems/sedov/sedov.toml";
  const Result r = run("check " + file);
  ASSERT_EQ(r.status, 0) << r.output;
  const std::size_t at = r.output.find("# memory: ");
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::string line = r.output.substr(at, r.output.find('\n', at) - at);
  double sum = 0;
  for (const char* part : {"root level ", "threads, program ", "plot file staging "}) {
    const std::size_t p = line.find(part);
    ASSERT_NE(p, std::string::npos) << "no '" << part << "' in: " << line;
    sum += std::stod(line.substr(p + std::string(part).size()));
  }
  const std::size_t b = line.find("buffers ");
  ASSERT_NE(b, std::string::npos) << line;
  sum += std::stod(line.substr(b + 8));
  // Each part is printed to 1e-3 GB (below 0.1 GB); the program's size varies a little.
  char above[64], below[64];
  std::snprintf(above, sizeof above, "%.3f", sum + 0.006);
  std::snprintf(below, sizeof below, "%.3f", sum - 0.006);
  const Result pass = run("check " + file + " run.memory_limit=" + above);
  EXPECT_EQ(pass.status, 0) << line << "\n" << pass.output;
  const Result refused = run("check " + file + " run.memory_limit=" + below);
  EXPECT_EQ(refused.status, 6) << line << "\n" << refused.output;
  expect_contains(refused, {"program ", "plot file staging "});
}

// amr.max_level = 10 with Sedov's refinement: each level has about four times the patches
// of the one before; under a 1 GB limit the regrid that would cross it stops the run,
// naming the levels, instead of allocating until the machine runs out. (Two threads: the
// buffers of many threads would already exceed the limit at the start.)
TEST(Resources, RefinementBeyondTheMemoryLimitStopsTheRun) {
  const Result r =
      run("run " + kSource +
          "/problems/sedov/sedov.toml amr.max_level=10 run.memory_limit=1 run.threads=2 "
          "output.enabled=false output.dir=/tmp/tessera_resources_amr");
  EXPECT_EQ(r.status, 6) << r.output;
  expect_contains(r, {"refinement asks for", "more host memory, but only",
                      "run.memory_limit = 1 GB", "lower amr.max_level (now 10)"});
  EXPECT_LT(r.seconds, 60);
}

TEST(Resources, ThreadsBeyondTheProcessorsAreCapped) {
  const Result r = run("run " + kSource +
                       "/problems/sod/sod.toml run.threads=4096 run.max_steps=2 "
                       "output.enabled=false output.dir=/tmp/tessera_resources_threads");
  EXPECT_EQ(r.status, 0) << r.output;
  expect_contains(r, {"run.threads = 4096 exceeds the", "processors this process may run on"});
  EXPECT_EQ(r.output.find("for 4096 threads"), std::string::npos) << r.output;
}

}  // namespace
