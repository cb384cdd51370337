// A regrid's change of the hierarchy, computed from the changes alone: the hierarchy that
// settle_hierarchy plans, as its difference from the mesh's own, without listing the
// whole mesh (refinement.hpp).
//
// settle_hierarchy refines, at each level l below max_level from the finest down,
//   S_l = M_l ∪ N(S_{l+1}),
// M_l the marked patches of level l and N(X) the parents of the 26 neighbours of X's
// patches (proper nesting). The mesh's refined patches R_l are properly nested already,
// N(R_{l+1}) ⊆ R_l (Forest::check_invariants), so N(S_{l+1}) ⊆ R_l ∪ N(S_{l+1} \ R_{l+1}),
// and
//   added_l   = S_l \ R_l = (M_l \ R_l) ∪ (N(added_{l+1}) \ R_l),
//   removed_l = R_l \ S_l = (R_l \ M_l) \ N(S_{l+1}):
// the first from the marked leaves and the families added one level finer, the second
// from the refined patches nobody marked, each tested against the 4^3 patches of level
// l + 1 whose neighbours it parents (S_{l+1} = R_{l+1} - removed_{l+1} + added_{l+1}).
//
// On several ranks a refined patch of rank r's families is marked by r or, through the
// flag buffer, by a rank whose families touch it. Each rank hands over, in one gather,
// its marked leaves, the refined patches of its own families that it did not mark (those
// a marked patch of the next level, its own, keeps anyway left out), and its marks of
// other ranks' refined patches: lists that follow the changes and the boundaries between
// the ranks' pieces, not the mesh. A patch is removable when its owner listed it and no
// rank marked it.
#include <algorithm>
#include <iterator>

#include "tessera/core/error.hpp"
#include "tessera/evolve/refinement.hpp"

