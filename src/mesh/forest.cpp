#include "tessera/mesh/forest.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <string>
#include <unordered_set>
#include <utility>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"

namespace tessera::mesh {

namespace {

// Spreads the low 21 bits of v so that bit b lands on bit 3b.
std::uint64_t spread_bits(std::uint64_t v) {
  v &= 0x1fffff;
  v = (v | v << 32) & 0x1f00000000ffffULL;
  v = (v | v << 16) & 0x1f0000ff0000ffULL;
  v = (v | v << 8) & 0x100f00f00f00f00fULL;
  v = (v | v << 4) & 0x10c30c30c30c30c3ULL;
  v = (v | v << 2) & 0x1249249249249249ULL;
  return v;
}

// Interleaves the bits of (x, y, z): groups close on this curve are close in space,
// which keeps neighbour data in cache and gives the later MPI decomposition its order
// (space-filling curve, as in Zabelok, Arslanbekov & Kolobov 2015).
std::uint64_t morton_key(std::uint32_t x, std::uint32_t y, std::uint32_t z) {
  return spread_bits(x) | spread_bits(y) << 1 | spread_bits(z) << 2;
}

// Canonical position of a family: the Morton key of its coordinate (its first patch's
// coordinate halved; for a refined level that is the parent's coordinate). A patch of
// the family adds its child index c = x + 2y + 4z, the next three Morton bits.
std::uint64_t family_key(const PatchMeta& first) {
  const PatchCoord pc = first.coord();
  return morton_key(pc[0] / 2, pc[1] / 2, pc[2] / 2);
}

constexpr int opposite(int n) {
  return 26 - n;
}

std::string coord_text(int level, PatchCoord pc) {
  return "level " + std::to_string(level) + " patch (" + std::to_string(pc[0]) + ", " +
         std::to_string(pc[1]) + ", " + std::to_string(pc[2]) + ")";
}

}  // namespace

Forest::Forest(const Geometry& geometry, const Hierarchy& refined) : geometry_(geometry) {
  std::array<int, 3> ng{};
  for (int d = 0; d < 3; ++d) {
    if (geometry.root_cells[d] <= 0 || geometry.root_cells[d] % (2 * kPatchSize) != 0)
      throw Error(ErrorKind::kInput, "mesh.nx must be positive multiples of 16");
    ng[d] = geometry.root_cells[d] / (2 * kPatchSize);
  }
  if (static_cast<int>(refined.size()) + 1 > kMaxLevels)
    throw Error(ErrorKind::kInput,
                "at most " + std::to_string(kMaxLevels - 1) + " refinement levels are supported");
  // Patch indices are ints: the root may take at most half of their range, which leaves
  // the other half to the refined levels.
  const std::size_t families = std::size_t(ng[0]) * std::size_t(ng[1]) * std::size_t(ng[2]);
  if (families * kFamilySize > std::size_t(std::numeric_limits<int>::max()) / 2)
    throw Error(ErrorKind::kInput,
                "mesh.nx: the root grid's " + std::to_string(families * kFamilySize) +
                    " patches of 8^3 cells exceed the 2^30 that 32-bit patch indices allow");
  std::vector<PatchCoord> group_coords;
  group_coords.reserve(families);
  for (int z = 0; z < ng[2]; ++z)
    for (int y = 0; y < ng[1]; ++y)
      for (int x = 0; x < ng[0]; ++x) group_coords.push_back({x, y, z});
  std::sort(group_coords.begin(), group_coords.end(), [](const auto& a, const auto& b) {
    return morton_key(a[0], a[1], a[2]) < morton_key(b[0], b[1], b[2]);
  });
  // The root level: its families' order and where each family is, nothing per patch but
  // the first child.
  root_families_ = ng;
  root_coords_ = std::move(group_coords);
  root_index_.assign(root_coords_.size(), 0);
  for (std::size_t f = 0; f < root_coords_.size(); ++f) {
    const PatchCoord& gc = root_coords_[f];
    root_index_[std::size_t(gc[0]) + std::size_t(ng[0]) * (gc[1] + std::size_t(ng[1]) * gc[2])] =
        static_cast<int>(f);
  }
  root_patches_ = static_cast<int>(root_coords_.size()) * kFamilySize;
  child_.assign(std::size_t(root_patches_), kNoPatch);
  groups_.resize(1);
  groups_[0].reserve(root_coords_.size());
  for (int g = 0; g < root_patches_; g += kFamilySize) groups_[0].push_back(g);
  // Families of a level in the Morton order of their coordinates: the order of their
  // parents, so the root's Morton order carries through every level.
  for (std::size_t l = 0; l < refined.size(); ++l) {
    const int level = static_cast<int>(l) + 1;
    if (level - 1 >= num_levels() && !refined[l].empty())
      throw Error(ErrorKind::kInternal, "refining " + coord_text(level - 1, refined[l].front()) +
                                            ", which does not exist (level " +
                                            std::to_string(level - 1) + " is empty)");
    std::vector<std::pair<std::uint64_t, PatchCoord>> families;
    for (const auto& pc : refined[l]) {
      if (find_patch(level - 1, pc) == kNoPatch)
        throw Error(ErrorKind::kInternal,
                    "refining " + coord_text(level - 1, pc) + ", which does not exist");
      families.push_back({morton_key(pc[0], pc[1], pc[2]), pc});
    }
    std::sort(families.begin(), families.end());
    families.erase(std::unique(families.begin(), families.end()), families.end());
    if (families.empty()) continue;
    groups_.emplace_back();
    for (const auto& [k, pc] : families) {
      groups_[level].push_back(num_patches());
      place_family(num_patches(), level, {2 * pc[0], 2 * pc[1], 2 * pc[2]},
                   find_patch(level - 1, pc));
    }
  }
  for (int p = root_patches_; p < num_patches(); p += kFamilySize) link_family(p);
  flags_.resize(std::size_t(num_patches()) / kFamilySize);
  for (int p = 0; p < num_patches(); p += kFamilySize) flags_[p / kFamilySize] = compute_flags(p);
  touched_.clear();
}

void Forest::place_family(int first_patch, int level, PatchCoord first, int parent) {
  if (first_patch == num_patches()) {
    child_.resize(child_.size() + kFamilySize, kNoPatch);
    families_.emplace_back();
    links_.resize(links_.size() + 27, kNoPatch);
  }
  if (parent != kNoPatch) set_first_child(parent, first_patch);
  family_of(first_patch) = RefinedFamily{first, parent, level};
  std::fill_n(child_.begin() + first_patch, kFamilySize, kNoPatch);
  int* links = links_of(first_patch);
  std::fill_n(links, 27, kNoPatch);
  links[13] = first_patch;
  lookup_[key(level, {first[0] / 2, first[1] / 2, first[2] / 2})] = first_patch;
}

// Links the family to its same-level neighbour families, both ways. Neighbours that do
// not exist yet link back when they are placed.
void Forest::link_family(int first_patch) {
  const PatchCoord base = family_of(first_patch).first;  // even: the family's first patch
  const int level = family_of(first_patch).level;
  int* links = links_of(first_patch);
  touch(first_patch);
  for (int n = 0; n < 27; ++n) {
    if (n == 13) continue;
    const int q = find_patch(level, {base[0] + 2 * (n % 3 - 1), base[1] + 2 * ((n / 3) % 3 - 1),
                                     base[2] + 2 * (n / 9 - 1)});
    links[n] = q;
    if (q == kNoPatch) continue;
    links_of(q)[opposite(n)] = first_patch;
    touch(q);
  }
}

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

bool Forest::has_hierarchy(const Hierarchy& refined) const {
  std::size_t levels = refined.size();
  while (levels > 0 && refined[levels - 1].empty()) --levels;
  if (static_cast<int>(levels) + 1 != num_levels()) return false;
  for (std::size_t l = 0; l < levels; ++l) {
    const int level = static_cast<int>(l) + 1;
    std::unordered_set<std::uint64_t> distinct;
    for (const auto& pc : refined[l]) {
      if (find_patch(level, {2 * pc[0], 2 * pc[1], 2 * pc[2]}) == kNoPatch) return false;
      distinct.insert(key(level - 1, pc));
    }
    if (distinct.size() != groups_[level].size()) return false;
  }
  return true;
}

std::uint64_t Forest::curve_key(int p) const {
  return family_key(patch(p - p % kFamilySize));
}

std::vector<int> Forest::canonical_order() const {
  std::vector<int> order;
  order.reserve(std::size_t(num_patches()));
  for (const auto& groups : groups_)
    for (const int g : groups)
      for (int c = 0; c < kFamilySize; ++c) order.push_back(g + c);
  return order;
}

bool Forest::is_canonical() const {
  int next = 0;
  for (const auto& groups : groups_)
    for (const int g : groups) {
      if (g != next) return false;
      next += kFamilySize;
    }
  return true;
}

std::vector<int> Forest::canonicalize() {
  if (is_canonical()) return {};
  // order[new] = old; where[old] = new.
  const std::vector<int> order = canonical_order();
  std::vector<int> where(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) where[order[i]] = static_cast<int>(i);
  auto renumber = [&](int q) { return q == kNoPatch ? kNoPatch : where[q]; };
  // Every patch's first child renumbered; the root comes first in canonical order and stays
  // where it is (order[p] = p there), so only the refined families' records (parents
  // renumbered), links and lookup entries move.
  const auto root = std::size_t(root_patches_);
  std::vector<int> child(child_.size());
  for (std::size_t i = 0; i < order.size(); ++i) child[i] = renumber(child_[std::size_t(order[i])]);
  std::vector<RefinedFamily> families(families_.size());
  std::vector<int> links(links_.size());
  for (std::size_t i = root; i < order.size(); i += kFamilySize) {
    RefinedFamily family = families_[(std::size_t(order[i]) - root) / kFamilySize];
    family.parent = renumber(family.parent);
    families[(i - root) / kFamilySize] = family;
    const PatchCoord& pc = family.first;
    lookup_[key(family.level, {pc[0] / 2, pc[1] / 2, pc[2] / 2})] = static_cast<int>(i);
    for (int n = 0; n < 27; ++n)
      links[(i - root) / kFamilySize * 27 + std::size_t(n)] =
          renumber(family_neighbour(order[i], n));
  }
  child_ = std::move(child);
  families_ = std::move(families);
  links_ = std::move(links);
  for (auto& groups : groups_)
    for (auto& g : groups) g = where[g];
  std::vector<std::uint8_t> flags(flags_.size(), 0);
  for (std::size_t f = 0; f < flags.size(); ++f)
    flags[f] = flags_[std::size_t(order[f * kFamilySize]) / kFamilySize];
  flags_ = std::move(flags);
  return order;
}

std::uint64_t Forest::key(int level, PatchCoord pc) {
  return (std::uint64_t(level) << 60) | (std::uint64_t(pc[2]) << 40) |
         (std::uint64_t(pc[1]) << 20) | std::uint64_t(pc[0]);
}

std::array<int, 3> Forest::level_cells(int level) const {
  std::array<int, 3> n{};
  for (int d = 0; d < 3; ++d) n[d] = geometry_.root_cells[d] << level;
  return n;
}

bool Forest::wrap(int level, PatchCoord& pc) const {
  const auto cells = level_cells(level);
  for (int d = 0; d < 3; ++d) {
    const int np = cells[d] / kPatchSize;
    if (pc[d] < 0 || pc[d] >= np) {
      if (!geometry_.periodic(d)) return false;
      pc[d] = ((pc[d] % np) + np) % np;
    }
  }
  return true;
}

int Forest::lookup(int level, PatchCoord pc) const {
  if (level < 0 || level >= num_levels() || pc[0] < 0 || pc[1] < 0 || pc[2] < 0) return kNoPatch;
  const int child = (pc[0] & 1) + 2 * (pc[1] & 1) + 4 * (pc[2] & 1);
  if (level == 0) {
    const PatchCoord f = {pc[0] / 2, pc[1] / 2, pc[2] / 2};
    for (int d = 0; d < 3; ++d)
      if (f[d] >= root_families_[d]) return kNoPatch;
    return root_index_[std::size_t(f[0]) + std::size_t(root_families_[0]) *
                                               (f[1] + std::size_t(root_families_[1]) * f[2])] *
               kFamilySize +
           child;
  }
  const auto it = lookup_.find(key(level, {pc[0] / 2, pc[1] / 2, pc[2] / 2}));
  if (it == lookup_.end()) return kNoPatch;
  return it->second + child;
}

int Forest::root_neighbour(int family, int n) const {
  PatchCoord f = root_coords_[std::size_t(family)];
  const int offset[3] = {n % 3 - 1, (n / 3) % 3 - 1, n / 9 - 1};
  for (int d = 0; d < 3; ++d) {
    f[d] += offset[d];
    if (f[d] >= 0 && f[d] < root_families_[d]) continue;
    if (!geometry_.periodic(d)) return kNoPatch;
    f[d] = (f[d] + root_families_[d]) % root_families_[d];
  }
  return root_index_[std::size_t(f[0]) + std::size_t(root_families_[0]) *
                                             (f[1] + std::size_t(root_families_[1]) * f[2])] *
         kFamilySize;
}

Forest::FamilyLinks Forest::family_links(int first_patch) const {
  FamilyLinks links;
  if (first_patch < root_patches_) {
    for (int n = 0; n < 27; ++n)
      links[std::size_t(n)] = root_neighbour(first_patch / kFamilySize, n);
  } else {
    const int* stored =
        links_.data() + std::size_t((first_patch - root_patches_) / kFamilySize) * 27;
    std::copy_n(stored, 27, links.begin());
  }
  return links;
}

int Forest::find_patch(int level, PatchCoord pc) const {
  if (level < 0 || level >= num_levels() || !wrap(level, pc)) return kNoPatch;
  return lookup(level, pc);
}

int Forest::block_patch(int first_patch, int bx, int by, int bz) const {
  // The block lies in the family at offset f (in families) around this one, as its child
  // `child`.
  const int b[3] = {bx, by, bz};
  int f[3], child = 0;
  for (int d = 0; d < 3; ++d) {
    f[d] = b[d] < 0 ? -1 : b[d] > 1 ? 1 : 0;
    child |= (b[d] - 2 * f[d]) << d;
  }
  const int q = family_neighbour(first_patch, neighbour_index(f[0], f[1], f[2]));
  return q == kNoPatch ? kNoPatch : q + child;
}

int Forest::neighbour_patch(int p, int n) const {
  const int c = p % kFamilySize;
  return block_patch(p - c, (c & 1) + n % 3 - 1, ((c >> 1) & 1) + (n / 3) % 3 - 1,
                     ((c >> 2) & 1) + n / 9 - 1);
}

Hierarchy Forest::hierarchy() const {
  Hierarchy h(std::max(0, num_levels() - 1));
  for (int level = 1; level < num_levels(); ++level)
    for (int g : groups_[level]) h[level - 1].push_back(patch(patch(g).parent).coord());
  return h;
}

long long Forest::num_leaf_cells() const {
  long long n = 0;
  for (int level = 0; level < num_levels(); ++level) n += num_leaf_cells(level);
  return n;
}

long long Forest::num_leaf_cells(int level) const {
  long long n = 0;
  for (int g : groups_[level])
    for (int c = 0; c < kFamilySize; ++c)
      if (patch(g + c).is_leaf()) n += kPatchCells;
  return n;
}

std::array<double, 3> Forest::cell_center(int p, int i, int j, int k) const {
  const PatchMeta m = patch(p);
  const double h = dx(m.level);
  const int idx[3] = {i, j, k};
  std::array<double, 3> x{};
  for (int d = 0; d < 3; ++d) x[d] = geometry_.xmin[d] + (m.corner[d] + idx[d] + 0.5) * h;
  return x;
}

std::uint8_t Forest::compute_flags(int first_patch) const {
  const PatchMeta base = patch(first_patch);
  const auto cells = level_cells(base.level);
  int sides = 0;
  for (int d = 0; d < 3; ++d) {
    if (geometry_.periodic(d)) continue;
    if (base.corner[d] == 0) sides |= 1 << (2 * d);
    if (base.corner[d] + 2 * kPatchSize == cells[d]) sides |= 1 << (2 * d + 1);
  }
  // A block reads the coarser level where a family position around this one lies in the
  // domain and holds no family of the level.
  const FamilyLinks links = family_links(first_patch);
  bool coarse = false;
  for (int n = 0; n < 27 && !coarse; ++n) {
    if (links[n] != kNoPatch) continue;
    bool beyond = false;
    for (int d = 0, f = n; d < 3; ++d, f /= 3) {
      const int o = f % 3 - 1;
      beyond = beyond || (o < 0 && (sides >> (2 * d)) & 1) || (o > 0 && (sides >> (2 * d + 1)) & 1);
    }
    coarse = !beyond;
  }
  return static_cast<std::uint8_t>(sides | (coarse ? kFamilyReadsCoarse : 0));
}

}  // namespace tessera::mesh
