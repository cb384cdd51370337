// A simulation as N virtual ranks (parallel/virtual_ranks.hpp): each rank builds the same
// mesh, owns the groups of its partition, and the reductions of the time step and of the
// diagnostics -- level speeds, conserved totals, L1 errors, div B -- combine the ranks'
// pieces through the Comm. They must equal one rank's bit for bit for N = 2, 3, 4, 7. Runs
// are stepped decomposed (each rank its groups, after the exchange of buffer patches),
// uniform and adaptive: their plot files and checkpoints must equal one rank's, dataset for
// dataset and byte for byte; self-gravitating ones too, with and without refinement. Each
// rank's store holds only its own families and the buffer copies it reads.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <functional>

#include "h5_compare.hpp"
#include "run_problem.hpp"
#include "tessera/core/error.hpp"
#include "tessera/evolve/diagnostics.hpp"
#include "tessera/evolve/restart.hpp"
#include "tessera/io/checkpoint.hpp"
#include "tessera/parallel/virtual_ranks.hpp"

namespace tessera {
namespace {

// The whole-sphere adaptive Sedov blast (sedov.toml on a 32^3 root with two levels):
// its refined shell is cut across ranks on every level.
const std::vector<std::string> kWholeBlast = {"run.t_end=0.02", "mesh.nx=[32,32,32]",
                                              "hydro.integrator=vl2", "amr.max_level=2"};

struct Reductions {
  std::vector<double> totals;
  std::optional<double> l1;
  evolve::DivergenceStats div;
  std::vector<int> owned_groups;  // per level
};

Params load(const std::string& file, std::vector<std::string> overrides) {
  set_log_quiet(true);
  // Output off unless the test turns it on.
  if (std::none_of(overrides.begin(), overrides.end(),
                   [](const std::string& o) { return o.starts_with("output.enabled="); }))
    overrides.push_back("output.enabled=false");
  overrides.push_back("run.backend=cpu");
  return load_run_params(std::string(TESSERA_SOURCE_DIR) + "/problems/" + file, overrides);
}

Reductions reduce(const evolve::Simulation& sim) {
  Reductions r;
  r.totals = sim.conserved_totals();
  r.l1 = sim.density_l1_error();
  if (sim.model().has_magnetic_field()) r.div = sim.divergence();
  const auto& m = sim.mesh();
  for (int level = 0; level < m.num_levels(); ++level) {
    int n = 0;
    for (const int g : m.groups(level)) n += sim.partition().owns(sim.comm().rank(), g);
    r.owned_groups.push_back(n);
  }
  return r;
}

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

void expect_equal_on_virtual_ranks(const std::string& file, const std::vector<std::string>& ov) {
  const Params params = load(file, ov);
  evolve::Simulation serial(params);
  serial.initialize();
  const Reductions one = reduce(serial);
  ASSERT_GT(serial.mesh().num_levels(), 1) << file << ": the case should be adaptive";
  for (const int ranks : {2, 3, 4, 7}) {
    parallel::VirtualRanks vr(ranks);
    std::vector<Reductions> got(ranks);
    vr.run([&](parallel::Comm& comm) {
      evolve::Simulation sim(params, comm);
      sim.initialize();
      got[comm.rank()] = reduce(sim);
    });
    for (int r = 0; r < ranks; ++r) {
      const Reductions& g = got[r];
      SCOPED_TRACE(file + ", " + std::to_string(ranks) + " ranks, rank " + std::to_string(r));
      ASSERT_EQ(g.totals.size(), one.totals.size());
      for (std::size_t v = 0; v < one.totals.size(); ++v)
        EXPECT_TRUE(same_bits(g.totals[v], one.totals[v]))
            << "total " << v << ": " << g.totals[v] << " vs " << one.totals[v];
      ASSERT_EQ(g.l1.has_value(), one.l1.has_value());
      if (one.l1) {
        EXPECT_TRUE(same_bits(*g.l1, *one.l1)) << *g.l1 << " vs " << *one.l1;
      }
      EXPECT_TRUE(same_bits(g.div.max_relative, one.div.max_relative));
      EXPECT_TRUE(same_bits(g.div.mean_relative, one.div.mean_relative));
    }
    // The pieces cover every level once, and the finest level is shared by several ranks
    // (a small root grid may leave some ranks without a root group).
    int sharing = 0;
    for (std::size_t l = 0; l < one.owned_groups.size(); ++l) {
      int sum = 0;
      for (int r = 0; r < ranks; ++r) sum += got[r].owned_groups[l];
      EXPECT_EQ(sum, one.owned_groups[l]) << ranks << " ranks, level " << l;
    }
    for (int r = 0; r < ranks; ++r) sharing += got[r].owned_groups.back() > 0;
    EXPECT_GE(sharing, 2) << ranks << " ranks";
  }
}

TEST(VirtualRanks, AdaptiveSedovReductionsEqualOneRank) {
  expect_equal_on_virtual_ranks("sedov/sedov.toml", kWholeBlast);
}

TEST(VirtualRanks, AdaptiveFieldLoopReductionsEqualOneRank) {
  // GLM-MHD: div B's maximum and volume-weighted mean, the L1 of the uniform density.
  expect_equal_on_virtual_ranks("field_loop/field_loop.toml",
                                {"mesh.nx=[64,32,16]", "mesh.xmin=[-1,-0.5,-0.25]",
                                 "mesh.xmax=[1,0.5,0.25]", "amr.max_level=2"});
}

TEST(VirtualRanks, AdaptiveCloudBlastWithScalarsReductionsEqualOneRank) {
  expect_equal_on_virtual_ranks(
      "cloud_blast/cloud_blast.toml",
      {"mesh.nx=[16,16,16]", "amr.max_level=3", "amr.lohner_refine=0.8", "amr.lohner_derefine=0.2",
       "amr.density_refine=0", "amr.density_derefine=0", "problem.cloud_radius=0.03"});
}

// Runs `file` on one rank and on 2, 3, 4 and 7 virtual ranks, each writing plot files
// and a final checkpoint to its own directory, and compares every dataset of every file.
// `check` (if given) tests the one-rank run: that it does what the case is meant to cover.
void expect_outputs_equal_on_virtual_ranks(
    const std::string& name, const std::string& file, std::vector<std::string> ov,
    const std::function<void(const evolve::Simulation&)>& check = nullptr) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("tessera_vr_" + name);
  fs::remove_all(root);
  ov.push_back("output.enabled=true");
  auto params_for = [&](const std::string& dir) {
    auto o = ov;
    o.push_back("output.dir=" + (root / dir).string());
    return load(file, o);
  };
  const Params one = params_for("one");
  evolve::Simulation serial(one);
  serial.run();
  serial.write_checkpoint();
  if (check) check(serial);
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(root / "one"))
    if (e.path().extension() == ".athdf" || e.path().extension() == ".h5")
      files.push_back(e.path().filename().string());
  ASSERT_GE(files.size(), 3u) << "plot files and a checkpoint";
  const bool mhd = serial.model().has_magnetic_field();
  const evolve::DivergenceStats div = mhd ? serial.divergence() : evolve::DivergenceStats{};
  const std::optional<double> energy = serial.potential_energy();
  for (const int ranks : {2, 3, 4, 7}) {
    const std::string dir = std::to_string(ranks);
    const Params p = params_for(dir);
    parallel::VirtualRanks vr(ranks);
    std::atomic<long> held{0}, families{0};
    std::atomic<long long> terms{0};
    vr.run([&](parallel::Comm& comm) {
      evolve::Simulation sim(p, comm);
      sim.set_poison_foreign_patches(true);
      sim.run();
      sim.write_checkpoint();
      if (comm.rank() == 0) {
        EXPECT_EQ(sim.step(), serial.step());
      }
      // The rank's store holds its own families and the buffer copies it reads.
      long all = 0;
      for (int level = 0; level < sim.mesh().num_levels(); ++level)
        all += static_cast<long>(sim.mesh().groups(level).size());
      EXPECT_TRUE(sim.mesh().sparse());
      EXPECT_LE(sim.mesh().held_families(), all);
      held += sim.mesh().held_families();
      terms += sim.correction_terms_sent().host;
      if (comm.rank() == 0) families = all;
      // The potential energy sums rho phi over the whole root grid.
      const std::optional<double> w = sim.potential_energy();
      EXPECT_EQ(w.has_value(), energy.has_value());
      if (w && energy) {
        EXPECT_TRUE(same_bits(*w, *energy)) << ranks << " ranks: " << *w << " vs " << *energy;
      }
      // div B after decomposed steps: its face stencils read other ranks' patches.
      if (mhd) {
        const evolve::DivergenceStats d = sim.divergence();
        EXPECT_TRUE(same_bits(d.max_relative, div.max_relative)) << ranks << " ranks";
        EXPECT_TRUE(same_bits(d.mean_relative, div.mean_relative)) << ranks << " ranks";
      }
    });
    // Adaptive self-gravity: the potential correction's terms went between the ranks (the
    // CPU backend: from the hosts).
    if (energy && serial.mesh().num_levels() > 1) {
      EXPECT_GT(terms.load(), 0) << name << ", " << ranks << " ranks";
    }
    // On 7 ranks the stores together hold less than 7 whole meshes (a mesh of fewer than
    // 16 families may be every rank's neighbourhood).
    if (ranks == 7 && families >= 16) {
      EXPECT_LT(held.load(), 7 * families.load()) << name;
    }
    std::vector<std::string> written;
    for (const auto& e : fs::directory_iterator(root / dir))
      if (e.path().extension() == ".athdf" || e.path().extension() == ".h5")
        written.push_back(e.path().filename().string());
    std::sort(written.begin(), written.end());
    std::sort(files.begin(), files.end());
    EXPECT_EQ(written, files) << ranks << " ranks";
    for (const auto& f : files)
      EXPECT_EQ(
          testing::compare_h5_datasets((root / "one" / f).string(), (root / dir / f).string()), "")
          << name << ", " << ranks << " ranks: " << f;
  }
  fs::remove_all(root);
}

