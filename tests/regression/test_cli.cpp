// The tessera program as a user meets it: subcommands, and one test per class of bad
// input, each of which must name where the mistake is and exit with the input-error
// code (2), never 0 and never a crash.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_run.hpp"
#include "tessera/exec/executor.hpp"

namespace {

using Result = tessera::testing::CliResult;

Result run(const std::string& args) {
  return tessera::testing::run_tessera(args);
}

const std::string kSod = std::string(TESSERA_SOURCE_DIR) + "/problems/sod/sod.toml";

// A valid minimal file; `extra` lands in the given section on a known line.
std::string write_params(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "tessera_cli_test";
  std::filesystem::create_directories(dir);
  const auto path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

const char* kMinimal =
    "[run]\n"                // line 1
    "t_end = 0.1\n"          // line 2
    "[mesh]\n"               // line 3
    "nx = [16, 16, 16]\n"    // line 4
    "[problem]\n"            // line 5
    "name = \"uniform\"\n";  // line 6

void expect_input_error(const Result& r, const std::vector<std::string>& needles) {
  EXPECT_EQ(r.status, 2) << r.output;
  for (const auto& n : needles)
    EXPECT_NE(r.output.find(n), std::string::npos) << "missing '" << n << "' in:\n" << r.output;
}

TEST(Cli, VersionNamesVersionPrecisionAndBackends) {
  const Result r = run("--version");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.output.find("precision"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("backends: cpu"), std::string::npos) << r.output;
}

TEST(Cli, ProblemsListsEveryProblem) {
  const Result r = run("problems");
  EXPECT_EQ(r.status, 0);
  for (const char* p : {"sod", "sedov", "acoustic_wave", "uniform"})
    EXPECT_NE(r.output.find(p), std::string::npos) << p;
}

TEST(Cli, ProblemsNameShowsItsParametersAndFiles) {
  const Result r = run("problems sedov");
  EXPECT_EQ(r.status, 0) << r.output;
  for (const char* s : {"Sedov-Taylor", "problem.energy", "problem.period",
                        "/problems/sedov/sedov.toml", "/problems/sedov/sedov_amr.toml"})
    EXPECT_NE(r.output.find(s), std::string::npos) << s << "\n" << r.output;
  EXPECT_EQ(r.output.find("hydro.gamma"), std::string::npos) << r.output;  // its keys only
  const Result bad = run("problems sedv");
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_NE(bad.output.find("sedov"), std::string::npos) << bad.output;
}

TEST(Cli, CheckPrintsEffectiveParametersWithDefaults) {
  const Result r = run("check " + kSod + " hydro.cfl=0.5");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("cfl = 0.5"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("density_floor = 1e-10"), std::string::npos) << r.output;
}

// check reports what run refuses for run.backend = "cuda": an error from a build without
// the CUDA backend, a warning on a machine without a GPU, nothing where it can run.
TEST(Cli, CheckSaysWhetherTheCudaBackendCanRunHere) {
  const Result r = run("check " + kSod + " run.backend=cuda");
  const std::string warning = "# warning: run.backend = \"cuda\", but this machine has no CUDA";
  if (!tessera::exec::cuda_backend_built()) {
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("this build has no CUDA backend"), std::string::npos) << r.output;
  } else if (!tessera::exec::cuda_device_available()) {
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find(warning), std::string::npos) << r.output;
  } else {
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(r.output.find(warning), std::string::npos) << r.output;
  }
}

