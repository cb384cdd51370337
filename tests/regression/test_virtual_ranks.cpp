// A simulation as N virtual ranks (parallel/virtual_ranks.hpp): each rank builds the same
// mesh, owns the groups of its partition, and the reductions of the time step and of the
// diagnostics -- level speeds, conserved totals, L1 errors, div B -- combine the ranks'
// pieces through the Comm. They must equal one rank's bit for bit for N = 2, 3, 4, 7. The
// level step itself is not decomposed yet: run() refuses more than one rank.
#include <gtest/gtest.h>

#include <cstring>

#include "run_problem.hpp"
#include "tessera/core/error.hpp"
#include "tessera/evolve/diagnostics.hpp"
#include "tessera/parallel/virtual_ranks.hpp"

namespace tessera {
namespace {

struct Reductions {
  std::vector<double> totals;
  std::optional<double> l1;
  evolve::DivergenceStats div;
  std::vector<int> owned_groups;  // per level
};

Params load(const std::string& file, std::vector<std::string> overrides) {
  set_log_quiet(true);
  overrides.push_back("output.enabled=false");
  overrides.push_back("run.backend=cpu");
  return load_run_params(std::string(TESSERA_SOURCE_DIR) + "/problems/" + file, overrides);
}

Reductions reduce(const evolve::Simulation& sim) {
  Reductions r;
  r.totals = sim.conserved_totals();
  r.l1 = sim.density_l1_error();
  if (sim.model().has_magnetic_field())
    r.div = evolve::divergence_stats(sim.mesh(), kernels::MhdGlm::kBx, sim.comm(), sim.partition());
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
  expect_equal_on_virtual_ranks("sedov/sedov_amr.toml", {"mesh.nx=[32,32,32]"});
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

TEST(VirtualRanks, RunRefusesMoreThanOneRankUntilTheStepIsDecomposed) {
  const Params params = load("sod/sod.toml", {"run.max_steps=1"});
  parallel::VirtualRanks vr(2);
  EXPECT_THROW(vr.run([&](parallel::Comm& comm) {
    evolve::Simulation sim(params, comm);
    sim.run();
  }),
               Error);
}

}  // namespace
}  // namespace tessera
