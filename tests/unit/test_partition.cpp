// The partition (parallel/partition.hpp) and its exchange plans, proved with virtual
// ranks: each rank keeps the data of its own patches only (the others' are poisoned),
// receives the patches its plan lists through Comm::exchange, and then prepares every one
// of its groups -- neighbours, coarse-fine interpolation in space and time, boundaries --
// bit for bit as one store holding every patch does, on the host and through the device
// gather's tables (their host twin).
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <map>

#include "../nested_mesh.hpp"
#include "../test_fields.hpp"
#include "kernels/group_layout.hpp"
#include "tessera/evolve/refinement.hpp"
#include "tessera/exec/pipeline.hpp"
#include "tessera/exec/resident.hpp"
#include "tessera/parallel/partition.hpp"
#include "tessera/parallel/virtual_ranks.hpp"

namespace tessera::parallel {
namespace {

using mesh::testing::nested_mesh;
using mesh::testing::NestedSpec;

TEST(Partition, ContiguousPiecesOfEachLevelsCurve) {
  const mesh::Mesh m = nested_mesh({}, mesh::testing::plain_fields(1));
  ASSERT_EQ(m.num_levels(), 3);
  for (const int ranks : {1, 2, 3, 4, 7}) {
    const Partition part = Partition::along_curve(m, ranks);
    for (int level = 0; level < m.num_levels(); ++level) {
      const auto& groups = m.groups(level);
      int last = 0, count = 0;
      std::vector<int> per_rank(ranks, 0);
      for (const int g : groups) {
        const int r = part.owner(g);
        ASSERT_GE(r, last) << "level " << level << ": pieces are not contiguous on the curve";
        last = r;
        ++per_rank[r];
        for (int c = 0; c < mesh::kFamilySize; ++c) EXPECT_EQ(part.owner(g + c), r);
        ++count;
      }
      const auto [lo, hi] = std::minmax_element(per_rank.begin(), per_rank.end());
      EXPECT_LE(*hi - *lo, 1) << "level " << level << ", " << ranks << " ranks";
      if (ranks > 1) {
        EXPECT_EQ(part.counts()[level], per_rank);
      }
      EXPECT_EQ(count, static_cast<int>(groups.size()));
    }
  }
}

// Cost-weighted cuts: groups whose ghost zones read the coarser level cost
// coarse_fine_cost. Each piece's cost is within one group's cost of the level's mean (the
// cut is the last group start at or below r / ranks of the total), costs() adds up what
// each rank owns, and following() with no change of mesh keeps a weighted cut. Equal costs
// give along_curve's equal counts.
TEST(Partition, PiecesOfEqualCostWithCoarseFineGroupsWeighted) {
  NestedSpec spec;  // refined regions with groups inside them, not only on their edges
  spec.cells = {64, 64, 64};
  spec.centre = {0.45, 0.5, 0.55};
  spec.radii = {0.4, 0.25};
  const mesh::Mesh m = nested_mesh(spec, mesh::testing::plain_fields(1));
  ASSERT_EQ(m.num_levels(), 3);
  for (const double weight : {1.0, 1.57, 4.0}) {
    for (const int ranks : {2, 3, 4, 7}) {
      SCOPED_TRACE(::testing::Message() << ranks << " ranks, weight " << weight);
      const Partition part = Partition::along_curve(m, ranks, weight);
      const Partition plain = Partition::along_curve(m, ranks);
      bool differs = false;
      for (int level = 0; level < m.num_levels(); ++level) {
        std::vector<double> cost(ranks, 0);
        double total = 0, largest = 0;
        int cf = 0, last = 0;
        for (const int g : m.groups(level)) {
          const double c = Partition::group_cost(m, g, weight);
          cf += c > 1;
          const int r = part.owner(g);
          ASSERT_GE(r, last) << "level " << level << ": pieces are not contiguous";
          last = r;
          cost[r] += c, total += c, largest = std::max(largest, c);
          differs |= r != plain.owner(g);
        }
        EXPECT_EQ(part.costs()[level], cost) << "level " << level;
        for (int r = 0; r < ranks; ++r)
          EXPECT_LT(cost[r], total / ranks + largest + 1e-9) << "level " << level << " rank " << r;
        if (level > 0 && weight > 1) {
          EXPECT_GT(cf, 0) << "level " << level << " has no cf group";
        }
        const Partition kept = Partition::following(m, part, 0.0, weight);
        EXPECT_TRUE(kept.recut_levels().empty());
        for (const int g : m.groups(level)) EXPECT_EQ(kept.owner(g), part.owner(g));
      }
      if (weight == 1) {
        EXPECT_FALSE(differs) << "equal costs must cut as along_curve's counts";
      } else {
        EXPECT_TRUE(differs) << "weighted cuts equal the unweighted ones";
      }
    }
  }
}

// A refined region moving through the mesh: after each regrid Partition::following keeps
// every level's cuts (families that stay keep their rank, the pieces stay contiguous)
// until its most loaded rank exceeds the best cut's by more than the tolerance, and then
// cuts that level as along_curve does.
TEST(Partition, FollowingKeepsTheCutsUntilTheBalanceAsksForNewOnes) {
  NestedSpec spec;
  spec.cells = {64, 32, 32};
  spec.centre = {0.4, 0.5, 0.5};
  spec.radii = {0.25, 0.15};
  const auto fields = mesh::testing::plain_fields(1);
  for (const double tolerance : {0.0, 0.1, 1e9}) {
    for (const int ranks : {2, 3, 4, 7}) {
      SCOPED_TRACE(::testing::Message() << ranks << " ranks, tolerance " << tolerance);
      mesh::Mesh m = nested_mesh(spec, fields);
      Partition part = Partition::along_curve(m, ranks);
      int recut = 0, kept_changed = 0, migrated = 0;
      for (int step = 1; step <= 10; ++step) {
        std::map<std::pair<int, mesh::PatchCoord>, int> before;
        for (int level = 0; level < m.num_levels(); ++level)
          for (const int g : m.groups(level)) before[{level, m.patch(g).coord()}] = part.owner(g);
        NestedSpec next = spec;
        next.centre[0] += 0.07 * step;
        next.radii = {0.25 + 0.01 * step, 0.15 + 0.01 * step};
        m.apply_hierarchy(nested_mesh(next, fields).hierarchy());
        const Partition follow = Partition::following(m, part, tolerance);
        const Partition fresh = Partition::along_curve(m, ranks);
        const Partition kept = Partition::following(m, part, 1e300);
        ASSERT_EQ(follow.ranks(), ranks);
        const auto& recut_levels = follow.recut_levels();
        for (int level = 0; level < m.num_levels(); ++level) {
          const auto& groups = m.groups(level);
          const bool was_recut =
              std::find(recut_levels.begin(), recut_levels.end(), level) != recut_levels.end();
          const bool new_level = level >= static_cast<int>(part.counts().size());
          std::vector<int> per_rank(ranks, 0);
          int last = 0;
          bool changed = false;
          for (const int g : groups) {
            const int r = follow.owner(g);
            ASSERT_GE(r, last) << "level " << level << ": pieces are not contiguous";
            ASSERT_LT(r, ranks);
            last = r;
            ++per_rank[r];
            const auto it = before.find({level, m.patch(g).coord()});
            if (it == before.end()) {
              changed = true;
              continue;
            }
            if (it->second != r) ++migrated;
            if (!was_recut && !new_level) {
              EXPECT_EQ(it->second, r) << "level " << level << ": a kept cut moved a family";
            }
          }
          EXPECT_EQ(follow.counts()[level], per_rank);
          const long long n = static_cast<long long>(groups.size());
          const int best = static_cast<int>((n + ranks - 1) / ranks);
          const int most = *std::max_element(per_rank.begin(), per_rank.end());
          EXPECT_LE(most, (1 + tolerance) * best) << "level " << level << ", " << ranks << " ranks";
          // The root level, whose costs never change, is always along_curve's cut (kept
          // from the previous partition, not computed again).
          if (was_recut || new_level || level == 0) {
            for (const int g : groups) EXPECT_EQ(follow.owner(g), fresh.owner(g));
            EXPECT_EQ(follow.counts()[level], fresh.counts()[level]);
            EXPECT_EQ(follow.costs()[level], fresh.costs()[level]);
          }
          // What keeping every cut would have given: cut again exactly when it is out of
          // balance, kept (the same owners) otherwise.
          std::vector<int> kept_counts(ranks, 0);
          for (const int g : groups) {
            ++kept_counts[kept.owner(g)];
            if (!was_recut) {
              EXPECT_EQ(follow.owner(g), kept.owner(g));
            }
          }
          if (!new_level) {
            EXPECT_EQ(was_recut, *std::max_element(kept_counts.begin(), kept_counts.end()) >
                                     (1 + tolerance) * best)
                << "level " << level;
          }
          if (was_recut) ++recut;
          if (!was_recut && !new_level && changed) ++kept_changed;
        }
        part = follow;
      }
      // Both paths are taken: levels whose families changed kept their cuts, and (unless
      // the tolerance is never reached) levels were cut again and families migrated.
      if (tolerance < 1e9) {
        EXPECT_GT(recut, 0);
        EXPECT_GT(migrated, 0);
      } else {
        EXPECT_EQ(recut, 0);
        EXPECT_EQ(migrated, 0);
      }
      if (tolerance > 0) {
        EXPECT_GT(kept_changed, 0);
      }
    }
  }
}

// Packs `patches` (both time levels) of m into one buffer, in list order.
std::vector<double> pack(const mesh::Mesh& m, const std::vector<int>& patches) {
  std::vector<double> buf;
  for (const int p : patches)
    for (int slot = 0; slot < 2; ++slot)
      buf.insert(buf.end(), m.data(slot, p), m.data(slot, p) + m.patch_reals());
  return buf;
}

void unpack(mesh::Mesh& m, const std::vector<int>& patches, const std::vector<double>& buf) {
  EXPECT_EQ(buf.size(), patches.size() * 2 * m.patch_reals());
  if (buf.size() != patches.size() * 2 * m.patch_reals()) return;
  std::size_t at = 0;
  for (const int p : patches)
    for (int slot = 0; slot < 2; ++slot)
      for (std::size_t i = 0; i < m.patch_reals(); ++i) m.data(slot, p)[i] = Real(buf[at++]);
}

struct GatherCase {
  const char* name;
  mesh::Boundary bc;
  int ghost;
  double coarse_weight;
};

class PartitionExchange : public ::testing::TestWithParam<GatherCase> {};

TEST_P(PartitionExchange, EachRankPreparesItsGroupsAsOneStoreDoes) {
  const GatherCase gc = GetParam();
  NestedSpec spec;
  spec.bc = gc.bc;
  spec.centre = {0.15, 0.5, 0.6};  // refinement reaches the x = 0 side
  const mesh::Mesh whole = nested_mesh(spec, mesh::testing::plain_fields(2));
  ASSERT_EQ(whole.num_levels(), 3);
  const std::size_t n3 = kernels::box_cells(gc.ghost);
  // One store's boxes, every group of every level.
  std::vector<std::vector<Real>> expected(whole.num_patches() / mesh::kFamilySize);
  for (int level = 0; level < whole.num_levels(); ++level)
    for (const int g : whole.groups(level)) {
      auto& box = expected[g / mesh::kFamilySize];
      box.resize(n3 * whole.nvar());
      exec::prepare_group(whole, whole.current_slot(level), g, gc.ghost, box.data(),
                          gc.coarse_weight);
    }
  for (const int ranks : {2, 3, 4, 7}) {
    const Partition part = Partition::along_curve(whole, ranks);
    VirtualRanks vr(ranks);
    std::vector<int> received(ranks, 0), checked(ranks, 0);
    vr.run([&](Comm& comm) {
      const int r = comm.rank();
      // This rank's store: its own patches; every other patch poisoned.
      mesh::Mesh m = whole;
      for (int p = 0; p < m.num_patches(); ++p)
        if (!part.owns(r, p))
          for (int slot = 0; slot < 2; ++slot)
            std::fill_n(m.data(slot, p), m.patch_reals(), std::numeric_limits<Real>::quiet_NaN());
      for (int level = 0; level < m.num_levels(); ++level) {
        // Every rank's plan is known to every rank (the structure is replicated): what r
        // sends to q is q's receive list from r.
        const std::vector<ExchangePlan> plans = plan_level(m, part, level);
        std::vector<std::vector<double>> send(ranks);
        for (int q = 0; q < ranks; ++q) {
          auto list = plans[q].same_level[r];
          list.insert(list.end(), plans[q].coarse[r].begin(), plans[q].coarse[r].end());
          send[q] = pack(m, list);
        }
        const auto got = comm.exchange(std::move(send));
        for (int q = 0; q < ranks; ++q) {
          auto list = plans[r].same_level[q];
          list.insert(list.end(), plans[r].coarse[q].begin(), plans[r].coarse[q].end());
          unpack(m, list, got[q]);
          received[r] += static_cast<int>(list.size());
        }
        std::vector<Real> box(n3 * m.nvar()), gathered(n3 * m.nvar());
        // The device gather's tables for this rank's groups (as a device-resident level on
        // ranks would list them), evaluated by their host twin: the exchange must bring
        // every patch they read, coarse-fine ghost cells included.
        std::vector<int> own;
        for (const int g : m.groups(level))
          if (part.owns(r, g)) own.push_back(g);
        const exec::GatherTables tables = exec::build_gather_tables(m, level, &own);
        bool mismatched = false;
        for (std::size_t i = 0; i < own.size(); ++i) {
          const int g = own[i];
          exec::prepare_group(m, m.current_slot(level), g, gc.ghost, box.data(), gc.coarse_weight);
          exec::gather_group_host(m, tables, m.current_slot(level), static_cast<int>(i), gc.ghost,
                                  0, m.nvar(), gathered.data(),
                                  exec::coarse_slots(m, level, gc.coarse_weight));
          // EXPECT, not ASSERT: a rank that returned early would leave the others waiting
          // in the next exchange. One message per rank and level is enough.
          const std::size_t bytes = box.size() * sizeof(Real);
          const Real* want = expected[g / mesh::kFamilySize].data();
          const bool same = std::memcmp(box.data(), want, bytes) == 0;
          const bool same_gathered = std::memcmp(gathered.data(), want, bytes) == 0;
          if ((!same || !same_gathered) && !mismatched) {
            ADD_FAILURE() << ranks << " ranks, rank " << r << ", level " << level << ": group " << g
                          << " differs from the one-store gather ("
                          << (same ? "the device tables' host twin" : "prepare_group") << ")";
            mismatched = true;
          }
          ++checked[r];
        }
        // Buffer copies are dropped again: the next level's plan must stand on its own.
        for (int p = 0; p < m.num_patches(); ++p)
          if (!part.owns(r, p))
            for (int slot = 0; slot < 2; ++slot)
              std::fill_n(m.data(slot, p), m.patch_reals(), std::numeric_limits<Real>::quiet_NaN());
      }
    });
    int total = 0;
    for (int r = 0; r < ranks; ++r) {
      EXPECT_GT(received[r], 0) << ranks << " ranks, rank " << r;
      total += checked[r];
    }
    EXPECT_EQ(total * mesh::kFamilySize, whole.num_patches());
  }
}

// A group that reads only its rank's patches (reads_only_own) is prepared, with every other
// patch poisoned and nothing received, as one store prepares it: what the hydro pass relies
// on when it steps such groups while the level's exchange is in flight. Both kinds of
// groups occur, and some groups whose same-level blocks are all their rank's still read
// another rank's coarse patches (so leaving out the coarse check fails here).
TEST_P(PartitionExchange, GroupsThatReadOnlyOwnPatchesNeedNoExchange) {
  const GatherCase gc = GetParam();
  NestedSpec spec;
  spec.bc = gc.bc;
  spec.centre = {0.15, 0.5, 0.6};
  const mesh::Mesh whole = nested_mesh(spec, mesh::testing::plain_fields(2));
  const std::size_t n3 = kernels::box_cells(gc.ghost);
  std::vector<Real> expected(n3 * whole.nvar()), box(n3 * whole.nvar());
  int interior = 0, boundary = 0, coarse_only = 0, mismatched = 0;
  for (const int ranks : {2, 3, 4, 7}) {
    const Partition part = Partition::along_curve(whole, ranks);
    for (int r = 0; r < ranks; ++r) {
      mesh::Mesh m = whole;
      for (int p = 0; p < m.num_patches(); ++p)
        if (!part.owns(r, p))
          for (int slot = 0; slot < 2; ++slot)
            std::fill_n(m.data(slot, p), m.patch_reals(), std::numeric_limits<Real>::quiet_NaN());
      for (int level = 0; level < m.num_levels(); ++level)
        for (const int g : m.groups(level)) {
          if (!part.owns(r, g)) continue;
          if (!reads_only_own(m, part, r, g)) {
            ++boundary;
            // Same-level blocks all this rank's: the coarse patches decided it.
            const mesh::NeighbourTable::Row row = m.neighbours().row(g);
            bool own = true;
            for (int b = 0; b < mesh::kGroupBlocks; ++b)
              own &= row[b] < 0 || part.owner(row[b]) == r;
            coarse_only += own;
            continue;
          }
          ++interior;
          exec::prepare_group(whole, whole.current_slot(level), g, gc.ghost, expected.data(),
                              gc.coarse_weight);
          exec::prepare_group(m, m.current_slot(level), g, gc.ghost, box.data(), gc.coarse_weight);
          mismatched += std::memcmp(box.data(), expected.data(), box.size() * sizeof(Real)) != 0;
        }
    }
  }
  std::printf("%s: %d interior groups, %d boundary groups (%d by their coarse reads alone)\n",
              gc.name, interior, boundary, coarse_only);
  EXPECT_EQ(mismatched, 0);
  EXPECT_GT(boundary, 0);
  // The periodic mesh is small enough that every group touches another rank.
  if (gc.bc != mesh::Boundary::kPeriodic) {
    EXPECT_GT(interior, 0);
    EXPECT_GT(coarse_only, 0);
  }
}

// What a rank sends (plan_sends, from its own groups and the others' next to them) is
// what each peer's plan_receives lists from it, in the same order, on meshes that regrids
// have left out of canonical order (slots reused and moved), for the plans of the hydro
// step and of the refined levels' Poisson solves (every group's parent neighbourhood).
TEST(PartitionExchange, EachRanksSendsAreWhatItsPeersReceive) {
  for (const auto bc : {mesh::Boundary::kPeriodic, mesh::Boundary::kOutflow}) {
    mesh::Mesh m(mesh::testing::box_geometry(bc, 64), mesh::testing::plain_fields(1), {}, false);
    // A ball moving across the box, refined twice: families added, removed and moved.
    for (int step = 0; step < 6; ++step) {
      const std::array<double, 3> centre = {0.2 + 0.1 * step, 0.45, 0.55};
      evolve::Marks marks(2);
      for (int level = 0; level < m.num_levels() && level < 2; ++level)
        for (const int g : m.groups(level))
          for (int c = 0; c < mesh::kFamilySize; ++c) {
            const auto x = m.cell_center(g + c, 4, 4, 4);
            if (std::hypot(x[0] - centre[0], x[1] - centre[1], x[2] - centre[2]) <
                0.2 / (1 + level))
              marks[level].push_back(evolve::mark_key(m.patch(g + c).coord()));
          }
      for (auto& l : marks) evolve::sort_marks(l);
      m.apply_hierarchy(evolve::settle_hierarchy(m, 2, marks));
    }
    ASSERT_EQ(m.num_levels(), 3);
    ASSERT_FALSE(m.is_canonical());
    int sent = 0, sent_coarse = 0;
    for (const int ranks : {2, 3, 5})
      for (const bool every_parent : {false, true}) {
        const Partition part = Partition::along_curve(m, ranks);
        for (int level = 0; level < m.num_levels(); ++level) {
          std::vector<ExchangePlan> in;
          for (int q = 0; q < ranks; ++q)
            in.push_back(plan_receives(m, part, q, level, every_parent));
          for (int r = 0; r < ranks; ++r) {
            const ExchangePlan out = plan_sends(m, part, r, level, every_parent);
            for (int q = 0; q < ranks; ++q) {
              EXPECT_EQ(out.same_level[q], in[q].same_level[r])
                  << ranks << " ranks, level " << level << ", " << r << " to " << q;
              EXPECT_EQ(out.coarse[q], in[q].coarse[r])
                  << ranks << " ranks, level " << level << ", " << r << " to " << q;
              sent += static_cast<int>(out.same_level[q].size());
              sent_coarse += static_cast<int>(out.coarse[q].size());
            }
          }
        }
      }
    EXPECT_GT(sent, 0);
    EXPECT_GT(sent_coarse, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PartitionExchange,
    ::testing::Values(GatherCase{"outflow_rk2", mesh::Boundary::kOutflow, 4, 0.5},
                      GatherCase{"periodic_rk2", mesh::Boundary::kPeriodic, 4, 0.5},
                      GatherCase{"reflecting_mc_ep", mesh::Boundary::kReflecting, 6, 0.25}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace tessera::parallel
