// Device-resident runs on several ranks: 2, 3 and 4 virtual ranks (threads of one process
// sharing the GPU) against one rank's resident run, bit for bit, for uniform and adaptive
// hydro and MHD, and self-gravity with and without refinement.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/evolve/schema.hpp"
#include "tessera/evolve/simulation.hpp"
#include "tessera/parallel/virtual_ranks.hpp"

namespace tessera {
namespace {

// Device-resident levels on several ranks: 2, 3 and 4 virtual ranks (threads of one
// process sharing the GPU; their buffer patches go through page-locked host memory and the
// in-process Comm) keep their data on the GPU, step the groups that read no other rank's
// patch while the halo travels, and end with every owned patch of every level equal to one
// rank's resident run, bit for bit (families found by level and position). The device
// copies of other ranks' patches are set to NaN before each halo (and the host's before
// each host exchange): what no halo delivered cannot be read unnoticed. Without the halo's
// unpack (or with a stale buffer) the ranks' boundary groups read NaN and differ. Adaptive
// runs add the coarser level's patches in both time levels to each refined level's halo,
// the fine sums of other ranks' flux registers and the restricted parents of other ranks'
// families (sent to their ranks), and regrids.
// min_added: the families the one-rank run's regrids must add at least (each regrid then
// makes its data on the GPUs: prolongations, and moves between ranks). min_terms: the
// potential correction's terms the ranks must have sent at least (summed over the ranks).
void expect_resident_ranks_match(const std::string& file, const std::vector<std::string>& ov,
                                 long long min_added = 0, long long min_terms = 0) {
  set_log_quiet(true);
  std::vector<std::string> all = {"run.backend=cuda", "gpu.resident=on", "output.enabled=false"};
  all.insert(all.end(), ov.begin(), ov.end());
  const Params params = load_run_params(std::string(TESSERA_SOURCE_DIR) + "/problems/" + file, all);
  evolve::Simulation one(params);
  ASSERT_TRUE(one.device_resident());
  one.run();
  EXPECT_GE(one.regrid_stats().families_added, min_added) << file;
  if (min_added > 0) {
    EXPECT_GT(one.regrid_stats().device_regrids, 0) << file;
  }
  const mesh::Mesh& ref = one.mesh();
  std::map<std::pair<int, mesh::PatchCoord>, int> families;  // (level, position): first patch
  for (int level = 0; level < ref.num_levels(); ++level)
    for (const int g : ref.groups(level)) families[{level, ref.patch(g).coord()}] = g;
  for (const int n : {2, 3, 4}) {
    std::vector<long long> compared(n, 0), differing(n, 0), missing(n, 0), regrids(n, 0),
        device_regrids(n, 0), migrated(n, 0), terms(n, 0);
    std::vector<int> resident(n, 0);
    parallel::VirtualRanks vr(n);
    vr.run([&](parallel::Comm& comm) {
      evolve::Simulation sim(params, comm);
      if (!sim.device_resident()) throw Error(ErrorKind::kInternal, "not device-resident");
      sim.set_poison_foreign_patches(true);
      sim.run();
      resident[comm.rank()] = sim.device_resident();
      regrids[comm.rank()] = sim.regrid_count();
      device_regrids[comm.rank()] = sim.regrid_stats().device_regrids;
      migrated[comm.rank()] = sim.regrid_stats().families_migrated;
      terms[comm.rank()] = sim.correction_terms_sent().device;
      const mesh::Mesh& m = sim.mesh();
      for (int level = 0; level < m.num_levels(); ++level)
        for (const int g : m.groups(level)) {
          if (!sim.partition().owns(comm.rank(), g)) continue;
          const auto it = families.find({level, m.patch(g).coord()});
          if (it == families.end()) {
            ++missing[comm.rank()];
            continue;
          }
          for (int c = 0; c < mesh::kFamilySize; ++c) {
            ++compared[comm.rank()];
            if (std::memcmp(m.current(g + c), ref.current(it->second + c),
                            m.patch_reals() * sizeof(Real)))
              ++differing[comm.rank()];
          }
        }
    });
    long long total = 0;
    if (one.regrid_count() > 0)
      std::printf(
          "%s: one rank %d regrids (%lld on the device, %lld families added); %d ranks: "
          "%lld on the device, %lld families changed rank\n",
          file.c_str(), one.regrid_count(), one.regrid_stats().device_regrids,
          one.regrid_stats().families_added, n, device_regrids[0], migrated[0]);
    for (int r = 0; r < n; ++r) {
      total += compared[r];
      EXPECT_EQ(differing[r], 0) << file << ", " << n << " ranks: rank " << r;
      EXPECT_EQ(missing[r], 0) << file << ", " << n << " ranks: rank " << r;
      EXPECT_TRUE(resident[r]) << file << ", " << n << " ranks: rank " << r << " ended staged";
      EXPECT_EQ(regrids[r], one.regrid_count()) << file << ", " << n << " ranks: rank " << r;
      // Each regrid's data made on the GPUs, as on one rank.
      EXPECT_EQ(device_regrids[r], one.regrid_stats().device_regrids)
          << file << ", " << n << " ranks: rank " << r;
    }
    EXPECT_EQ(total, ref.num_patches()) << file << ", " << n << " ranks";
    // Adaptive self-gravity with the correction: its terms went between the ranks (from
    // the GPUs: the first solve, at set-up, is the host's).
    if (min_terms > 0) {
      long long sent = 0;
      for (int r = 0; r < n; ++r) sent += terms[r];
      EXPECT_GE(sent, min_terms) << file << ", " << n << " ranks";
    }
  }
}

TEST(GpuResident, SedovOnVirtualRanksEqualsOneRank) {
  expect_resident_ranks_match(
      "sedov/sedov.toml",
      {"mesh.nx=[32,48,32]", "mesh.xmin=[-0.5,-0.75,-0.5]", "mesh.xmax=[0.5,0.75,0.5]",
       "mesh.bc_xlo=reflecting", "mesh.bc_xhi=outflow", "mesh.bc_zlo=outflow",
       "mesh.bc_zhi=reflecting", "hydro.passive_scalars=1", "run.max_steps=8"});
}

TEST(GpuResident, OrszagTangOnVirtualRanksEqualsOneRank) {
  expect_resident_ranks_match("orszag_tang/orszag_tang.toml",
                              {"mesh.nx=[64,64,16]", "mesh.xmax=[1,1,0.25]", "run.max_steps=8"});
}

// Adaptive: a blob moving across two levels, regridded every root step (8 families added,
// 4 removed, 3 moved into holes, on the GPUs of their ranks), with a passive scalar; the
// off-centre Sedov blast with first-order flux correction on its refined level (the
// correcting batches take a solve's fluxes back out of the registers, of other ranks'
// registers too); the GLM-MHD blast, growing (24 families added).
TEST(GpuResident, AmrBlobOnVirtualRanksEqualsOneRank) {
  expect_resident_ranks_match(
      "blob/blob.toml",
      {"mesh.nx=[32,16,16]", "mesh.xmax=[1,0.5,0.5]", "problem.center=[0.3,0.25,0.25]",
       "problem.velocity=[2,0.5,0]", "problem.width=0.05", "amr.regrid_interval=1",
       "amr.max_level=2", "hydro.passive_scalars=1", "hydro.integrator=vl2", "run.max_steps=20"},
      8);
}

TEST(GpuResident, AmrSedovWithFirstOrderFluxCorrectionOnVirtualRanksEqualsOneRank) {
  expect_resident_ranks_match("sedov/sedov.toml",
                              {"mesh.nx=[32,32,32]", "problem.center=[0.021,-0.013,0.008]",
                               "hydro.integrator=vl2", "amr.max_level=1", "run.max_steps=16"});
}

TEST(GpuResident, AmrMhdBlastOnVirtualRanksEqualsOneRank) {
  expect_resident_ranks_match(
      "mhd_blast/mhd_blast.toml",
      {"mesh.nx=[32,32,32]", "mesh.xmin=[-0.5,-0.5,-0.5]", "mesh.xmax=[0.5,0.5,0.5]",
       "amr.max_level=1", "hydro.integrator=vl2", "amr.regrid_interval=1", "run.max_steps=12"},
      24);
}

// Self-gravity without refinement on several ranks, resident: each rank's root density read
// from its GPU, the root solve in slabs on the ranks' GPUs (the transposes through the host
// between virtual ranks) or gathered whole on each, the potential each rank reads sent back
// up, written into the pool's phi field and kicked there. Equal to one rank's resident run
// (the cuFFT slab passes on one GPU) bit for bit: periodic (the Jeans wave, the mean density
// from the ranks' planes) and isolated (the uniform sphere), slabs and gathered. Without the
// potential's upload the kicks read the last solve's potential (or NaN) and differ.
TEST(GpuResident, SelfGravityOnVirtualRanksEqualsOneRank) {
  expect_resident_ranks_match("jeans_wave/jeans_wave.toml",
                              {"hydro.integrator=vl2", "run.max_steps=10"});
  expect_resident_ranks_match("uniform_sphere/uniform_sphere.toml",
                              {"mesh.nx=[32,32,32]", "hydro.integrator=rk2", "run.max_steps=8"});
  expect_resident_ranks_match(
      "uniform_sphere/uniform_sphere.toml",
      {"mesh.nx=[32,32,32]", "hydro.integrator=vl2", "run.max_steps=6", "mpi.root_fft=gathered"});
}

// Adaptive self-gravity on several ranks, resident: the refined levels' SOR solves and
// kicks on each rank's own groups (their potential tables in the device tables' order), the
// buffer patches refreshed by the halos between the potential correction's passes, the
// finer levels' terms read from one rank's GPU and written to the GPUs of the ranks that
// assemble the coarser level's source. Isolated: a blob crossing three levels, regridded
// every root step; periodic: the Jeans wave on two levels (as the host's ranks test them,
// tests/regression/test_virtual_ranks.cpp), the terms sent from the GPUs; and the blob
// without the correction. Without the terms' exchange, or a halo refresh, the sources of
// the ranks' boundary patches differ.
TEST(GpuResident, AdaptiveSelfGravityOnVirtualRanksEqualsOneRank) {
  expect_resident_ranks_match(
      "blob/blob.toml",
      {"mesh.nx=[16,16,16]", "mesh.xmax=[0.5,0.5,0.5]", "problem.center=[0.15,0.25,0.25]",
       "problem.velocity=[2,0.5,0]", "problem.width=0.05", "amr.regrid_interval=1",
       "amr.max_level=2", "gravity.enabled=true", "run.max_steps=4"},
      4, 1);
  expect_resident_ranks_match(
      "jeans_wave/jeans_wave.toml",
      {"mesh.nx=[32,16,16]", "mesh.xmax=[1,0.5,0.5]", "hydro.cfl=0.3", "amr.max_level=1",
       "amr.density_refine=[1.0]", "amr.lohner_refine=[0]", "amr.lohner_derefine=[0]",
       "amr.flag_buffer=0", "run.max_steps=8"},
      0, 1);
  // Without the correction: each refined level solved once from the coarser one.
  expect_resident_ranks_match(
      "blob/blob.toml",
      {"mesh.nx=[16,16,16]", "mesh.xmax=[0.5,0.5,0.5]", "problem.center=[0.15,0.25,0.25]",
       "problem.velocity=[2,0.5,0]", "problem.width=0.05", "amr.regrid_interval=1",
       "amr.max_level=2", "gravity.enabled=true", "gravity.potential_correction=false",
       "run.max_steps=4"},
      4);
}

// Virtual ranks share the one GPU: each plans its device copies within its share of the
// free memory (Simulation::gpu_memory), which a rank that saw all of it would overcommit.
TEST(GpuResident, RanksSharingTheGpuCountEachOther) {
  set_log_quiet(true);
  const Params params =
      load_run_params(std::string(TESSERA_SOURCE_DIR) + "/problems/sedov/sedov.toml",
                      {"run.backend=cuda", "mesh.nx=[32,32,32]", "output.enabled=false"});
  EXPECT_EQ(evolve::Simulation(params).gpu_sharers(), 1);
  for (const int n : {2, 3}) {
    std::vector<int> sharers(n, 0);
    parallel::VirtualRanks(n).run([&](parallel::Comm& comm) {
      sharers[comm.rank()] = evolve::Simulation(params, comm).gpu_sharers();
    });
    for (int r = 0; r < n; ++r) EXPECT_EQ(sharers[r], n) << n << " ranks: rank " << r;
  }
}

// Adaptive self-gravity stays resident on several ranks ("auto" and "on"), with and without
// the potential correction; "on" without the cuda backend is refused with the reason.
TEST(GpuResident, AdaptiveSelfGravityOnRanksIsResident) {
  set_log_quiet(true);
  auto sphere = [](std::vector<std::string> extra) {
    std::vector<std::string> ov = {"mesh.nx=[32,32,32]", "output.enabled=false"};
    ov.insert(ov.end(), extra.begin(), extra.end());
    return load_run_params(
        std::string(TESSERA_SOURCE_DIR) + "/problems/uniform_sphere/uniform_sphere.toml", ov);
  };
  std::vector<int> uniform(2, 0), refined(2, 0), on(2, 0), uncorrected(2, 0), refused(2, 0);
  parallel::VirtualRanks vr(2);
  vr.run([&](parallel::Comm& comm) {
    const int r = comm.rank();
    uniform[r] = evolve::Simulation(sphere({"run.backend=cuda"}), comm).device_resident();
    refined[r] =
        evolve::Simulation(sphere({"run.backend=cuda", "amr.max_level=1"}), comm).device_resident();
    on[r] =
        evolve::Simulation(sphere({"run.backend=cuda", "amr.max_level=1", "gpu.resident=on"}), comm)
            .device_resident();
    uncorrected[r] =
        evolve::Simulation(
            sphere({"run.backend=cuda", "amr.max_level=1", "gravity.potential_correction=false"}),
            comm)
            .device_resident();
    try {
      evolve::Simulation sim(sphere({"run.backend=cpu", "gpu.resident=on"}), comm);
    } catch (const Error& e) {
      refused[r] = e.kind() == ErrorKind::kInput &&
                   std::string(e.what()).find("needs the cuda backend") != std::string::npos;
    }
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(uniform[r]) << "rank " << r;
    EXPECT_TRUE(refined[r]) << "rank " << r;
    EXPECT_TRUE(on[r]) << "rank " << r;
    EXPECT_TRUE(uncorrected[r]) << "rank " << r;
    EXPECT_TRUE(refused[r]) << "rank " << r;
  }
}

}  // namespace
}  // namespace tessera
