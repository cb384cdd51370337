// The octree's structure (docs/architecture.md, "Mesh and data layout", "Ranks"): families
// of 8 patches, their levels, positions, parent/child links, each family's same-level
// neighbour families, each level's families in canonical order, and the flags the neighbour table
// adds. It holds no field data, so every rank holds the whole forest and computes the same
// partition and exchange plans without asking the others, as Parthenon and AthenaK replicate
// theirs. The root level, a uniform grid, is not stored patch by patch: its patches come first,
// family by family in Morton order, and their corners and same-level links follow from their
// index (about 7 bytes per root patch: the first child and the order's tables). A refined
// patch stores its first child, and its family its coordinate, level, parent, 27 links,
// lookup entry and flags. The data live in a PatchStore (patch_store.hpp); a
// Mesh is the two.
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tessera/mesh/geometry.hpp"
#include "tessera/mesh/neighbour_table.hpp"
#include "tessera/mesh/patch.hpp"

namespace tessera::mesh {

// Index of neighbour offset (dx, dy, dz) in {-1, 0, 1}^3; 13 is the patch itself.
constexpr int neighbour_index(int dx, int dy, int dz) {
  return (dx + 1) + 3 * (dy + 1) + 9 * (dz + 1);
}

using PatchCoord = std::array<int, 3>;  // position in patch units at a level

struct PatchMeta {
  int level = 0;
  std::array<int, 3> corner{};  // first cell, in the index space of `level`
  int parent = kNoPatch;        // level 0 has no parent
  int first_child = kNoPatch;   // first patch of the child family; kNoPatch for a leaf

  bool is_leaf() const { return first_child == kNoPatch; }
  PatchCoord coord() const { return {corner[0] / 8, corner[1] / 8, corner[2] / 8}; }
};

// The families of every level above the root, each given by the coordinate of its
// parent patch (one level coarser); level 0 is always the whole root grid.
using Hierarchy = std::vector<std::vector<PatchCoord>>;  // [level - 1][family]

// A change of the hierarchy: the parents (coordinates one level coarser, [level - 1] as in
// Hierarchy) of the families to add and of those to remove. A regrid hands the forest
// only this, so that its cost follows the changes, not the mesh (Forest::apply_changes).
struct HierarchyChange {
  Hierarchy added, removed;
  bool empty() const {
    for (const auto& l : added)
      if (!l.empty()) return false;
    for (const auto& l : removed)
      if (!l.empty()) return false;
    return true;
  }
};

// What Mesh::apply_hierarchy changed. Families that stayed kept their pool slots, links
// and data; `moved` counts the families copied into the holes of removed ones (only when
// the mesh shrinks).
struct MeshChange {
  std::vector<std::vector<int>> added;  // [level]: first patch of each new family, data unset
  int added_families = 0;
  int removed_families = 0;
  int moved_families = 0;
  std::vector<int> moved;  // first patch of each family moved into a hole (after the move)
  std::vector<std::pair<int, int>> moves;  // (from, to), first patches, in the store's order
  bool empty() const { return added_families == 0 && removed_families == 0; }
};

// What Forest::apply_hierarchy did, for the store to follow: the families removed (their
// first patches, before the change), the families moved into the holes of removed ones, in
// order, and the patch counts, so the store can keep every remaining family's data.
struct ForestChange {
  MeshChange mesh;
  std::vector<int> removed;
  std::vector<std::pair<int, int>> moves;  // (from, to), first patches, applied in order
  std::size_t patches_before = 0, patches_grown = 0, patches_after = 0;
  int levels_kept = 0;  // levels left after the removals (new ones start at slot 0)
};

// Families of a level are listed (groups()) in the canonical order: along a Morton curve
// of their coordinates, the order the root level's Morton order carries to every level.
// Their positions (patch indices) need not follow it: a regrid (apply_hierarchy) frees and
// allocates families where they change and leaves the others in place. canonicalize()
// renumbers them in canonical order, which is how a forest built from its hierarchy lays
// them out, so a checkpoint (written canonical) rebuilds exactly the same mesh.
class Forest {
 public:
  // Builds level 0 and, level by level, the families of `refined`, in canonical order.
  // Every parent must exist; proper nesting is not checked here (check_invariants does).
  Forest(const Geometry& geometry, const Hierarchy& refined = {});

