#include "tessera/mesh/forest.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_set>
#include <utility>

#include "forest_internal.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"

namespace tessera::mesh {

using detail::coord_text;
using detail::family_key;
using detail::morton_key;
using detail::opposite;

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
