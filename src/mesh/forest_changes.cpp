// Forest's regrid (mesh/forest.hpp): the change to a hierarchy, its application in place
// (families removed, placed and linked, holes filled by moving the last families) and the
// canonical merge of each level's new families. Construction and lookups: forest.cpp.
#include <algorithm>
#include <functional>
#include <string>
#include <utility>

#include "forest_internal.hpp"
#include "tessera/core/error.hpp"
#include "tessera/mesh/forest.hpp"

namespace tessera::mesh {

using detail::coord_text;
using detail::family_key;
using detail::opposite;

// Removes the family from the octree: neighbours and the parent forget it, the lookup
// loses it, and its slots are marked free (level -1).
void Forest::unlink_family(int first_patch) {
  for (int c = 0; c < kFamilySize; ++c) {
    const PatchMeta m = patch(first_patch + c);
    if (!m.is_leaf())
      throw Error(ErrorKind::kInternal,
                  "regrid removes " + coord_text(m.level, m.coord()) + " but keeps its children");
  }
  int* links = links_of(first_patch);
  for (int n = 0; n < 27; ++n) {
    const int q = links[n];
    if (q == kNoPatch || q == first_patch) continue;
    links_of(q)[opposite(n)] = kNoPatch;
    touch(q);
  }
  const RefinedFamily family = family_of(first_patch);
  const PatchCoord& base = family.first;
  lookup_.erase(key(family.level, {base[0] / 2, base[1] / 2, base[2] / 2}));
  if (family.parent != kNoPatch) set_first_child(family.parent, kNoPatch);
  family_of(first_patch) = RefinedFamily{};  // level -1: free
  std::fill_n(links, 27, kNoPatch);
}

// Moves the family at `from` into the free position `to`: its metadata and every link
// that points to it (the store moves the data: Forest::apply_changes). Not its entry in
// its level's list of groups: apply_changes, its only caller, fixes that.
void Forest::move_family(int from, int to) {
  family_of(to) = family_of(from);
  std::copy_n(child_.begin() + from, kFamilySize, child_.begin() + to);
  int* links = links_of(to);
  std::copy_n(links_of(from), 27, links);
  touch(to);
  for (int n = 0; n < 27; ++n) {
    const int q = links[n];
    if (q == from) {  // the family itself (n = 13, or a periodic image of one family)
      links[n] = to;
    } else if (q != kNoPatch) {
      links_of(q)[opposite(n)] = to;
      touch(q);
    }
  }
  const RefinedFamily family = family_of(to);
  const PatchCoord& base = family.first;
  lookup_[key(family.level, {base[0] / 2, base[1] / 2, base[2] / 2})] = to;
  for (int c = 0; c < kFamilySize; ++c)
    if (child_[std::size_t(to + c)] != kNoPatch)
      family_of(child_[std::size_t(to + c)]).parent = to + c;
  if (family.parent != kNoPatch) set_first_child(family.parent, to);
  family_of(from) = RefinedFamily{};
  std::fill_n(child_.begin() + from, kFamilySize, kNoPatch);
  std::fill_n(links_of(from), 27, kNoPatch);
}

std::size_t Forest::group_position(int level, int first, std::size_t count) const {
  const auto& groups = groups_[level];
  const std::uint64_t k = family_key(patch(first));
  const auto end = groups.begin() + static_cast<std::ptrdiff_t>(std::min(count, groups.size()));
  const auto it = std::lower_bound(
      groups.begin(), end, k, [&](int g, std::uint64_t key) { return family_key(patch(g)) < key; });
  return static_cast<std::size_t>(it - groups.begin());
}

void Forest::merge_groups(int level, std::size_t kept) {
  auto& groups = groups_[level];
  kept = std::min(kept, groups.size());
  if (kept == groups.size()) return;
  // The new families sorted by their keys, then merged into the kept ones from the back:
  // each finds its place by a binary search (a few keys computed), and the kept families
  // after it move once (a copy of the level's list at most).
  std::vector<std::pair<std::uint64_t, int>> added;
  added.reserve(groups.size() - kept);
  for (std::size_t i = kept; i < groups.size(); ++i)
    added.push_back({family_key(patch(groups[i])), groups[i]});
  std::sort(added.begin(), added.end());
  std::size_t rest = kept, out = groups.size();
  for (std::size_t j = added.size(); j-- > 0;) {
    const auto first = groups.begin();
    const auto pos =
        std::upper_bound(first, first + static_cast<std::ptrdiff_t>(rest), added[j].first,
                         [&](std::uint64_t key, int g) { return key < family_key(patch(g)); });
    const auto moved = static_cast<std::size_t>(first + static_cast<std::ptrdiff_t>(rest) - pos);
    std::move_backward(pos, first + static_cast<std::ptrdiff_t>(rest),
                       first + static_cast<std::ptrdiff_t>(out));
    out -= moved;
    rest -= moved;
    groups[--out] = added[j].second;
  }
}

HierarchyChange Forest::change_to(const Hierarchy& refined) const {
  if (static_cast<int>(refined.size()) + 1 > kMaxLevels)
    throw Error(ErrorKind::kInput,
                "at most " + std::to_string(kMaxLevels - 1) + " refinement levels are supported");
  HierarchyChange change;
  change.added.resize(refined.size());
  // The listed parents that are refined now, marked: their families stay. Any other listed
  // parent is new (a leaf now, or a patch that a coarser new family brings).
  std::vector<char> wanted(std::size_t(num_patches()), 0);
  for (std::size_t l = 0; l < refined.size(); ++l)
    for (const PatchCoord& pc : refined[l]) {
      const int p = lookup(int(l), pc);
      if (p != kNoPatch && !patch(p).is_leaf())
        wanted[p] = 1;
      else
        change.added[l].push_back(pc);
    }
  change.removed.resize(std::max(0, num_levels() - 1));
  for (int level = num_levels() - 1; level >= 1; --level)
    for (const int g : groups_[level]) {
      const int parent = patch(g).parent;
      if (!wanted[parent]) change.removed[level - 1].push_back(patch(parent).coord());
    }
  return change;
}

std::vector<std::size_t> Forest::families_after(const HierarchyChange& change) const {
  std::vector<std::size_t> n(std::max<std::size_t>(change.added.size(), num_levels() - 1), 0);
  for (int level = 1; level < num_levels(); ++level) n[level - 1] = groups_[level].size();
  for (std::size_t l = 0; l < change.added.size(); ++l) n[l] += change.added[l].size();
  for (std::size_t l = 0; l < change.removed.size() && l < n.size(); ++l)
    n[l] -= std::min(n[l], change.removed[l].size());
  while (!n.empty() && n.back() == 0) n.pop_back();
  return n;
}

ForestChange Forest::apply_changes(const HierarchyChange& hc) {
  if (static_cast<int>(hc.added.size()) + 1 > kMaxLevels)
    throw Error(ErrorKind::kInput,
                "at most " + std::to_string(kMaxLevels - 1) + " refinement levels are supported");
  ForestChange fc;
  MeshChange& change = fc.mesh;
  fc.patches_before = std::size_t(num_patches());
  std::vector<int> free_slots;
  // The families kept at each level stay in their (canonical) order at its front.
  std::vector<std::size_t> kept_groups(groups_.size(), 0);
  for (int level = 0; level < num_levels(); ++level) kept_groups[level] = groups_[level].size();
  // Removal, finest level first: children go before their parents.
  for (int level = num_levels() - 1; level >= 1; --level) {
    if (level - 1 >= static_cast<int>(hc.removed.size()) || hc.removed[level - 1].empty()) continue;
    for (const PatchCoord& pc : hc.removed[level - 1]) {
      const int p = lookup(level - 1, pc);
      if (p == kNoPatch || patch(p).is_leaf())
        throw Error(ErrorKind::kInternal,
                    "removing the children of " + coord_text(level - 1, pc) + ", which has none");
      const int g = patch(p).first_child;
      fc.removed.push_back(g);
      unlink_family(g);
      free_slots.push_back(g);
      ++change.removed_families;
    }
    auto& groups = groups_[level];
    groups.erase(
        std::remove_if(groups.begin(), groups.end(), [&](int g) { return patch(g).level < 0; }),
        groups.end());
    kept_groups[level] = groups.size();
  }
  while (num_levels() > 1 && groups_.back().empty()) groups_.pop_back();
  fc.levels_kept = num_levels();
  // Addition, coarsest level first: a new family's parent may be new itself. Free
  // positions are reused, lowest first, then the forest grows.
  std::sort(free_slots.begin(), free_slots.end(), std::greater<>());
  change.added.resize(hc.added.size() + 1);
  for (std::size_t l = 0; l < hc.added.size(); ++l) {
    const int level = static_cast<int>(l) + 1;
    for (const PatchCoord& pc : hc.added[l]) {
      const int parent = lookup(level - 1, pc);
      if (parent == kNoPatch)
        throw Error(ErrorKind::kInternal,
                    "refining " + coord_text(level - 1, pc) + ", which does not exist");
      if (!patch(parent).is_leaf()) continue;  // its family exists (listed twice)
      if (level >= num_levels()) groups_.resize(level + 1);
      int slot = num_patches();
      if (!free_slots.empty()) slot = free_slots.back(), free_slots.pop_back();
      place_family(slot, level, {2 * pc[0], 2 * pc[1], 2 * pc[2]}, parent);
      link_family(slot);
      groups_[level].push_back(slot);
      change.added[level].push_back(slot);
      ++change.added_families;
    }
  }
  kept_groups.resize(groups_.size(), 0);
  fc.patches_grown = std::max(fc.patches_before, std::size_t(num_patches()));
  // Holes left by a shrinking forest take its last families. New families took
  // the lowest holes, so the families moved here are never new ones: each is found among
  // its level's kept families (in canonical order) by its key.
  std::sort(free_slots.begin(), free_slots.end());
  for (const int hole : free_slots) {
    int last = num_patches() - kFamilySize;
    while (last > hole && patch(last).level < 0) last -= kFamilySize;
    if (last > hole) {
      const int level = patch(last).level;
      const std::size_t i = group_position(level, last, kept_groups[level]);
      if (i >= kept_groups[level] || groups_[level][i] != last)
        throw Error(ErrorKind::kInternal, "a moved family is missing from its level's list");
      move_family(last, hole);
      groups_[level][i] = hole;
      fc.moves.push_back({last, hole});
      ++change.moved_families;
    }
    while (!families_.empty() && families_.back().level < 0) {
      families_.pop_back();
      child_.resize(child_.size() - kFamilySize);
    }
  }
  links_.resize(families_.size() * 27);
  fc.patches_after = std::size_t(num_patches());
  for (int level = 1; level < num_levels(); ++level) merge_groups(level, kept_groups[level]);
  change.added.resize(groups_.size());
  // Only the flags of families whose links or positions changed (the regrid's cost follows
  // the changes, not the mesh).
  std::sort(touched_.begin(), touched_.end());
  touched_.erase(std::unique(touched_.begin(), touched_.end()), touched_.end());
  flags_.resize(std::size_t(num_patches()) / kFamilySize, 0);
  for (const int first : touched_)
    if (first < num_patches() && patch(first).level >= 0)
      flags_[first / kFamilySize] = compute_flags(first);
  touched_.clear();
  return fc;
}

}  // namespace tessera::mesh
