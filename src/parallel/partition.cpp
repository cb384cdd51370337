#include "tessera/parallel/partition.hpp"

#include <algorithm>

#include "tessera/core/error.hpp"

namespace tessera::parallel {

Partition Partition::along_curve(const mesh::Mesh& m, int ranks, double coarse_fine_cost) {
  if (ranks < 1) throw Error(ErrorKind::kInternal, "a partition needs at least one rank");
  Partition p(m, ranks, coarse_fine_cost);
  for (int level = 0; level < m.num_levels(); ++level)
    p.cut_level(m, level, p.level_costs(m, level));
  return p;
}

Partition Partition::following(const mesh::Mesh& m, const Partition& previous, double tolerance,
                               double coarse_fine_cost) {
  Partition p(m, previous.ranks_, coarse_fine_cost);
  for (int level = 0; level < m.num_levels(); ++level) {
    if (level == 0 && !previous.starts_.empty()) {
      // The root level never changes, its families keep their slots (the forest's first),
      // and none of its groups reads a coarser level, so every cost is 1: the previous cut
      // is along_curve's, and keeping it gives the same owners again. Copied instead of a
      // pass over every root family per regrid.
      const std::size_t families = m.groups(0).size();
      std::copy_n(previous.owner_.begin(), families, p.owner_.begin());
      p.counts_[0] = previous.counts_[0];
      p.costs_[0] = previous.costs_[0];
      p.starts_[0] = previous.starts_[0];
      continue;
    }
    const std::vector<double> cost = p.level_costs(m, level);
    if (level >= static_cast<int>(previous.starts_.size())) {  // a new level
      p.cut_level(m, level, cost);
      continue;
    }
    p.starts_[level] = previous.starts_[level];
    p.assign_level(m, level, cost);
    const double most = *std::max_element(p.costs_[level].begin(), p.costs_[level].end());
    // along_curve's most loaded rank on this level.
    const std::vector<std::size_t> best = p.best_cut(cost);
    double least_most = 0;
    for (int r = 0; r < p.ranks_; ++r) {
      double piece = 0;  // summed as assign_level sums, group by group
      for (std::size_t k = best[r]; k < best[r + 1]; ++k) piece += cost[k];
      least_most = std::max(least_most, piece);
    }
    if (most > (1.0 + tolerance) * least_most) {
      p.cut_level(m, level, cost);
      p.recut_.push_back(level);
    }
  }
  return p;
}

Partition::Partition(const mesh::Mesh& m, int ranks, double coarse_fine_cost)
    : ranks_(ranks),
      coarse_fine_cost_(coarse_fine_cost),
      owner_(m.num_patches() / mesh::kFamilySize, -1),
      counts_(m.num_levels()),
      costs_(m.num_levels()),
      starts_(m.num_levels()) {}

double Partition::group_cost(const mesh::Mesh& m, int g, double coarse_fine_cost) {
  return m.neighbours().reads_coarse(g) ? coarse_fine_cost : 1;
}

std::vector<double> Partition::level_costs(const mesh::Mesh& m, int level) const {
  const auto& groups = m.groups(level);
  std::vector<double> cost(groups.size());
  for (std::size_t i = 0; i < groups.size(); ++i)
    cost[i] = group_cost(m, groups[i], coarse_fine_cost_);
  return cost;
}

std::vector<std::size_t> Partition::best_cut(const std::vector<double>& cost) const {
  const std::size_t n = cost.size();
  std::vector<double> before(n + 1, 0);  // cost of the groups before each
  for (std::size_t i = 0; i < n; ++i) before[i + 1] = before[i] + cost[i];
  const double total = before[n];
  std::vector<std::size_t> first(ranks_ + 1, n);
  first[0] = 0;
  std::size_t i = 0;
  for (int r = 1; r < ranks_; ++r) {
    // The last i with before[i] * ranks <= total * r (exact for equal costs: integers).
    while (i < n && before[i + 1] * ranks_ <= total * r) ++i;
    first[r] = i;
  }
  return first;
}

void Partition::cut_level(const mesh::Mesh& m, int level, const std::vector<double>& cost) {
  const auto& groups = m.groups(level);
  const std::vector<std::size_t> first = best_cut(cost);
  std::vector<std::uint64_t>& starts = starts_[level];
  starts.assign(ranks_, 0);
  for (int r = 1; r < ranks_; ++r) {
    // An empty piece at the end starts past every key (so does every later one).
    starts[r] = first[r] < groups.size() ? m.curve_key(groups[first[r]]) : ~std::uint64_t{0};
  }
  assign_level(m, level, cost);
}

void Partition::assign_level(const mesh::Mesh& m, int level, const std::vector<double>& cost) {
  const std::vector<std::uint64_t>& starts = starts_[level];
  const auto& groups = m.groups(level);
  counts_[level].assign(ranks_, 0);
  costs_[level].assign(ranks_, 0.0);
  // Rank r's piece: the groups whose keys lie from its start up to the next rank's (keys
  // ascend along the level, and so do the starts).
  std::size_t begin = 0;
  for (int r = 0; r < ranks_; ++r) {
    std::size_t end = groups.size();
    if (r + 1 < ranks_)
      end = static_cast<std::size_t>(
          std::lower_bound(groups.begin() + static_cast<std::ptrdiff_t>(begin), groups.end(),
                           starts[r + 1],
                           [&](int g, std::uint64_t key) { return m.curve_key(g) < key; }) -
          groups.begin());
    for (std::size_t i = begin; i < end; ++i) {
      owner_[groups[i] / mesh::kFamilySize] = r;
      costs_[level][r] += cost[i];
    }
    counts_[level][r] = static_cast<int>(end - begin);
    begin = end;
  }
}

namespace {

// Sorts each peer's list of patches (all of one level) into canonical order, the order
// both sides pack them: by their family's curve key, then the child's index (Mesh::groups,
// canonical_order); removes repeats. Keys of the listed patches only: no pass over the mesh.
void canonical_lists(const mesh::Mesh& m, std::vector<std::vector<int>>& lists) {
  std::vector<std::pair<std::uint64_t, int>> keyed;
  for (auto& l : lists) {
    keyed.clear();
    for (const int p : l) keyed.push_back({m.curve_key(p), p});
    std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first
                                : a.second % mesh::kFamilySize < b.second % mesh::kFamilySize;
    });
    l.clear();
    for (const auto& [k, p] : keyed)
      if (l.empty() || l.back() != p) l.push_back(p);
  }
}