TEST(VirtualRanks, UniformSodOutputsEqualOneRank) {
  expect_outputs_equal_on_virtual_ranks("sod", "sod/sod.toml",
                                        {"run.max_steps=16", "output.dt=0.02"});
}

TEST(VirtualRanks, UniformRelaxingTvdSedovOutputsEqualOneRank) {
  expect_outputs_equal_on_virtual_ranks("sedov_rtvd", "sedov/sedov.toml",
                                        {"mesh.nx=[32,32,32]", "hydro.scheme=relaxing_tvd",
                                         "hydro.cfl=0.8", "run.max_steps=12", "output.dt=0.002"});
}

TEST(VirtualRanks, UniformOrszagTangMhdOutputsEqualOneRank) {
  expect_outputs_equal_on_virtual_ranks(
      "orszag_tang", "orszag_tang/orszag_tang.toml",
      {"mesh.nx=[64,64,16]", "mesh.xmax=[1,1,0.25]", "run.max_steps=8", "output.dt=0.02"});
}

TEST(VirtualRanks, UniformDoubleMachWithProblemBoundariesOutputsEqualOneRank) {
  expect_outputs_equal_on_virtual_ranks("double_mach", "double_mach/double_mach.toml",
                                        {"mesh.nx=[64,16,16]", "mesh.xmax=[4,1,1]",
                                         "amr.max_level=0", "run.max_steps=20", "output.dt=0.02"});
}

