// Which rank owns each patch group (family), and what each rank must receive from the
// others before it can work on its own groups (docs/architecture.md, "Ranks").
//
// Every rank holds the whole octree's structure (mesh::Mesh's metadata, a few bytes per
// patch, as Parthenon and AthenaK replicate theirs), so every rank computes the same
// partition and the same plans without asking anyone. Levels subcycle, so each level is cut
// on its own (GAMER, AMReX): rank r owns a contiguous piece of the level's families along
// the space-filling curve (the canonical order, mesh.hpp), the pieces as equal as the
// families' costs allow.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/mesh/mesh.hpp"

namespace tessera::parallel {

class Partition {
 public:
  // One rank owns everything.
  Partition() = default;
  // Cuts each level of `m` into `ranks` contiguous pieces of its canonical order, as equal
  // in cost as whole groups allow: a patch group is the unit of work (one solver call),
  // and one whose ghost zones read the coarser level (the neighbour table's coarse blocks:
  // interpolation in space and time) costs `coarse_fine_cost` times one that does not.
  // Piece r begins at the last group whose preceding groups cost at most r / ranks of the
  // level's total: with equal costs, floor or ceil of (groups of the level) / ranks each.
  static Partition along_curve(const mesh::Mesh& m, int ranks, double coarse_fine_cost = 1);
  // The partition of `m` (the mesh after a regrid) that keeps `previous`'s cuts: a cut is a
  // position along the level's curve (mesh::Mesh::curve_key), so a family that stays keeps
  // its rank, a new one joins the piece whose stretch of the curve holds it, and the
  // pieces stay contiguous. A level whose most loaded rank would hold more than
  // (1 + tolerance) times the groups of along_curve's most loaded rank is cut again (as
  // along_curve cuts it; so is a level `previous` did not have): GAMER-2 rebalances
  // likewise only past an imbalance threshold, since every cut moves data.
  // Loads are costs (coarse_fine_cost as along_curve's).
  static Partition following(const mesh::Mesh& m, const Partition& previous, double tolerance,
                             double coarse_fine_cost = 1);

  int ranks() const { return ranks_; }
  // Owner of the family whose first patch is `first_patch` (or of any patch of it).
  int owner(int patch) const { return ranks_ == 1 ? 0 : owner_[patch / mesh::kFamilySize]; }
  bool owns(int rank, int patch) const { return owner(patch) == rank; }
  // Families per rank and level, [level][rank] (empty for the one-rank default).
  const std::vector<std::vector<int>>& counts() const { return counts_; }
  // Their cost, [level][rank] (see along_curve).
  const std::vector<std::vector<double>>& costs() const { return costs_; }
  // The cost of group g of `m` for a partition (along_curve).
  static double group_cost(const mesh::Mesh& m, int g, double coarse_fine_cost);
  // The levels that following() cut again for their balance (empty for along_curve).
  const std::vector<int>& recut_levels() const { return recut_; }

 private:
  // Every level sized, no owner yet.
  Partition(const mesh::Mesh& m, int ranks, double coarse_fine_cost);
  // Each group's cost (group_cost), in the level's canonical order: computed once per
  // level and partition, and passed to the cut and the assignment.
  std::vector<double> level_costs(const mesh::Mesh& m, int level) const;
  // along_curve's cut of a level: the first group of each rank's piece (ranks + 1 entries,
  // the last the group count).
  std::vector<std::size_t> best_cut(const std::vector<double>& cost) const;
  void cut_level(const mesh::Mesh& m, int level, const std::vector<double>& cost);
  // Owners, counts and costs of the level's pieces from its starts: each piece's first
  // group found by a binary search of the curve keys (no key computed per group).
  void assign_level(const mesh::Mesh& m, int level, const std::vector<double>& cost);

  int ranks_ = 1;
  double coarse_fine_cost_ = 1;
  std::vector<int> owner_;  // [pool slot / 8]
  std::vector<std::vector<int>> counts_;
  std::vector<std::vector<double>> costs_;
  // [level][r]: the curve key where rank r's piece begins; its piece holds the keys up to
  // the next rank's start (the last rank's, to the end). Empty pieces repeat a start.
  std::vector<std::vector<std::uint64_t>> starts_;
  std::vector<int> recut_;
};

// What rank `rank` receives before it steps `level`, from each peer: the same-level
// patches its groups' ghost zones read (the neighbour table's blocks owned elsewhere:
// buffer patches) and, where a group's ghost zones come from the coarser level, the
// coarser patches that interpolation reads (the parent and its 26 neighbours: the
// prepare stage's coarse box reaches at most 4 coarse cells beyond the parent).
// Patches appear once per peer, in canonical order (the order both sides pack them).
// `every_parent`: the parent's neighbourhood of every group of a refined level, whether
// its ghost zones touch the coarser level or not (the refined levels' Poisson solves take
// their whole ghost layer from the coarser level's potential).
struct ExchangePlan {
  std::vector<std::vector<int>> same_level;  // [peer]: patches of `level`
  std::vector<std::vector<int>> coarse;      // [peer]: patches of `level - 1`
};
ExchangePlan plan_receives(const mesh::Mesh& m, const Partition& part, int rank, int level,
                           bool every_parent = false);
// What `rank` sends before `level` is stepped, to each peer: its patches that the peer's
// plan_receives lists from it, in the same order, computed from the rank's own groups and
// the others' groups next to them (work that follows the rank's piece and its boundary,
// not the mesh or the number of ranks).
ExchangePlan plan_sends(const mesh::Mesh& m, const Partition& part, int rank, int level,
                        bool every_parent = false);

// Whether the ghost zones of `group` (of rank's piece) read only rank's own patches: every
// same-level block of its neighbour table, and, when a block is coarse, the coarser level
// around its parent (what plan_receives would ask of the others). Such a group can be
// prepared and stepped while the level's exchange is still in flight.
bool reads_only_own(const mesh::Mesh& m, const Partition& part, int rank, int group);

// Every rank's plan for `level`, [rank]: what rank r sends to q is plans[q]'s list from r
// (a pass over the level per rank: for tests and tools; a run uses plan_sends).
std::vector<ExchangePlan> plan_level(const mesh::Mesh& m, const Partition& part, int level,
                                     bool every_parent = false);

}  // namespace tessera::parallel
