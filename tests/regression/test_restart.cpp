// Restart continues a run bit for bit: run N root steps with a checkpoint at N/2, restart a
// second simulation from that checkpoint, and compare every cell of every patch (both
// runs' meshes must be identical too), the time and the step counters.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "run_problem.hpp"
#include "tessera/core/error.hpp"
#include "tessera/evolve/restart.hpp"
#include "tessera/evolve/schema.hpp"
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

// The restarted run writes its outputs (plot files, later checkpoints) into restart_dir,
// or into dir when that is empty, and takes restart_overrides on top of the others.
Pair run_and_restart(const std::string& file, std::vector<std::string> overrides, int steps,
                     const std::string& dir, bool plots = false,
                     const std::string& restart_dir = "",
                     const std::vector<std::string>& restart_overrides = {}) {
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
  if (!restart_dir.empty()) overrides.push_back("output.dir=" + restart_dir);
  overrides.insert(overrides.end(), restart_overrides.begin(), restart_overrides.end());
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

// What a plot file says about the solution: cycle, time, and each block's data keyed by
// its level and logical location (block order follows the mesh's patch order, which
// may depend on the mesh's history).
struct PlotData {
  int cycle = -1;
  double time = -1;
  std::map<std::array<std::int64_t, 4>, std::vector<Real>> blocks;  // (level, location)
};

PlotData read_plot(const std::string& path) {
  PlotData out;
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return out;
  auto attribute = [&](const char* name, hid_t type, void* to) {
    const hid_t a = H5Aopen(f, name, H5P_DEFAULT);
    if (a >= 0) H5Aread(a, type, to), H5Aclose(a);
  };
  auto dataset = [&](const char* name, hid_t type, auto& to) {
    const hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    if (d < 0) return;
    const hid_t space = H5Dget_space(d);
    to.resize(H5Sget_simple_extent_npoints(space));
    H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, to.data());
    H5Sclose(space), H5Dclose(d);
  };
  attribute("NumCycles", H5T_NATIVE_INT, &out.cycle);
  attribute("Time", H5T_NATIVE_DOUBLE, &out.time);
  std::vector<int> levels;
  std::vector<std::int64_t> locations;
  std::vector<Real> prim;
  dataset("Levels", H5T_NATIVE_INT, levels);
  dataset("LogicalLocations", H5T_NATIVE_INT64, locations);
  dataset("prim", std::is_same_v<Real, float> ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE, prim);
  H5Fclose(f);
  const std::size_t nb = levels.size(), cells = mesh::kPatchCells;
  if (nb == 0 || locations.size() != 3 * nb || prim.size() % (nb * cells) != 0) return out;
  const std::size_t nvar = prim.size() / (nb * cells);
  for (std::size_t b = 0; b < nb; ++b) {
    auto& data =
        out.blocks[{levels[b], locations[3 * b], locations[3 * b + 1], locations[3 * b + 2]}];
    for (std::size_t v = 0; v < nvar; ++v)  // prim is [var][block][z][y][x]
      data.insert(data.end(), prim.begin() + (v * nb + b) * cells,
                  prim.begin() + (v * nb + b + 1) * cells);
  }
  return out;
}