TEST(VirtualRanks, UniformCloudBlastWithScalarsOutputsEqualOneRank) {
  expect_outputs_equal_on_virtual_ranks(
      "cloud_blast", "cloud_blast/cloud_blast.toml",
      {"mesh.nx=[32,32,32]", "amr.max_level=0", "problem.cloud_radius=0.06", "run.max_steps=10",
       "output.dt=0.001"});
}

// First-order flux correction (hydro.fofc) with vl2: the Sedov blast off the corner of the
// patch groups, with passive scalars, flags cells on several ranks' groups; every rank
// must see every flagged cell its groups' boxes hold, or the face fluxes of neighbouring
// groups would differ. Uniform, and with one refined level (the corrected groups' fluxes
// leave the flux registers and enter them again).
TEST(VirtualRanks, UniformSedovWithFirstOrderFluxCorrectionOutputsEqualOneRank) {
  expect_outputs_equal_on_virtual_ranks(
      "sedov_fofc", "sedov/sedov.toml",
      {"mesh.nx=[32,32,32]", "problem.center=[0.021,-0.013,0.008]", "hydro.integrator=vl2",
       "hydro.passive_scalars=1", "run.max_steps=24", "output.dt=0.004"},
      [](const evolve::Simulation& sim) {
        EXPECT_GT(sim.corrected(), 0);
        EXPECT_EQ(sim.floored(), 0);
      });
}

