// The regrid's change of the hierarchy computed from the changes alone (settle_change)
// against the whole hierarchy's plan (settle_hierarchy): through sequences of random
// marks, on one rank and on several (each rank holding the marks of its own families
// and some spilled across their boundaries, as the flag buffer spills), both give the
// same mesh, patch for patch.
#include <gtest/gtest.h>

#include <random>

#include "../test_fields.hpp"
#include "tessera/evolve/refinement.hpp"
#include "tessera/parallel/partition.hpp"
#include "tessera/parallel/virtual_ranks.hpp"

namespace tessera::evolve {
namespace {

using mesh::Boundary;
using mesh::Geometry;
using mesh::Hierarchy;
using mesh::kFamilySize;
using mesh::Mesh;

// Random marks of `m`'s patches below max_level: most refined patches marked again (they
// stay; `shrink`: fewer of them), few leaves (they refine), in clusters around a few centres so
// that the nesting has work to do; each mark with the patch that made it (itself or a neighbour, as
// the flag buffer spills a patch's flags into its neighbours).
struct Mark {
  int level;
  std::uint64_t key;
  int by;  // the patch whose flags made the mark
};

std::vector<Mark> random_marks(const Mesh& m, int max_level, std::mt19937& rng,
                               bool shrink = false) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<std::array<double, 3>> centres(3);
  for (auto& c : centres) c = {u(rng), u(rng), u(rng)};
  std::vector<Mark> marks;
  for (int level = 0; level < max_level && level < m.num_levels(); ++level)
    for (const int g : m.groups(level))
      for (int c = 0; c < kFamilySize; ++c) {
        const int p = g + c;
        const auto x = m.cell_center(p, 4, 4, 4);
        double d = 1;
        for (const auto& ce : centres)
          d = std::min(d, std::hypot(x[0] - ce[0], x[1] - ce[1], x[2] - ce[2]));
        const double near = d < 0.15 / (1 << level) ? (shrink ? 0.1 : 0.6) : 0.01;
        const double keep = m.patch(p).is_leaf() ? near : shrink ? 0.3 : 0.8;
        if (u(rng) >= keep) continue;
        // Made by the patch itself, or spilled from one of its neighbours.
        int by = p;
        if (u(rng) < 0.4) {
          const int n = std::uniform_int_distribution<int>(0, 26)(rng);
          const int q = m.neighbour_patch(p, n);
          if (q != mesh::kNoPatch) by = q;
        }
        marks.push_back({level, mark_key(m.patch(p).coord()), by});
      }
  return marks;
}

// The marks of the families rank `rank` owns (all of them with no partition), per level.
Marks marks_of(const std::vector<Mark>& all, int max_level, const parallel::Partition* part,
               int rank) {
  Marks own(max_level);
  for (const Mark& mk : all)
    if (!part || part->owns(rank, mk.by)) own[mk.level].push_back(mk.key);
  for (auto& l : own) sort_marks(l);
  return own;
}

void expect_same_forest(const Mesh& a, const Mesh& b, const std::string& what) {
  ASSERT_EQ(a.num_patches(), b.num_patches()) << what;
  ASSERT_EQ(a.num_levels(), b.num_levels()) << what;
  for (int p = 0; p < a.num_patches(); ++p) {
    ASSERT_EQ(a.patch(p).level, b.patch(p).level) << what << ", patch " << p;
    ASSERT_EQ(a.patch(p).corner, b.patch(p).corner) << what << ", patch " << p;
    for (int n = 0; n < 27; ++n)
      ASSERT_EQ(a.neighbour_patch(p, n), b.neighbour_patch(p, n)) << what << ", patch " << p;
  }
  for (int level = 0; level < a.num_levels(); ++level)
    ASSERT_EQ(a.groups(level), b.groups(level)) << what << ", level " << level;
}

struct Case {
  Boundary bc;
  int ranks;
};

class SettleChange : public ::testing::TestWithParam<Case> {};

// Every step: the whole plan applied to one mesh, the change to another (on each rank its
// own copy, from its own marks); the meshes stay the same patch for patch, and through the
// steps families are added, removed and moved.
TEST_P(SettleChange, EqualsTheWholeHierarchysPlan) {
  const auto [bc, ranks] = GetParam();
  constexpr int kMaxLevel = 3;
  const Geometry geo = mesh::testing::box_geometry(bc, 64);
  std::mt19937 rng(7 + ranks);
  Mesh whole(geo, mesh::testing::plain_fields(1), {}, false);
  std::vector<Mesh> changed;
  for (int r = 0; r < ranks; ++r)
    changed.emplace_back(geo, mesh::testing::plain_fields(1), Hierarchy{}, false);
  int added = 0, removed = 0, moved = 0, foreign = 0;
  for (int step = 0; step < 14; ++step) {
    const std::vector<Mark> marks = random_marks(whole, kMaxLevel, rng, step % 2 == 1);
    const Hierarchy h = settle_hierarchy(whole, kMaxLevel, marks_of(marks, kMaxLevel, nullptr, 0));
    const mesh::MeshChange c = whole.apply_hierarchy(h);
    whole.check_invariants();
    added += c.added_families, removed += c.removed_families, moved += c.moved_families;
    if (ranks == 1) {
      const auto change =
          settle_change(changed[0], kMaxLevel, marks_of(marks, kMaxLevel, nullptr, 0));
      changed[0].apply_changes(change);
    } else {
      const auto part = parallel::Partition::along_curve(changed[0], ranks);
      for (const Mark& mk : marks)
        if (part.owner(mk.by) != part.owner(changed[0].find_patch(mk.level, mark_coord(mk.key))))
          ++foreign;
      parallel::VirtualRanks(ranks).run([&](parallel::Comm& comm) {
        Mesh& m = changed[comm.rank()];
        const auto change = settle_change(
            m, kMaxLevel, marks_of(marks, kMaxLevel, &part, comm.rank()), &part, &comm);
        m.apply_changes(change);
      });
    }
    for (int r = 0; r < ranks; ++r) {
      changed[r].check_invariants();
      expect_same_forest(whole, changed[r],
                         "step " + std::to_string(step) + ", rank " + std::to_string(r));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  EXPECT_GT(added, 0);
  EXPECT_GT(removed, 0);
  EXPECT_GT(moved, 0);
  EXPECT_GE(whole.num_levels(), 3);
  if (ranks > 1) {
    EXPECT_GT(foreign, 0) << "no mark crossed a boundary between the ranks' pieces";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Meshes, SettleChange,
    ::testing::Values(Case{Boundary::kPeriodic, 1}, Case{Boundary::kOutflow, 1},
                      Case{Boundary::kPeriodic, 3}, Case{Boundary::kOutflow, 4}),
    [](const auto& info) {
      return std::string(info.param.bc == Boundary::kPeriodic ? "Periodic" : "Outflow") +
             std::to_string(info.param.ranks) + "Ranks";
    });

// A run restarted with fewer levels: the families beyond max_level go, as the whole plan
// has them go.
TEST(SettleChange, FamiliesBeyondMaxLevelAreRemoved) {
  const Geometry geo = mesh::testing::box_geometry(Boundary::kOutflow, 32);
  std::mt19937 rng(3);
  Mesh a(geo, mesh::testing::plain_fields(1), {}, false);
  for (int step = 0; step < 12 && a.num_levels() < 4; ++step)
    a.apply_hierarchy(settle_hierarchy(a, 3, marks_of(random_marks(a, 3, rng), 3, nullptr, 0)));
  ASSERT_EQ(a.num_levels(), 4);
  Mesh b(geo, mesh::testing::plain_fields(1), a.hierarchy(), false);
  const Marks marks = marks_of(random_marks(a, 1, rng), 1, nullptr, 0);
  a.apply_hierarchy(settle_hierarchy(a, 1, marks));
  b.apply_changes(settle_change(b, 1, marks));
  EXPECT_EQ(a.num_levels(), 2);
  EXPECT_EQ(a.hierarchy(), b.hierarchy());
}

}  // namespace
}  // namespace tessera::evolve