namespace tessera::evolve {

namespace {

using mesh::PatchCoord;

bool contains(const std::vector<std::uint64_t>& sorted, std::uint64_t k) {
  return std::binary_search(sorted.begin(), sorted.end(), k);
}

bool refined_now(const mesh::Mesh& m, int level, PatchCoord pc) {
  const int p = m.find_patch(level, pc);
  return p != mesh::kNoPatch && !m.patch(p).is_leaf();
}

// Whether a patch of level + 1 for which `in` holds has a neighbour (of its 26, or
// itself) whose parent is patch `pc` of `level`: the patches of level + 1 within one
// patch of pc's children, [2 pc - 1, 2 pc + 2] per dimension, wrapped where periodic.
template <class In>
bool parents_a_neighbour(const mesh::Mesh& m, int level, PatchCoord pc, const In& in) {
  for (int z = 2 * pc[2] - 1; z <= 2 * pc[2] + 2; ++z)
    for (int y = 2 * pc[1] - 1; y <= 2 * pc[1] + 2; ++y)
      for (int x = 2 * pc[0] - 1; x <= 2 * pc[0] + 2; ++x) {
        PatchCoord s = {x, y, z};
        if (m.wrap(level + 1, s) && in(mark_key(s))) return true;
      }
  return false;
}

// The lists one rank hands over for each level: [3 level] marked leaves, [3 level + 1]
// refined patches of its own families it left unmarked, [3 level + 2] its marks of other
// ranks' refined patches.
constexpr int kLeaves = 0, kUnmarked = 1, kForeign = 2;

}  // namespace

mesh::HierarchyChange settle_change(const mesh::Mesh& m, int max_level, const Marks& own,
                                    const parallel::Partition* part, parallel::Comm* comm) {
  const bool ranks = part && comm && comm->size() > 1;
  // Families beyond max_level (a run restarted with fewer levels): every refined patch
  // of those levels goes, which the whole hierarchy's difference gives.
  if (m.num_levels() > max_level + 1)
    return m.forest().change_to(settle_hierarchy(m, max_level, own, ranks ? comm : nullptr));
  const int rank = ranks ? comm->rank() : 0;
  static const std::vector<std::uint64_t> none;
  auto marks = [&](int level) -> const std::vector<std::uint64_t>& {
    return level < static_cast<int>(own.size()) ? own[level] : none;
  };
  Marks lists(3 * static_cast<std::size_t>(max_level));
  for (int level = 0; level < max_level && level < m.num_levels(); ++level) {
    const auto& mine = marks(level);
    for (const std::uint64_t k : mine) {
      const int p = m.find_patch(level, mark_coord(k));
      if (p == mesh::kNoPatch)
        throw Error(ErrorKind::kInternal, "refinement: a mark names a patch that does not exist");
      if (m.patch(p).is_leaf())
        lists[3 * level + kLeaves].push_back(k);
      else if (ranks && !part->owns(rank, p))
        lists[3 * level + kForeign].push_back(k);
    }
    const auto& finer = marks(level + 1);
    for (const int g : m.groups(level)) {
      if (ranks && !part->owns(rank, g)) continue;
      for (int c = 0; c < mesh::kFamilySize; ++c) {
        if (m.patch(g + c).is_leaf()) continue;
        const PatchCoord pc = m.patch(g + c).coord();
        const std::uint64_t k = mark_key(pc);
        if (contains(mine, k)) continue;
        if (parents_a_neighbour(m, level, pc, [&](std::uint64_t s) { return contains(finer, s); }))
          continue;
        lists[3 * level + kUnmarked].push_back(k);
      }
    }
  }
  if (ranks) gather_marks(lists, *comm);
  for (auto& list : lists) sort_marks(list);
  // From the finest level down: the added patches of level + 1 ask for their neighbours'
  // parents; a removable patch stays when a patch of level + 1 that stays refined needs it.
  Marks added(max_level), removed(max_level);
  for (int level = max_level - 1; level >= 0; --level) {
    std::vector<std::uint64_t> candidates = lists[3 * level + kLeaves];
    if (level + 1 < max_level)
      for (const std::uint64_t k : added[level + 1]) nesting_parents(m, level + 1, k, candidates);
    sort_marks(candidates);
    for (const std::uint64_t k : candidates)
      if (!refined_now(m, level, mark_coord(k))) added[level].push_back(k);
    std::vector<std::uint64_t> unmarked;
    std::set_difference(lists[3 * level + kUnmarked].begin(), lists[3 * level + kUnmarked].end(),
                        lists[3 * level + kForeign].begin(), lists[3 * level + kForeign].end(),
                        std::back_inserter(unmarked));
    auto stays_refined = [&](std::uint64_t s) {
      if (contains(added[level + 1], s)) return true;
      return refined_now(m, level + 1, mark_coord(s)) && !contains(removed[level + 1], s);
    };
    for (const std::uint64_t k : unmarked)
      if (level + 1 >= max_level || !parents_a_neighbour(m, level, mark_coord(k), stays_refined))
        removed[level].push_back(k);
  }
  mesh::HierarchyChange change;
  change.added.resize(max_level);
  change.removed.resize(max_level);
  for (int level = 0; level < max_level; ++level) {
    for (const std::uint64_t k : added[level]) change.added[level].push_back(mark_coord(k));
    for (const std::uint64_t k : removed[level]) change.removed[level].push_back(mark_coord(k));
  }
  while (!change.added.empty() && change.added.back().empty()) change.added.pop_back();
  return change;
}

mesh::HierarchyChange plan_change(const mesh::Mesh& m, const RefinementParams& rp,
                                  const physics::Model& model, const Problem& problem, double time,
                                  const parallel::Partition* part, parallel::Comm* comm,
                                  const std::vector<std::vector<std::uint32_t>>* given) {
  return settle_change(m, rp.max_level,
                       mark_patches(m, rp, model, problem, time, part, comm, given), part, comm);
}

}  // namespace tessera::evolve