// Whether group g of `level` reads the coarser level around its parent.
bool reads_coarse(const mesh::NeighbourTable& table, int level, int g, bool every_parent) {
  if (level == 0) return false;
  return every_parent || table.reads_coarse(g);
}

// Calls f(q) for the parent of group g and the parent's 26 neighbours (the coarse patches
// interpolation reads).
template <class F>
void around_parent(const mesh::Mesh& m, int g, F&& f) {
  const mesh::NeighbourTable& table = m.neighbours();
  const int parent = m.patch(g).parent;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int q = table.neighbour(parent, dx, dy, dz);
        if (q == mesh::kBlockCoarse)
          throw Error(ErrorKind::kInternal,
                      "exchange plan: a coarse patch lacks a neighbour (proper nesting)");
        if (q >= 0) f(q);
      }
}

}  // namespace

ExchangePlan plan_receives(const mesh::Mesh& m, const Partition& part, int rank, int level,
                           bool every_parent) {
  ExchangePlan plan;
  plan.same_level.resize(part.ranks());
  plan.coarse.resize(part.ranks());
  const mesh::NeighbourTable& table = m.neighbours();
  auto want = [&](std::vector<std::vector<int>>& lists, int patch) {
    const int from = part.owner(patch);
    if (from != rank) lists[from].push_back(patch);
  };
  for (const int g : m.groups(level)) {
    if (!part.owns(rank, g)) continue;
    const mesh::NeighbourTable::Row row = table.row(g);
    for (int b = 0; b < mesh::kGroupBlocks; ++b)
      if (row[b] >= 0) want(plan.same_level, row[b]);
    if (reads_coarse(table, level, g, every_parent))
      around_parent(m, g, [&](int q) { want(plan.coarse, q); });
  }
  canonical_lists(m, plan.same_level);
  canonical_lists(m, plan.coarse);
  return plan;
}