TEST(RestartParameters, EveryShippedFileRoundTripsThroughTheCheckpointText) {
  // A checkpoint stores the run's complete parameters (defaults included) as TOML and a
  // restart validates them again: every default must pass its own key's range (a default
  // outside it made every restart fail).
  int files = 0;
  for (const auto& dir :
       std::filesystem::directory_iterator(std::string(TESSERA_SOURCE_DIR) + "/problems"))
    for (const auto& f : std::filesystem::directory_iterator(dir.path())) {
      if (f.path().extension() != ".toml") continue;
      ++files;
      const Params p = load_run_params(f.path().string(), {});
      const std::string text = p.to_toml();
      try {
        const Params q = load_params_from_string(text, "stored parameters of " + f.path().string(),
                                                 {}, parameter_schema());
        EXPECT_EQ(q.to_toml(), text) << f.path();
      } catch (const Error& e) {
        ADD_FAILURE() << f.path() << ": " << e.what();
      }
    }
  EXPECT_GE(files, 10);
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

// The sweep order alternates with the level's step count, which the checkpoint carries:
// 15 steps, restarted from step 7, so the restart begins with a backward sweep.
TEST(RestartBitwise, AmrRelaxingTvd) {
  const auto dir = fresh_dir("amr_rtvd");
  const auto r = run_and_restart(
      "blob/blob.toml",
      {"mesh.nx=[16,16,16]", "amr.max_level=2", "hydro.scheme=relaxing_tvd", "hydro.cfl=0.8"}, 15,
      dir);
  EXPECT_GT(r.full->mesh().num_levels(), 2);
  expect_bitwise_equal(*r.full, *r.restarted);
}

// Problem-defined, time-dependent boundaries (the double Mach reflection's moving shock on
// the upper side) read the level's time, which the restart must give them as the full run
// had it: 12 steps of root 64 x 16 with a refined level, restarted from step 6.
TEST(RestartBitwise, AmrProblemDefinedBoundaries) {
  const auto dir = fresh_dir("amr_problem_bc");
  const auto r =
      run_and_restart("double_mach/double_mach.toml",
                      {"mesh.nx=[64,16,16]", "mesh.xmax=[4,1,1]", "amr.max_level=1"}, 12, dir);
  EXPECT_EQ(r.full->mesh().num_levels(), 2);
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

TEST(RestartBitwise, AmrMhdBlast) {
  // GLM-MHD with HLLD on a refining mesh: B, psi (whose decay depends on ch, taken from
  // the signal speeds the restart recomputes) and the hierarchy must all come back.
  const auto dir = fresh_dir("amr_mhd");
  const auto r = run_and_restart(
      "mhd_blast/mhd_blast.toml",
      {"mesh.nx=[32,32,32]", "mesh.xmin=[-0.5,-0.5,-0.5]", "mesh.xmax=[0.5,0.5,0.5]",
       "problem.center=[0.2,0.22,0.25]", "amr.max_level=1"},
      12, dir);
  EXPECT_EQ(r.full->mesh().num_levels(), 2);
  expect_bitwise_equal(*r.full, *r.restarted);
}

TEST(RestartBitwise, SelfGravityIsolated) {
  // The potential's ghost layer is not in the checkpoint: the restart solves it again, and
  // the collapsing sphere must continue bit for bit.
  const auto dir = fresh_dir("gravity");
  const auto r =
      run_and_restart("uniform_sphere/uniform_sphere.toml", {"mesh.nx=[32,32,32]"}, 12, dir);
  expect_bitwise_equal(*r.full, *r.restarted);
}

TEST(RestartBitwise, SelfGravityAmrSubcycling) {
  // Refined levels solve with SOR from their last potential (checkpointed), their ghost
  // layers interpolated in time from the coarser level's previous and current potentials;
  // the root potential is solved again after refluxing, as the restart does.
  const auto dir = fresh_dir("gravity_amr");
  const auto r = run_and_restart("uniform_sphere/uniform_sphere.toml",
                                 {"mesh.nx=[32,32,32]", "amr.max_level=1", "amr.flag_buffer=0",
                                  "amr.density_refine=[0.5]", "problem.radius=0.15"},
                                 8, dir);
  EXPECT_EQ(r.full->mesh().num_levels(), 2);
  expect_bitwise_equal(*r.full, *r.restarted);
}

TEST(RestartBitwise, SelfGravityPeriodicWithOtherThreadCount) {
  // run.threads may change on a restart; the FFTs give the same bits for any thread count.
  const auto dir = fresh_dir("gravity_periodic");
  const auto r =
      run_and_restart("jeans_wave/jeans_wave.toml", {"run.threads=1", "problem.amplitude=0.01"}, 12,
                      dir, false, "", {"run.threads=2"});
  expect_bitwise_equal(*r.full, *r.restarted);
}

TEST(RestartBitwise, AmrSharedStepWithPlotCadence) {
  // Plot times shorten steps: the restarted run must keep the interrupted run's schedule.
  // Each run writes into its own directory, so that the plot files can be compared (in one
  // directory the restarted run overwrote the other's files and nothing was compared: a
  // restart that resumed plot numbering one too far passed; now it fails, 64 of 64 blocks
  // of blob.00003 differing).
  const auto dir = fresh_dir("amr_shared"), restart_dir = fresh_dir("amr_shared_restarted");
  const auto r = run_and_restart(
      "blob/blob.toml",
      {"mesh.nx=[16,16,16]", "amr.max_level=1", "amr.subcycle=false", "output.dt=0.013"}, 10, dir,
      true, restart_dir);
  expect_bitwise_equal(*r.full, *r.restarted);
  // The restarted run wrote the plot files the uninterrupted run wrote after the
  // checkpoint (one per 0.013 and the last), with the same names and the same contents:
  // cycle, time, blocks and every value, bit for bit.
  auto plot_names = [](const std::string& d) {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(d))
      if (e.path().extension() == ".athdf") names.insert(e.path().filename().string());
    return names;
  };
  const auto full_names = plot_names(dir), restarted_names = plot_names(restart_dir);
  ASSERT_FALSE(restarted_names.empty());
  std::set<std::string> after_checkpoint;  // names are zero-padded: sorted by index
  for (const auto& n : full_names)
    if (n >= *restarted_names.begin()) after_checkpoint.insert(n);
  EXPECT_EQ(after_checkpoint, restarted_names);
  int compared = 0;
  for (const auto& name : restarted_names) {
    if (!full_names.count(name)) continue;
    const PlotData a = read_plot(dir + "/" + name), b = read_plot(restart_dir + "/" + name);
    ASSERT_FALSE(a.blocks.empty()) << name;
    EXPECT_EQ(a.cycle, b.cycle) << name;
    EXPECT_EQ(std::memcmp(&a.time, &b.time, sizeof(double)), 0) << name;
    ASSERT_EQ(a.blocks.size(), b.blocks.size()) << name;
    int differing = 0;
    for (const auto& [key, data] : a.blocks) {
      const auto it = b.blocks.find(key);
      differing += it == b.blocks.end() || it->second.size() != data.size() ||
                   std::memcmp(it->second.data(), data.data(), data.size() * sizeof(Real)) != 0;
    }
    EXPECT_EQ(differing, 0) << name << ": blocks missing or with data differing in some bit";
    ++compared;
  }
  std::printf("plot files compared after the restart: %d\n", compared);
  EXPECT_GE(compared, 2);
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
  // Output-only keys outside [output] may change too; the physics may not.
  EXPECT_TRUE(tessera::may_change_on_restart("mhd.plot_divb"));
  EXPECT_TRUE(tessera::may_change_on_restart("hydro.cfl_unsafe"));
  EXPECT_FALSE(tessera::may_change_on_restart("mhd.glm_alpha"));
  EXPECT_FALSE(tessera::may_change_on_restart("hydro.cfl"));
  // An override that changes the solution is refused, naming the key.
  try {
    evolve::restart_params(with({"hydro.cfl=0.2"}), {"hydro.cfl=0.2"}, reader.header(), path);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find("override hydro.cfl=0.2"), std::string::npos) << e.what();
  }
  // A parameter file that differs from the checkpoint in such a key (the original run's
  // overrides not typed again, or the file edited since): the checkpoint's value is kept.
  const Params again = evolve::restart_params(params_for("sod/sod.toml", {"output.dir=" + dir}),
                                              {"output.dir=" + dir}, reader.header(), path);
  EXPECT_EQ(again.int3("mesh.nx"), (std::array<std::int64_t, 3>{32, 16, 16}));
  EXPECT_EQ(again.real3("mesh.xmax"), (std::array<double, 3>{1, 0.5, 0.5}));
  const Params edited =
      evolve::restart_params(with({"hydro.limiter=minmod"}), base, reader.header(), path);
  EXPECT_EQ(edited.string("hydro.limiter"), "mc");
  // Keys that may change take the restart's value: the file's run.max_steps here.
  EXPECT_EQ(again.integer("run.max_steps"), 1000000);
}