// Sod's 128x16x16 root: 8 patch groups, cut into pieces of 2 or 3 on 3 ranks (the largest
// 12.5% above the mean of 8/3); more ranks than groups leave some idle, with a warning.
TEST(Cli, CheckRanksDescribesTheDecomposition) {
  Result r = run("check " + kSod + " --ranks 3");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("on 3 ranks: the root level's 8 patch groups"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("pieces of 2-3 groups per rank"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("12.5% more than the mean"), std::string::npos) << r.output;
  r = run("check " + kSod + " --ranks 10");
  EXPECT_NE(r.output.find("10 ranks for 8 root patch groups: 2 ranks own none"), std::string::npos)
      << r.output;
  EXPECT_EQ(run("check " + kSod + " --ranks 0").status, 2);
}

TEST(Cli, ParamsReferenceListsProblemKeys) {
  const Result r = run("params");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.output.find("`problem.rho_l`"), std::string::npos);
  // One section, or one problem's keys.
  const Result gravity = run("params gravity");
  EXPECT_EQ(gravity.status, 0);
  EXPECT_NE(gravity.output.find("`gravity.sor_omega`"), std::string::npos);
  EXPECT_EQ(gravity.output.find("`hydro.cfl`"), std::string::npos);
  const Result sod = run("params sod");
  EXPECT_EQ(sod.status, 0);
  EXPECT_NE(sod.output.find("`problem.rho_l`"), std::string::npos);
  EXPECT_EQ(sod.output.find("`gravity.G`"), std::string::npos);
  expect_input_error(run("params gravty"), {"no section or problem 'gravty'", "gravity, amr"});
}

TEST(CliBadInput, UnknownKeyNamesFileLineAndSuggestion) {
  const auto f = write_params("unknown_key.toml", std::string(kMinimal) + "[hydro]\ncfll = 0.5\n");
  expect_input_error(run("check " + f),
                     {f + ":8", "unknown key 'hydro.cfll'", "did you mean 'cfl'"});
}

TEST(CliBadInput, UnknownSection) {
  const auto f =
      write_params("unknown_section.toml", std::string(kMinimal) + "[hydra]\ncfl = 0.5\n");
  expect_input_error(run("check " + f),
                     {f + ":", "unknown section [hydra]", "did you mean 'hydro'"});
}

TEST(CliBadInput, WrongType) {
  const auto f =
      write_params("wrong_type.toml", std::string(kMinimal) + "[hydro]\ncfl = \"fast\"\n");
  expect_input_error(run("check " + f), {f + ":8", "hydro.cfl", "wrong type", "expected a number"});
}

TEST(CliBadInput, OutOfRange) {
  const auto f = write_params("range.toml", std::string(kMinimal) + "[hydro]\ncfl = 1.5\n");
  expect_input_error(run("check " + f), {f + ":8", "hydro.cfl = 1.5", "out of range", "(0, 1]"});
}

TEST(CliBadInput, ResolutionNotMultipleOf16) {
  const auto f = write_params("nx.toml",
                              "[run]\nt_end = 1\n[mesh]\nnx = [100, 16, 16]\n"
                              "[problem]\nname = \"uniform\"\n");
  expect_input_error(run("check " + f), {f + ":4", "mesh.nx", "multiple of 16"});
}

TEST(CliBadInput, InvalidChoiceListsChoices) {
  const auto f =
      write_params("choice.toml", std::string(kMinimal) + "[hydro]\nriemann = \"roe\"\n");
  expect_input_error(run("check " + f),
                     {f + ":8", "hydro.riemann", "one of: auto, hllc, hlld, hll, llf"});
  // Another name of a choice suggests that choice, not the nearest spelling ("cpu").
  expect_input_error(run("check " + kSod + " run.backend=gpu"),
                     {"run.backend", "(did you mean 'cuda'?)"});
}

TEST(CliBadInput, MissingRequiredKey) {
  const auto f =
      write_params("missing.toml", "[mesh]\nnx = [16, 16, 16]\n[problem]\nname = \"uniform\"\n");
  expect_input_error(run("check " + f), {"missing required key 'run.t_end'"});
}

TEST(CliBadInput, TomlSyntaxErrorNamesLine) {
  const auto f = write_params("syntax.toml", std::string(kMinimal) + "[hydro]\ncfl = = 0.5\n");
  expect_input_error(run("check " + f), {f, "TOML syntax error", "8"});
}

TEST(CliBadInput, MissingFile) {
  expect_input_error(run("run /nonexistent/params.toml"),
                     {"/nonexistent/params.toml", "cannot open"});
}