ExchangePlan plan_sends(const mesh::Mesh& m, const Partition& part, int rank, int level,
                        bool every_parent) {
  ExchangePlan plan;
  plan.same_level.resize(part.ranks());
  plan.coarse.resize(part.ranks());
  const mesh::NeighbourTable& table = m.neighbours();
  // The other ranks' groups that read this rank's patches: a group whose ghost zones read
  // one of them lies within a patch of it, so its family is in the neighbour table row of
  // that patch's family (same level); one that reads the coarser level around its parent
  // is the child family of a patch within a patch of one of this rank's coarser patches.
  std::vector<int> readers;
  for (const int g : m.groups(level)) {
    if (!part.owns(rank, g)) continue;
    const mesh::NeighbourTable::Row row = table.row(g);
    for (int b = 0; b < mesh::kGroupBlocks; ++b)
      if (row[b] >= 0 && !part.owns(rank, row[b]))
        readers.push_back(row[b] - row[b] % mesh::kFamilySize);
  }
  if (level > 0)
    for (const int g : m.groups(level - 1)) {
      if (!part.owns(rank, g)) continue;
      for (int c = 0; c < mesh::kFamilySize; ++c)
        for (int n = 0; n < 27; ++n) {
          const int q = table.neighbour(g + c, n % 3 - 1, (n / 3) % 3 - 1, n / 9 - 1);
          if (q < 0 || m.patch(q).is_leaf()) continue;
          const int child = m.patch(q).first_child;
          if (!part.owns(rank, child)) readers.push_back(child);
        }
    }
  std::sort(readers.begin(), readers.end());
  readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
  // What each of them reads of this rank's patches (plan_receives' lists from this rank).
  for (const int g : readers) {
    const int to = part.owner(g);
    const mesh::NeighbourTable::Row row = table.row(g);
    for (int b = 0; b < mesh::kGroupBlocks; ++b)
      if (row[b] >= 0 && part.owns(rank, row[b])) plan.same_level[to].push_back(row[b]);
    if (reads_coarse(table, level, g, every_parent))
      around_parent(m, g, [&](int q) {
        if (part.owns(rank, q)) plan.coarse[to].push_back(q);
      });
  }
  canonical_lists(m, plan.same_level);
  canonical_lists(m, plan.coarse);
  return plan;
}

bool reads_only_own(const mesh::Mesh& m, const Partition& part, int rank, int group) {
  const mesh::NeighbourTable& table = m.neighbours();
  const mesh::NeighbourTable::Row row = table.row(group);
  for (int b = 0; b < mesh::kGroupBlocks; ++b)
    if (row[b] >= 0 && part.owner(row[b]) != rank) return false;
  if (!table.reads_coarse(group) || m.patch(group).level == 0) return true;
  const int parent = m.patch(group).parent;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int q = table.neighbour(parent, dx, dy, dz);
        if (q >= 0 && part.owner(q) != rank) return false;
      }
  return true;
}

std::vector<ExchangePlan> plan_level(const mesh::Mesh& m, const Partition& part, int level,
                                     bool every_parent) {
  std::vector<ExchangePlan> plans;
  for (int r = 0; r < part.ranks(); ++r)
    plans.push_back(plan_receives(m, part, r, level, every_parent));
  return plans;
}

}  // namespace tessera::parallel