TEST(RestartParams, EquationsCannotChange) {
  // A hydrodynamics checkpoint restarted as MHD is refused twice over: by the parameter
  // check (mhd.enabled is not restart-safe) and, if that is bypassed, by the checkpoint
  // reader, which compares the fields and names the equations of both runs.
  set_log_quiet(true);
  const auto dir = fresh_dir("equations");
  // HLL serves both equations (sod.toml asks for HLLC, which MHD refuses).
  const std::vector<std::string> base = {"output.dir=" + dir,  "output.enabled=false",
                                         "run.max_steps=2",    "output.checkpoint_interval=1",
                                         "mesh.nx=[32,16,16]", "mesh.xmax=[1,0.5,0.5]",
                                         "hydro.riemann=hll"};
  evolve::Simulation sim(params_for("sod/sod.toml", base));
  sim.run();
  const std::string path = io::checkpoint_file_name(dir, "sod", 2);
  const io::CheckpointReader reader(path);
  auto mhd = base;
  mhd.push_back("mhd.enabled=true");
  try {
    evolve::restart_params(params_for("sod/sod.toml", mhd), {"mhd.enabled=true"}, reader.header(),
                           path);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find("override mhd.enabled=true"), std::string::npos)
        << e.what();
  }
  evolve::Simulation as_mhd(params_for("sod/sod.toml", mhd));
  try {
    as_mhd.restart(reader);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("written by a run of hydrodynamics (mhd.enabled = false) and this run is "
                        "MHD (mhd.enabled = true)"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("Bcc1"), std::string::npos) << what;
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