TEST(VirtualRanks, AdaptiveSedovWithFirstOrderFluxCorrectionOutputsEqualOneRank) {
  expect_outputs_equal_on_virtual_ranks(
      "sedov_fofc_amr", "sedov/sedov.toml",
      {"mesh.nx=[64,32,32]", "mesh.xmax=[1.5,0.5,0.5]", "problem.center=[0.021,-0.013,0.008]",
       "hydro.integrator=vl2", "amr.max_level=1", "run.max_steps=16", "output.dt=0.004"},
      [](const evolve::Simulation& sim) {
        EXPECT_GT(sim.corrected(), 0);
        EXPECT_EQ(sim.floored(), 0);
      });
}

// Adaptive runs: the ranks exchange flux-register contributions, restrict onto other
// ranks' parents, flag their own families, and at each regrid move families to their new
// ranks and send new families' ranks the coarse data their prolongation reads. Every
// other rank's patch is poisoned (NaN) before each exchange: what no exchange delivered
// cannot pass for current.
const std::vector<std::string> kMovingBlob = {
    "mesh.nx=[32,16,16]",         "mesh.xmax=[1,0.5,0.5]", "problem.center=[0.3,0.25,0.25]",
    "problem.velocity=[2,0.5,0]", "problem.width=0.05",    "amr.regrid_interval=1"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The blob of gas crossing the box, dyed by a passive scalar, on 3 levels regridded every
// root step: families are added ahead of it and removed behind it, holes are filled by
// moving families, and the pieces of the curve shift between ranks, so families migrate.
TEST(VirtualRanks, AdaptiveMovingBlobWithScalarOutputsEqualOneRank) {
  expect_outputs_equal_on_virtual_ranks(
      "blob", "blob/blob.toml",
      with(kMovingBlob, {"amr.max_level=2", "hydro.passive_scalars=1", "hydro.integrator=vl2",
                         "run.max_steps=20", "output.dt=0.02"}),
      [](const evolve::Simulation& sim) {
        EXPECT_EQ(sim.mesh().num_levels(), 3);
        EXPECT_GE(sim.regrid_stats().families_added, 4);
        EXPECT_GE(sim.regrid_stats().families_removed, 4);
        EXPECT_GE(sim.regrid_stats().families_moved, 1);
      });
}

TEST(VirtualRanks, AdaptiveRelaxingTvdMovingBlobOutputsEqualOneRank) {
  expect_outputs_equal_on_virtual_ranks(
      "blob_rtvd", "blob/blob.toml",
      with(kMovingBlob, {"amr.max_level=1", "hydro.scheme=relaxing_tvd", "hydro.cfl=0.8",
                         "run.max_steps=16", "output.dt=0.04"}),
      [](const evolve::Simulation& sim) {
        EXPECT_GE(sim.regrid_stats().families_added, 4);
        EXPECT_GE(sim.regrid_stats().families_removed, 4);
      });
}

// GLM-MHD on a refined region that grows with the advected loop; one shared time step for
// both levels (amr.subcycle = false).
TEST(VirtualRanks, AdaptiveFieldLoopMhdSharedStepOutputsEqualOneRank) {
  expect_outputs_equal_on_virtual_ranks(
      "field_loop_amr", "field_loop/field_loop.toml",
      {"mesh.nx=[32,16,16]", "mesh.xmin=[-1,-0.5,-0.5]", "mesh.xmax=[1,0.5,0.5]", "amr.max_level=1",
       "amr.subcycle=false", "amr.regrid_interval=1", "hydro.integrator=vl2", "hydro.riemann=hll",
       "problem.radius=0.2", "run.max_steps=16", "output.dt=0.02"},
      [](const evolve::Simulation& sim) {
        EXPECT_EQ(sim.mesh().num_levels(), 2);
        EXPECT_GE(sim.regrid_stats().families_added, 4);
      });
}

TEST(VirtualRanks, AdaptiveDoubleMachWithProblemBoundariesOutputsEqualOneRank) {
  expect_outputs_equal_on_virtual_ranks(
      "double_mach_amr", "double_mach/double_mach.toml",
      {"mesh.nx=[64,16,16]", "mesh.xmax=[4,1,1]", "amr.max_level=1", "amr.regrid_interval=1",
       "run.max_steps=16", "output.dt=0.01"},
      [](const evolve::Simulation& sim) {
        EXPECT_EQ(sim.mesh().num_levels(), 2);
        EXPECT_GE(sim.regrid_stats().families_added, 4);
      });
}

// A checkpoint written by 4 ranks restarts on 2 ranks and on 1: each ends with the
// checkpoint an uninterrupted run on one rank writes, dataset for dataset (the blob
// crossing 2 levels, regridded every root step, checkpoint at step 8 of 16). The virtual
// ranks read the checkpoint one after the other (io::hdf5_mutex: HDF5 is not thread-safe
// here; MPI ranks are processes).
TEST(VirtualRanks, CheckpointOfFourRanksRestartsOnTwoAndOneRank) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / "tessera_vr_restart";
  fs::remove_all(root);
  const auto ov = with(kMovingBlob, {"amr.max_level=1", "run.max_steps=16",
                                     "output.checkpoint_interval=8", "output.checkpoint_keep=10"});
  auto params_for = [&](const std::string& dir) {
    return load("blob/blob.toml", with(ov, {"output.dir=" + (root / dir).string()}));
  };
  evolve::Simulation one(params_for("one"));
  one.run();
  EXPECT_GE(one.regrid_stats().families_added, 1);
  const Params four = params_for("four");
  parallel::VirtualRanks(4).run([&](parallel::Comm& comm) {
    evolve::Simulation sim(four, comm);
    sim.set_poison_foreign_patches(true);
    sim.run();
  });
  const std::string name = one.params().string("problem.name");
  const std::string middle = io::checkpoint_file_name((root / "four").string(), name, 8);
  const std::string end = io::checkpoint_file_name((root / "one").string(), name, 16);
  EXPECT_EQ(testing::compare_h5_datasets(io::checkpoint_file_name((root / "one").string(), name, 8),
                                         middle),
            "");
  const io::CheckpointReader reader(middle);
  for (const int ranks : {2, 1}) {
    const std::string dir = "restart_on_" + std::to_string(ranks);
    const Params p = evolve::restart_params(params_for(dir), {}, reader.header(), middle);
    parallel::VirtualRanks(ranks).run([&](parallel::Comm& comm) {
      evolve::Simulation sim(p, comm);
      sim.set_poison_foreign_patches(true);
      sim.restart(reader);  // its reads one rank at a time (io::hdf5_mutex)
      EXPECT_EQ(sim.step(), 8);
      sim.run();
      EXPECT_EQ(sim.step(), 16);
    });
    EXPECT_EQ(testing::compare_h5_datasets(
                  end, io::checkpoint_file_name((root / dir).string(), name, 16)),
              "")
        << "restarted on " << ranks << " ranks";
  }
  fs::remove_all(root);
}