  const Geometry& geometry() const { return geometry_; }
  int num_patches() const { return static_cast<int>(child_.size()); }
  int num_levels() const { return static_cast<int>(groups_.size()); }
  // Patch p's metadata, a value, from its family's (a root family's from its index: the
  // root's patches are [0, root_patches()), its families in Morton order) and its own first
  // child. A free slot (a removed family's, until the forest is compacted) has level -1.
  PatchMeta patch(int p) const {
    const int c = p % kFamilySize;
    PatchMeta m;
    PatchCoord first;
    if (p < root_patches_) {
      const PatchCoord& f = root_coords_[std::size_t(p / kFamilySize)];
      first = {2 * f[0], 2 * f[1], 2 * f[2]};
    } else {
      const RefinedFamily& f = families_[std::size_t((p - root_patches_) / kFamilySize)];
      if (f.level < 0) return PatchMeta{-1};
      m.level = f.level;
      m.parent = f.parent;
      first = f.first;
    }
    m.corner = {(first[0] + (c & 1)) * kPatchSize, (first[1] + ((c >> 1) & 1)) * kPatchSize,
                (first[2] + ((c >> 2) & 1)) * kPatchSize};
    m.first_child = child_[std::size_t(p)];
    return m;
  }
  // Patches of the root level (its families never change: level 0 is the whole root grid).
  int root_patches() const { return root_patches_; }
  // The same-level neighbours are kept per family: a level's patches come in aligned
  // families of 2x2x2, so the 56 patches around a family lie in the 26 family positions
  // around it, each holding a whole family or none. The first patch of the family at
  // family offset n (neighbour_index, in families; periodic images included; 13 is the
  // family itself) of the family of `first_patch`, or kNoPatch where the level has none.
  int family_neighbour(int first_patch, int n) const {
    return first_patch < root_patches_
               ? root_neighbour(first_patch / kFamilySize, n)
               : links_[std::size_t((first_patch - root_patches_) / kFamilySize) * 27 + n];
  }
  // The same-level neighbour of patch p at offset n (neighbour_index, in patches), or
  // kNoPatch (from the family links).
  int neighbour_patch(int p, int n) const;
  // The patch at block (bx, by, bz) of the 4x4x4 patch positions around the family of
  // `first_patch` (-1 .. 2 per axis; the family itself at 0 .. 1), or kNoPatch: what the
  // neighbour table's rows hold where a patch of the level is.
  int block_patch(int first_patch, int bx, int by, int bz) const;
  // First patch of every patch group (family) of `level`.
  const std::vector<int>& groups(int level) const { return groups_[level]; }
  // Where every group's surrounding blocks come from (neighbour_table.hpp): a view of the
  // family links and flags, valid until the structure changes.
  NeighbourTable neighbours() const { return NeighbourTable(*this); }
  // The 27 family links of the family of `first_patch` (family_neighbour's, in order).
  using FamilyLinks = std::array<int, 27>;
  FamilyLinks family_links(int first_patch) const;
  // The family's sides and coarse flag (NeighbourTable: bits 0-5 the non-periodic domain
  // sides it touches, kFamilyReadsCoarse where a block around it is on the coarser level);
  // brought up to date whenever the structure changes (construction, apply_hierarchy,
  // canonicalize).
  std::uint8_t family_flags(int first_patch) const { return flags_[first_patch / kFamilySize]; }
  long long num_leaf_cells() const;
  long long num_leaf_cells(int level) const;
  // The families above the root, as the constructor takes them (canonical order).
  Hierarchy hierarchy() const;
  // Whether the forest has exactly the families of `refined` (in any order).
  bool has_hierarchy(const Hierarchy& refined) const;
  // Every patch, level by level, family by family in canonical order.
  std::vector<int> canonical_order() const;
  bool is_canonical() const;
  // Position of the family of patch `p` along its level's curve (the key groups() is
  // sorted by): the Morton key of the family's coordinate. A family created again at the
  // same place has the same key, so a cut between keys survives regrids.
  std::uint64_t curve_key(int p) const;

  // The regrid (forest_changes.cpp). The change that turns this forest into one of
  // `refined` (a pass over the whole hierarchy; added parents in the order `refined` lists
  // them, removed ones finest level first, each level in canonical order).
  HierarchyChange change_to(const Hierarchy& refined) const;
  // Changes the forest by `change` in place: the removed families go (finest level
  // first), new ones are placed (in the order listed, coarse to fine, lowest free
  // positions first), linked to their neighbours and parents, and merged into their
  // levels' lists. Everything else keeps its position and links. Holes left when the
  // forest shrinks are filled by moving the last families. The work follows the change:
  // per changed family a few lookups, per level at most one pass of its list's copy.
  // Throws Error(kInternal) for a family whose parent is missing, a removal of a family
  // that does not exist, or a removed family that keeps children.
  ForestChange apply_changes(const HierarchyChange& change);
  // apply_changes(change_to(refined)).
  ForestChange apply_hierarchy(const Hierarchy& refined) {
    return apply_changes(change_to(refined));
  }
  // Families per refined level (1, 2, ...) once `change` is applied.
  std::vector<std::size_t> families_after(const HierarchyChange& change) const;
  // Renumbers the patches in canonical order; returns order[new] = old (empty when the
  // forest was canonical already).
  std::vector<int> canonicalize();

