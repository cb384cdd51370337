#include "tessera/parallel/partition.hpp"

#include <algorithm>

#include "tessera/core/error.hpp"

namespace tessera::parallel {

Partition Partition::along_curve(const mesh::Mesh& m, int ranks, double coarse_fine_cost) {
  if (ranks < 1) throw Error(ErrorKind::kInternal, "a partition needs at least one rank");
  Partition p(m, ranks, coarse_fine_cost);
  for (int level = 0; level < m.num_levels(); ++level) p.cut_level(m, level);
  return p;
}

Partition Partition::following(const mesh::Mesh& m, const Partition& previous, double tolerance,
                               double coarse_fine_cost) {
  Partition p(m, previous.ranks_, coarse_fine_cost);
  for (int level = 0; level < m.num_levels(); ++level) {
    if (level >= static_cast<int>(previous.starts_.size())) {  // a new level
      p.cut_level(m, level);
      continue;
    }
    p.starts_[level] = previous.starts_[level];
    p.assign_level(m, level);
    const double most = *std::max_element(p.costs_[level].begin(), p.costs_[level].end());
    // along_curve's most loaded rank on this level.
    const BestCut best = p.best_cut(m, level);
    double least_most = 0;
    for (int r = 0; r < p.ranks_; ++r) {
      double piece = 0;  // summed as assign_level sums, group by group
      for (std::size_t k = best.first[r]; k < best.first[r + 1]; ++k) piece += best.cost[k];
      least_most = std::max(least_most, piece);
    }
    if (most > (1.0 + tolerance) * least_most) {
      p.cut_level(m, level);
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
  if (coarse_fine_cost == 1) return 1;
  const int* row = m.neighbours().row(g);
  for (int b = 0; b < mesh::kGroupBlocks; ++b)
    if (row[b] == mesh::kBlockCoarse) return coarse_fine_cost;
  return 1;
}

Partition::BestCut Partition::best_cut(const mesh::Mesh& m, int level) const {
  const auto& groups = m.groups(level);  // canonical order
  const std::size_t n = groups.size();
  BestCut cut;
  std::vector<double> before(n + 1, 0);  // cost of the groups before each
  for (std::size_t i = 0; i < n; ++i) {
    cut.cost.push_back(group_cost(m, groups[i], coarse_fine_cost_));
    before[i + 1] = before[i] + cut.cost[i];
  }
  const double total = before[n];
  cut.first.assign(ranks_ + 1, n);
  cut.first[0] = 0;
  std::size_t i = 0;
  for (int r = 1; r < ranks_; ++r) {
    // The last i with before[i] * ranks <= total * r (exact for equal costs: integers).
    while (i < n && before[i + 1] * ranks_ <= total * r) ++i;
    cut.first[r] = i;
  }
  return cut;
}

void Partition::cut_level(const mesh::Mesh& m, int level) {
  const auto& groups = m.groups(level);
  const BestCut cut = best_cut(m, level);
  std::vector<std::uint64_t>& starts = starts_[level];
  starts.assign(ranks_, 0);
  for (int r = 1; r < ranks_; ++r) {
    // An empty piece at the end starts past every key (so does every later one).
    starts[r] =
        cut.first[r] < groups.size() ? m.curve_key(groups[cut.first[r]]) : ~std::uint64_t{0};
  }
  assign_level(m, level);
}

void Partition::assign_level(const mesh::Mesh& m, int level) {
  const std::vector<std::uint64_t>& starts = starts_[level];
  counts_[level].assign(ranks_, 0);
  costs_[level].assign(ranks_, 0.0);
  int r = 0;
  for (const int g : m.groups(level)) {  // keys ascend: the ranks are met in order
    const std::uint64_t key = m.curve_key(g);
    while (r + 1 < ranks_ && starts[r + 1] <= key) ++r;
    owner_[g / mesh::kFamilySize] = r;
    ++counts_[level][r];
    costs_[level][r] += group_cost(m, g, coarse_fine_cost_);
  }
}

namespace {

// Sorts the patches of each peer's list by canonical position and removes repeats.
void canonical_lists(const std::vector<int>& rank_of_canonical,
                     std::vector<std::vector<int>>& lists) {
  for (auto& l : lists) {
    std::sort(l.begin(), l.end(),
              [&](int a, int b) { return rank_of_canonical[a] < rank_of_canonical[b]; });
    l.erase(std::unique(l.begin(), l.end()), l.end());
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
  const auto& groups = m.groups(level);
  for (const int g : groups) {
    if (!part.owns(rank, g)) continue;
    const int* row = table.row(g);
    bool coarse = false;
    for (int b = 0; b < mesh::kGroupBlocks; ++b) {
      if (row[b] >= 0) want(plan.same_level, row[b]);
      coarse |= row[b] == mesh::kBlockCoarse;
    }
    if (level == 0 || !(coarse || every_parent)) continue;
    const int parent = m.patch(g).parent;
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const int q = table.neighbour(parent, dx, dy, dz);
          if (q >= 0) want(plan.coarse, q);
          if (q == mesh::kBlockCoarse)
            throw Error(ErrorKind::kInternal,
                        "exchange plan: a coarse patch lacks a neighbour (proper nesting)");
        }
  }
  // Canonical position of every patch: the order both sides pack and unpack.
  std::vector<int> position(m.num_patches());
  const std::vector<int> order = m.canonical_order();
  for (std::size_t i = 0; i < order.size(); ++i) position[order[i]] = static_cast<int>(i);
  canonical_lists(position, plan.same_level);
  canonical_lists(position, plan.coarse);
  return plan;
}

bool reads_only_own(const mesh::Mesh& m, const Partition& part, int rank, int group) {
  const mesh::NeighbourTable& table = m.neighbours();
  const int* row = table.row(group);
  bool coarse = false;
  for (int b = 0; b < mesh::kGroupBlocks; ++b) {
    if (row[b] >= 0 && part.owner(row[b]) != rank) return false;
    coarse |= row[b] == mesh::kBlockCoarse;
  }
  if (!coarse || m.patch(group).level == 0) return true;
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