TEST(CliBadInput, OverrideOfUnknownKey) {
  expect_input_error(run("check " + kSod + " hydro.foo=1"),
                     {"command-line override 'hydro.foo=1'", "unknown key 'hydro.foo'"});
}

TEST(CliBadInput, OverrideOutOfRangeAndWrongType) {
  expect_input_error(run("check " + kSod + " hydro.gamma=0.5"),
                     {"command-line override 'hydro.gamma=0.5'", "out of range"});
  expect_input_error(run("check " + kSod + " run.max_steps=ten"),
                     {"command-line override 'run.max_steps=ten'", "expected an integer"});
}

TEST(CliBadInput, MalformedWallTime) {
  for (const char* bad : {"1:2", "10:60:00", "00:00:00", "2h", "1:00:00:00"})
    expect_input_error(run("check " + kSod + " run.wall_time=" + bad),
                       {"run.wall_time", bad, "expected hh:mm:ss"});
  EXPECT_EQ(run("check " + kSod + " run.wall_time=100:30:00").status, 0);
}

TEST(CliBadInput, RestartFromMissingCheckpoint) {
  const Result r = run("run " + kSod + " --restart /nonexistent/sod.chk.00000001.h5");
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_NE(r.output.find("/nonexistent/sod.chk.00000001.h5"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no such file"), std::string::npos) << r.output;
}

// A directory or a named pipe given as a checkpoint: said so at once (a pipe without a
// writer used to block verify forever).
TEST(CliBadInput, CheckpointThatIsADirectoryOrAPipe) {
  const auto dir = std::filesystem::temp_directory_path() / "tessera_cli_test" / "ckdir";
  std::filesystem::create_directories(dir);
  for (const std::string& cmd :
       {"verify " + dir.string(), "run " + kSod + " --restart " + dir.string()}) {
    const Result r = run(cmd);
    EXPECT_EQ(r.status, 3) << cmd << "\n" << r.output;
    EXPECT_NE(r.output.find("it is a directory, not a checkpoint file"), std::string::npos)
        << cmd << "\n"
        << r.output;
  }
  const auto fifo = dir / "pipe.h5";
  std::filesystem::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Result r = run("verify " + fifo.string());
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_NE(r.output.find("not a regular file"), std::string::npos) << r.output;
  std::filesystem::remove(fifo);
}

TEST(CliBadInput, MalformedOverride) {
  expect_input_error(run("check " + kSod + " hydro.cfl"), {"expected the form section.key=value"});
  expect_input_error(run("check " + kSod + " cfl=0.5"), {"expected the form section.key=value"});
}

TEST(CliBadInput, UnknownProblemListsKnownOnes) {
  expect_input_error(run("check " + kSod + " problem.name=sodd"),
                     {"unknown problem 'sodd'", "sod", "sedov"});
}

TEST(CliBadInput, KeyOfAnotherProblem) {
  // problem.energy belongs to sedov, not sod.
  expect_input_error(run("check " + kSod + " problem.energy=2"), {"unknown key 'problem.energy'"});
}

TEST(CliBadInput, GeometryErrors) {
  expect_input_error(run("check " + kSod + " mesh.xmax=[1,1,1]"), {"cubic"});
  expect_input_error(run("check " + kSod + " mesh.bc_xlo=periodic"), {"periodic"});
}

TEST(Cli, PerLevelThresholdsTakeANumberOrAList) {
  const Result one = run("check " + kSod + " amr.max_level=2 amr.lohner_refine=0.7");
  EXPECT_EQ(one.status, 0) << one.output;
  EXPECT_NE(one.output.find("lohner_refine = 0.7"), std::string::npos) << one.output;
  const Result list = run("check " + kSod + " amr.max_level=2 amr.lohner_refine=[0.8,0.7]");
  EXPECT_EQ(list.status, 0) << list.output;
  EXPECT_NE(list.output.find("lohner_refine = [0.8, 0.7]"), std::string::npos) << list.output;
}

TEST(CliBadInput, PerLevelThresholds) {
  expect_input_error(run("check " + kSod + " amr.max_level=3 amr.lohner_refine=[0.8,0.7]"),
                     {"amr.lohner_refine has 2 values but amr.max_level = 3"});
  expect_input_error(run("run " + kSod +
                         " output.enabled=false amr.max_level=2 "
                         "amr.lohner_refine=[0.8,0.3] amr.lohner_derefine=0.4"),
                     {"amr.lohner_derefine = 0.4 exceeds amr.lohner_refine = 0.3 on level 1"});
  expect_input_error(run("check " + kSod + " amr.lohner_refine=[0.8,1.5]"),
                     {"amr.lohner_refine", "out of range"});
}

TEST(CliBadInput, NoSubcommandOrUnknownOption) {
  EXPECT_EQ(run("").status, 2);
  EXPECT_EQ(run("run").status, 2);
  EXPECT_EQ(run("frobnicate").status, 2);
}

}  // namespace

namespace {

// Runs that go wrong stop with exit 4 and a diagnostic plot file instead of finishing with a
// wrong answer: the Sedov blast at hydro.cfl = 1 (three times its stable limit, allowed by
// hydro.cfl_unsafe) first adds energy, then its time step collapses.
tessera::testing::CliResult run_unstable_sedov(const std::string& name, const std::string& extra) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "tessera_cli_test" / name;
  fs::remove_all(dir);
  return tessera::testing::run_tessera(
      "run " + std::string(TESSERA_SOURCE_DIR) +
      "/problems/sedov/sedov.toml mesh.nx=[32,32,32] hydro.cfl=1 hydro.cfl_unsafe=true "
      "run.t_end=0.05 run.max_steps=150 run.threads=2 output.dir=" +
      dir.string() + " " + extra);
}

}  // namespace