// Each rank builds the initial conditions, and reads a checkpoint, for its own families and
// the copies its groups read only: on 4 ranks no rank holds more than 60% of the families
// (its own quarter and the copies), its store never had room for more and has room for
// what it holds and no more, and every family a rank owns equals one rank's bit for bit.
TEST(VirtualRanks, InitialConditionsAndRestartsHoldEachRanksShareOnly) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / "tessera_vr_share";
  fs::remove_all(root);
  const Params params =
      load("sedov/sedov.toml",
           with(kWholeBlast,
                {"mesh.nx=[64,64,64]", "amr.max_level=1", "problem.radius=0.2", "run.max_steps=2",
                 "output.checkpoint_interval=2", "output.dir=" + root.string()}));
  evolve::Simulation start(params);
  start.initialize();
  evolve::Simulation one(params);
  one.run();  // writes the checkpoint of step 2
  const io::CheckpointReader reader(
      io::checkpoint_file_name(root.string(), params.string("problem.name"), 2));
  for (const bool restart : {false, true}) {
    SCOPED_TRACE(restart ? "restart" : "initial conditions");
    const mesh::Mesh& whole = restart ? one.mesh() : start.mesh();
    ASSERT_EQ(whole.num_levels(), 2);
    const int families = whole.num_patches() / mesh::kFamilySize;
    parallel::VirtualRanks(4).run([&](parallel::Comm& comm) {
      evolve::Simulation sim(params, comm);
      if (restart)
        sim.restart(reader);
      else
        sim.initialize();
      const mesh::Mesh& m = sim.mesh();
      EXPECT_TRUE(m.sparse());
      EXPECT_LT(m.held_families(), 0.6 * families) << "rank " << comm.rank();
      EXPECT_EQ(m.pool_capacity_patches(),
                static_cast<std::size_t>(m.held_families()) * mesh::kFamilySize);
      EXPECT_LT(m.pool_peak_patches(), 0.6 * m.num_patches()) << "rank " << comm.rank();
      ASSERT_EQ(m.hierarchy(), whole.hierarchy());
      // Both meshes are canonical: the same patch numbers.
      int own = 0;
      for (int level = 0; level < m.num_levels(); ++level)
        for (const int g : m.groups(level)) {
          if (!sim.partition().owns(comm.rank(), g)) continue;
          ++own;
          EXPECT_EQ(std::memcmp(m.current(g), whole.current(g),
                                mesh::kFamilySize * m.patch_reals() * sizeof(Real)),
                    0)
              << "rank " << comm.rank() << ", level " << level << ", family " << g;
        }
      EXPECT_GT(own, 0);
    });
  }
  fs::remove_all(root);
}