  // Patch covering patch coordinate `pc` of `level`, with periodic images wrapped;
  // kNoPatch outside the domain or where the level has no patch.
  int find_patch(int level, PatchCoord pc) const;
  // Wraps periodic dimensions; false when pc lies beyond a non-periodic boundary.
  bool wrap(int level, PatchCoord& pc) const;

  // Cells per dimension of a level and its width.
  std::array<int, 3> level_cells(int level) const;
  double dx(int level) const { return geometry_.dx(level); }
  std::array<double, 3> cell_center(int p, int i, int j, int k) const;

  // Throws tessera::Error(kInternal) naming the first violation: families complete and
  // contiguous, parent/child links consistent, neighbour links symmetric, and proper
  // nesting (every refined patch has all 26 same-level neighbours inside the domain),
  // the family links equal to the lookup's, and each family's flags (boundary sides, coarse
  // blocks) equal to ones computed afresh. In forest_invariants.cpp.
  void check_invariants() const;

 private:
  static std::uint64_t key(int level, PatchCoord pc);
  // The patch at `pc` of `level` (no periodic images), or kNoPatch.
  int lookup(int level, PatchCoord pc) const;
  // Sets the metadata of a family at `first_patch` (appended when == num_patches()).
  void place_family(int first_patch, int level, PatchCoord first, int parent);
  void link_family(int first_patch);
  void unlink_family(int first_patch);
  void move_family(int from, int to);
  // Canonical order of a level's groups, the first `kept` of which are in it already:
  // the others are sorted and merged in.
  void merge_groups(int level, std::size_t kept);
  // Position in groups(level)'s first `count` (canonical order) of the family at `first`.
  std::size_t group_position(int level, int first, std::size_t count) const;

  // The root level is implicit (patch() reads root_coords_): root family f (patches 8 f ..
  // 8 f + 7) is the f-th along the Morton curve of the root's family coordinates. Level 0 is
  // the whole root grid and comes first in every order (construction, canonicalize, the holes
  // a shrinking forest fills are refined families'), so its patches never move.
  //
  // The first patch of the root family at offset n (neighbour_index, in families; periodic
  // images wrapped) of root family `family`, or kNoPatch beyond a non-periodic side.
  int root_neighbour(int family, int n) const;
  // What a refined family stores of its patches' metadata (PatchMeta follows from it and
  // each patch's first child): its first patch's coordinate, its level (-1: a free slot)
  // and its parent, 20 bytes per family instead of 24 per patch.
  struct RefinedFamily {
    PatchCoord first{};
    int parent = kNoPatch;
    int level = -1;
  };
  // A refined patch's family's record and links.
  RefinedFamily& family_of(int p) {
    return families_[std::size_t((p - root_patches_) / kFamilySize)];
  }
  int* links_of(int first_patch) {
    return links_.data() + std::size_t((first_patch - root_patches_) / kFamilySize) * 27;
  }
  void set_first_child(int p, int child) { child_[std::size_t(p)] = child; }

  Geometry geometry_;
  int root_patches_ = 0;
  std::array<int, 3> root_families_{};    // root families per axis
  std::vector<PatchCoord> root_coords_;   // [root family]: its coordinate (Morton order)
  std::vector<int> root_index_;           // [x + nx (y + ny z)]: the root family there
  std::vector<int> child_;                // [patch]: first_child (root and refined)
  std::vector<RefinedFamily> families_;   // [(p - root_patches_) / 8]: the refined families
  std::vector<std::vector<int>> groups_;  // [level]: first patches, canonical order
  // [refined family][27]: family_neighbour's links.
  std::vector<int> links_;
  // (level >= 1, family coordinate) -> the family's first patch (one entry per refined family).
  std::unordered_map<std::uint64_t, int> lookup_;
  // [family]: family_flags.
  std::vector<std::uint8_t> flags_;
  // The flags of the family at `first_patch`, from its links and corner.
  std::uint8_t compute_flags(int first_patch) const;
  // Families whose neighbour links or position changed since their flags were last
  // brought up to date (apply_hierarchy recomputes only theirs).
  std::vector<int> touched_;
  // The family of `patch` listed for its flags (a repeat of the last listed one skipped:
  // apply_changes sorts and uniques the list).
  void touch(int patch) {
    const int family = patch - patch % kFamilySize;
    if (touched_.empty() || touched_.back() != family) touched_.push_back(family);
  }
};

}  // namespace tessera::mesh