// Without first-order flux correction: with it the floors that make this run's time step
// collapse do not happen (it reaches t_end, its energy 4% up).
TEST(CliRunaway, CollapsingTimeStepStopsTheRunWithExit4) {
  const auto r = run_unstable_sedov("collapse", "hydro.fofc=false");
  EXPECT_EQ(r.status, 4) << r.output;
  for (const char* text : {"the time step collapsed", "set by level 0", "below 1e-06 of the median",
                           "wrote diagnostic plot file"})
    EXPECT_NE(r.output.find(text), std::string::npos) << text << "\n" << r.output;
}

// In a box whose sides let nothing in or out the total energy is constant to round-off;
// the unstable run's totals line finds it grown a few steps in (by 0.6% at step 4).
TEST(CliRunaway, RunawayTotalInAClosedBoxStopsTheRunWithExit4) {
  const std::string periodic =
      "mesh.bc_xlo=periodic mesh.bc_xhi=periodic mesh.bc_ylo=periodic mesh.bc_yhi=periodic "
      "mesh.bc_zlo=periodic mesh.bc_zhi=periodic run.log_interval=1";
  const auto r = run_unstable_sedov("runaway", periodic);
  EXPECT_EQ(r.status, 4) << r.output;
  for (const char* text : {"the total energy changed by ", "of its initial value",
                           "sides let none in or out", "wrote diagnostic plot file"})
    EXPECT_NE(r.output.find(text), std::string::npos) << text << "\n" << r.output;
  // The stable Courant number runs the same box to the end.
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "tessera_cli_test" / "stable";
  fs::remove_all(dir);
  const auto ok = tessera::testing::run_tessera(
      "run " + std::string(TESSERA_SOURCE_DIR) +
      "/problems/sedov/sedov.toml mesh.nx=[32,32,32] hydro.cfl=0.3 run.t_end=0.02 run.threads=2 "
      "output.enabled=false output.dir=" +
      dir.string() + " " + periodic);
  EXPECT_EQ(ok.status, 0) << ok.output;
}