// An energy that overflows at the centre of a blast fails the first step on the ranks
// whose groups hold the centre, not on the others: every rank stops with the same error,
// the one rank would report (the lowest failing group's cell), none waits in a collective.
// With self-gravity the hydro pass is followed by the solve, whose gather is a collective
// the failing ranks must not miss.
void expect_one_error_on_every_rank(const std::vector<std::string>& extra) {
  std::vector<std::string> ov = {"mesh.nx=[32,32,32]", "amr.max_level=0", "problem.energy=1e300",
                                 "problem.radius=0.02", "run.max_steps=2"};
  ov.insert(ov.end(), extra.begin(), extra.end());
  const Params params = load("sedov/sedov.toml", with(kWholeBlast, ov));
  std::string expected;
  try {
    evolve::Simulation serial(params);
    serial.run();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNumerical);
    expected = e.what();
  }
  ASSERT_NE(expected.find("unphysical state"), std::string::npos) << expected;
  for (const int ranks : {2, 3, 4, 7}) {
    std::vector<std::string> got(ranks);
    parallel::VirtualRanks vr(ranks);
    vr.run([&](parallel::Comm& comm) {
      try {
        evolve::Simulation sim(params, comm);
        sim.run();
      } catch (const Error& e) {
        got[comm.rank()] = e.what();
      }
    });
    for (int r = 0; r < ranks; ++r) EXPECT_EQ(got[r], expected) << ranks << " ranks, rank " << r;
  }
}

