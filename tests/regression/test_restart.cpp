// Restart continues a run bit for bit: run N root steps with a checkpoint at N/2, restart a
// second simulation from that checkpoint, and compare every cell of every patch (both
// runs' meshes must be identical too), the time and the step counters.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "run_problem.hpp"
#include "tessera/core/error.hpp"
#include "tessera/evolve/restart.hpp"
#include "tessera/io/plot_file.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;

std::string fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("tessera_restart_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

Params params_for(const std::string& file, std::vector<std::string> overrides) {
  overrides.push_back(testing::backend_override());
  return load_run_params(std::string(TESSERA_SOURCE_DIR) + "/problems/" + file, overrides);
}

// Runs `steps` root steps uninterrupted (checkpoint every steps/2) and restarted from the
// checkpoint at steps/2; returns both simulations for comparison.
struct Pair {
  std::unique_ptr<evolve::Simulation> full, restarted;
};

Pair run_and_restart(const std::string& file, std::vector<std::string> overrides, int steps,
                     const std::string& dir, bool plots = false) {
  set_log_quiet(true);
  overrides.push_back("output.dir=" + dir);
  overrides.push_back(std::string("output.enabled=") + (plots ? "true" : "false"));
  overrides.push_back("output.checkpoint_interval=" + std::to_string(steps / 2));
  overrides.push_back("output.checkpoint_keep=10");
  overrides.push_back("run.max_steps=" + std::to_string(steps));
  Pair out;
  out.full = std::make_unique<evolve::Simulation>(params_for(file, overrides));
  out.full->set_verify_mesh(true);
  out.full->run();
  const std::string path =
      io::checkpoint_file_name(dir, out.full->params().string("problem.name"), steps / 2);
  EXPECT_TRUE(fs::exists(path)) << path;
  const io::CheckpointReader reader(path);
  const Params requested = params_for(file, overrides);
  out.restarted = std::make_unique<evolve::Simulation>(
      evolve::restart_params(requested, {}, reader.header(), path));
  out.restarted->set_verify_mesh(true);
  out.restarted->restart(reader);
  EXPECT_EQ(out.restarted->step(), steps / 2);
  out.restarted->run();
  return out;
}

void expect_bitwise_equal(const evolve::Simulation& a, const evolve::Simulation& b) {
  ASSERT_EQ(a.step(), b.step());
  const double ta = a.time(), tb = b.time();
  EXPECT_EQ(std::memcmp(&ta, &tb, sizeof(double)), 0) << ta << " vs " << tb;
  EXPECT_EQ(a.level_steps(), b.level_steps());
  EXPECT_EQ(a.cell_updates(), b.cell_updates());
  const auto& ma = a.mesh();
  const auto& mb = b.mesh();
  ASSERT_EQ(ma.hierarchy(), mb.hierarchy());
  ASSERT_EQ(ma.num_patches(), mb.num_patches());
  // Pool slots depend on the history of regrids; patches are compared in canonical order.
  const auto oa = ma.canonical_order(), ob = mb.canonical_order();
  long long differing = 0;
  for (std::size_t i = 0; i < oa.size(); ++i) {
    ASSERT_EQ(ma.patch(oa[i]).corner, mb.patch(ob[i]).corner);
    if (std::memcmp(ma.current(oa[i]), mb.current(ob[i]), ma.patch_reals() * sizeof(Real)) != 0)
      ++differing;
  }
  EXPECT_EQ(differing, 0) << "patches whose data differ in some bit";
}

TEST(RestartBitwise, UniformSedov) {
  const auto dir = fresh_dir("uniform");
  const auto r = run_and_restart("sedov/sedov.toml", {"mesh.nx=[32,32,32]"}, 16, dir);
  expect_bitwise_equal(*r.full, *r.restarted);
}

TEST(RestartBitwise, UniformSedovVl2) {
  const auto dir = fresh_dir("uniform_vl2");
  const auto r =
      run_and_restart("sedov/sedov.toml", {"mesh.nx=[32,32,32]", "hydro.integrator=vl2"}, 16, dir);
  expect_bitwise_equal(*r.full, *r.restarted);
}

TEST(RestartBitwise, AmrSubcycling) {
  // The blob moves, so the hierarchy changes after the checkpoint (regrid every 2 steps).
  const auto dir = fresh_dir("amr");
  const auto r = run_and_restart(
      "blob/blob.toml", {"mesh.nx=[16,16,16]", "amr.max_level=2", "amr.subcycle=true"}, 12, dir);
  EXPECT_GT(r.full->mesh().num_levels(), 2);
  EXPECT_GT(r.restarted->regrid_count(), 0);
  expect_bitwise_equal(*r.full, *r.restarted);
}

TEST(RestartBitwise, AmrSharedStepWithPlotCadence) {
  // Plot times shorten steps: the restarted run must keep the interrupted run's schedule.
  const auto dir = fresh_dir("amr_shared");
  const auto r = run_and_restart(
      "blob/blob.toml",
      {"mesh.nx=[16,16,16]", "amr.max_level=1", "amr.subcycle=false", "output.dt=0.013"}, 10, dir,
      true);
  expect_bitwise_equal(*r.full, *r.restarted);
  // Both wrote the same plot files: 0 at t = 0, then one per 0.013 and the last.
  EXPECT_GT(r.full->step(), 0);
  EXPECT_TRUE(fs::exists(io::plot_file_name(dir, "blob", 3)));
}

TEST(RestartParams, OnlyRestartSafeKeysMayChange) {
  set_log_quiet(true);
  const auto dir = fresh_dir("params");
  const std::vector<std::string> base = {"output.dir=" + dir,  "output.enabled=false",
                                         "run.max_steps=2",    "output.checkpoint_interval=1",
                                         "mesh.nx=[32,16,16]", "mesh.xmax=[1,0.5,0.5]"};
  evolve::Simulation sim(params_for("sod/sod.toml", base));
  sim.run();
  const std::string path = io::checkpoint_file_name(dir, "sod", 2);
  const io::CheckpointReader reader(path);

  auto with = [&](std::vector<std::string> extra) {
    auto o = base;
    o.insert(o.end(), extra.begin(), extra.end());
    return params_for("sod/sod.toml", o);
  };
  // Allowed: the end of the run, threads, output cadence.
  const std::vector<std::string> ok = {"run.t_end=0.3", "run.threads=1", "output.dt=0.05",
                                       "output.checkpoint_keep=5"};
  const Params p = evolve::restart_params(with(ok), ok, reader.header(), path);
  EXPECT_EQ(p.real("run.t_end"), 0.3);
  // Repeating the original overrides is fine.
  EXPECT_NO_THROW(evolve::restart_params(with({}), base, reader.header(), path));
  // An override that changes the solution is refused, naming the key.
  try {
    evolve::restart_params(with({"hydro.cfl=0.2"}), {"hydro.cfl=0.2"}, reader.header(), path);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find("override hydro.cfl=0.2"), std::string::npos) << e.what();
  }
  // So is a parameter file that differs from the checkpoint in such a key.
  try {
    evolve::restart_params(with({"hydro.limiter=minmod"}), {}, reader.header(), path);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    const std::string what = e.what();
    EXPECT_NE(what.find("hydro.limiter = \"minmod\""), std::string::npos) << what;
    EXPECT_NE(what.find("\"mc\""), std::string::npos) << what;
  }
}

TEST(Checkpoints, CadenceAndRetention) {
  set_log_quiet(true);
  const auto dir = fresh_dir("keep");
  evolve::Simulation sim(
      params_for("sod/sod.toml", {"output.dir=" + dir, "output.enabled=false", "run.max_steps=7",
                                  "output.checkpoint_interval=2", "output.checkpoint_keep=2",
                                  "mesh.nx=[32,16,16]", "mesh.xmax=[1,0.5,0.5]"}));
  const auto summary = sim.run();
  // Steps 2, 4, 6 by cadence and 7 at the end; the two newest remain.
  const auto kept = io::list_checkpoints(dir, "sod");
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0], io::checkpoint_file_name(dir, "sod", 6));
  EXPECT_EQ(kept[1], io::checkpoint_file_name(dir, "sod", 7));
  EXPECT_EQ(summary.checkpoint, kept[1]);
  // A temporary file with a checkpoint-like name is never listed.
  std::FILE* f = std::fopen((kept[1] + ".tmp.123").c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  EXPECT_EQ(io::list_checkpoints(dir, "sod").size(), 2u);
}

}  // namespace
}  // namespace tessera