// Plot files belong to the run that wrote them (their RunId): a new run is refused a
// directory holding another run's plot files (anything reading "the last plot file" would
// read the wrong run) and removes them, each .athdf with its .xdmf, with --overwrite; a
// restart keeps its own run's.
TEST(CliOutputDir, AnotherRunsPlotFilesAreRefusedOrRemoved) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "tessera_cli_test" / "plots";
  fs::remove_all(dir);
  const std::string sod =
      "run " + kSod + " run.threads=1 output.dt=0.02 output.dir=" + dir.string();
  const auto first = tessera::testing::run_tessera(sod + " run.max_steps=6");
  ASSERT_EQ(first.status, 0) << first.output;
  ASSERT_TRUE(fs::exists(dir / "sod.00001.athdf"));
  const auto again = tessera::testing::run_tessera(sod + " run.max_steps=2");
  EXPECT_EQ(again.status, 2) << again.output;
  EXPECT_NE(again.output.find("holds plot files"), std::string::npos) << again.output;
  EXPECT_NE(again.output.find("sod.00001.athdf"), std::string::npos) << again.output;
  // --overwrite: the earlier run's files go, this run writes its own (fewer of them).
  const auto over = tessera::testing::run_tessera(sod + " run.max_steps=1 --overwrite");
  EXPECT_EQ(over.status, 0) << over.output;
  EXPECT_NE(over.output.find("(plot file of another run; --overwrite)"), std::string::npos);
  int athdf = 0, xdmf = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    athdf += n.ends_with(".athdf");
    xdmf += n.ends_with(".xdmf");
  }
  EXPECT_EQ(athdf, 2);  // the initial state and step 1
  EXPECT_EQ(xdmf, 2);
  // A restart of that run keeps its plot files.
  const auto more = tessera::testing::run_tessera(sod + " run.max_steps=3 --overwrite " +
                                                  "output.checkpoint_interval=1");
  ASSERT_EQ(more.status, 0) << more.output;
  const auto restart = tessera::testing::run_tessera(sod + " run.max_steps=5 --restart latest");
  EXPECT_EQ(restart.status, 0) << restart.output;
  EXPECT_EQ(restart.output.find("of another run"), std::string::npos) << restart.output;
  EXPECT_TRUE(fs::exists(dir / "sod.00000.athdf"));
}

// An output cadence that would write more files than output.max_files over the run, or
// that is below the resolution of the run's times, is refused by check and run alike.
TEST(CliBadInput, OutputCadenceThatWouldFloodTheDisk) {
  const auto tiny = tessera::testing::run_tessera("check " + kSod + " output.dt=1e-14");
  EXPECT_EQ(tiny.status, 2) << tiny.output;
  for (const char* text : {"output.dt = 1e-14", "below the resolution"})
    EXPECT_NE(tiny.output.find(text), std::string::npos) << text << "\n" << tiny.output;
  const auto many = tessera::testing::run_tessera("check " + kSod + " output.dt=1e-6");
  EXPECT_EQ(many.status, 2) << many.output;
  for (const char* text :
       {"output.dt = 1e-06 would write about", "plot files", "output.max_files = 10000"})
    EXPECT_NE(many.output.find(text), std::string::npos) << text << "\n" << many.output;
  const auto ck = tessera::testing::run_tessera("check " + kSod + " output.checkpoint_dt=1e-6");
  EXPECT_EQ(ck.status, 2) << ck.output;
  EXPECT_NE(ck.output.find("checkpoints"), std::string::npos) << ck.output;
  // Fewer steps than files, or a larger allowance, let it through.
  EXPECT_EQ(
      tessera::testing::run_tessera("check " + kSod + " output.dt=1e-6 run.max_steps=500").status,
      0);
  EXPECT_EQ(
      tessera::testing::run_tessera("check " + kSod + " output.dt=1e-6 output.max_files=1000000")
          .status,
      0);
  const auto run = tessera::testing::run_tessera("run " + kSod + " output.dt=1e-300");
  EXPECT_EQ(run.status, 2) << run.output;
}