TEST(VirtualRanks, AnUnphysicalCellOnOneRankStopsEveryRankWithOneRanksError) {
  expect_one_error_on_every_rank({});
}

TEST(VirtualRanks, AnUnphysicalCellBeforeAGravitySolveStopsEveryRankWithOneRanksError) {
  expect_one_error_on_every_rank({"gravity.enabled=true"});
}

// Self-gravity without refinement: every rank gathers the root density from the others and
// solves the whole root grid with the FFT, then kicks its own groups. Periodic (the Jeans
// wave, whose mean density is subtracted) and isolated (a uniform sphere, zero padding).
TEST(VirtualRanks, UniformSelfGravityPeriodicOutputsEqualOneRank) {
  expect_outputs_equal_on_virtual_ranks("jeans_wave", "jeans_wave/jeans_wave.toml",
                                        {"run.max_steps=10", "output.dt=0.02"});
}

TEST(VirtualRanks, UniformSelfGravityIsolatedOutputsEqualOneRank) {
  expect_outputs_equal_on_virtual_ranks(
      "uniform_sphere", "uniform_sphere/uniform_sphere.toml",
      {"mesh.nx=[32,32,32]", "amr.max_level=0", "run.max_steps=6", "output.dt=0.01"});
}

// Self-gravity with refinement: the refined levels' SOR solves (their ghost layers from the
// coarser level around every group: the plan of such runs holds it) and the potential
// correction's cycles, whose finer-level terms (restricted potential and residual, fluxes
// through the faces to leaves) go from each group's rank to the ranks that assemble the
// coarser level's source. Isolated: a blob crossing three levels regridded every root step;
// periodic: the Jeans wave (the mean density subtracted) on two levels.
TEST(VirtualRanks, AdaptiveSelfGravityIsolatedMovingBlobOutputsEqualOneRank) {
  expect_outputs_equal_on_virtual_ranks(
      "blob_gravity", "blob/blob.toml",
      {"mesh.nx=[16,16,16]", "mesh.xmax=[0.5,0.5,0.5]", "problem.center=[0.15,0.25,0.25]",
       "problem.velocity=[2,0.5,0]", "problem.width=0.05", "amr.regrid_interval=1",
       "amr.max_level=2", "gravity.enabled=true", "run.max_steps=4", "output.dt=0.005"},
      [](const evolve::Simulation& sim) {
        EXPECT_EQ(sim.mesh().num_levels(), 3);
        EXPECT_GE(sim.regrid_stats().families_added, 4);
      });
}

TEST(VirtualRanks, AdaptiveSelfGravityPeriodicJeansWaveOutputsEqualOneRank) {
  expect_outputs_equal_on_virtual_ranks(
      "jeans_amr", "jeans_wave/jeans_wave.toml",
      {"mesh.nx=[32,16,16]", "mesh.xmax=[1,0.5,0.5]", "hydro.cfl=0.3", "amr.max_level=1",
       "amr.density_refine=[1.0]", "amr.lohner_refine=[0]", "amr.lohner_derefine=[0]",
       "amr.flag_buffer=0", "run.max_steps=8", "output.dt=0.05"},
      [](const evolve::Simulation& sim) { EXPECT_EQ(sim.mesh().num_levels(), 2); });
}

}  // namespace
}  // namespace tessera
