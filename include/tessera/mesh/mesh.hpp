// The patch mesh: an octree of 8^3-cell patches in families of 8 siblings (patch groups),
// their metadata (level, position, parent/children, neighbours) and their data, two time
// levels each, in one structure-of-arrays pool [patch][var][z][y][x]; the variables are
// the fields of a FieldRegistry, in its order.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "tessera/core/real.hpp"
#include "tessera/mesh/fields.hpp"
#include "tessera/mesh/geometry.hpp"
#include "tessera/mesh/neighbour_table.hpp"
#include "tessera/mesh/patch_pool.hpp"

namespace tessera::mesh {

inline constexpr int kPatchSize = 8;
inline constexpr int kPatchCells = kPatchSize * kPatchSize * kPatchSize;
inline constexpr int kFamilySize = 8;  // patches per patch group
inline constexpr int kMaxLevels = 11;  // root + 10 refinement levels
inline constexpr int kNoPatch = -1;    // outside a non-periodic boundary, or not refined

// Index of neighbour offset (dx, dy, dz) in {-1, 0, 1}^3; 13 is the patch itself.
constexpr int neighbour_index(int dx, int dy, int dz) {
  return (dx + 1) + 3 * (dy + 1) + 9 * (dz + 1);
}

using PatchCoord = std::array<int, 3>;  // position in patch units at a level

struct PatchMeta {
  int level = 0;
  std::array<int, 3> corner{};      // first cell, in the index space of `level`
  int parent = kNoPatch;            // level 0 has no parent
  int first_child = kNoPatch;       // first patch of the child family; kNoPatch for a leaf
  std::array<int, 27> neighbour{};  // same-level neighbours (periodic images included)

  bool is_leaf() const { return first_child == kNoPatch; }
  PatchCoord coord() const { return {corner[0] / 8, corner[1] / 8, corner[2] / 8}; }
};

// The families of every level above the root, each given by the coordinate of its
// parent patch (one level coarser); level 0 is always the whole root grid.
using Hierarchy = std::vector<std::vector<PatchCoord>>;  // [level - 1][family]

// What Mesh::apply_hierarchy changed. Families that stayed kept their pool slots, links
// and data; `moved` counts the families copied into the holes of removed ones (only when
// the mesh shrinks).
struct MeshChange {
  std::vector<std::vector<int>> added;  // [level]: first patch of each new family, data unset
  int added_families = 0;
  int removed_families = 0;
  int moved_families = 0;
  bool empty() const { return added_families == 0 && removed_families == 0; }
};

// Families of a level are listed (groups()) in the canonical order: along a Morton curve
// of their coordinates, the order the root level's Morton order carries to every level.
// Their pool slots need not follow it: a regrid (apply_hierarchy) frees and allocates
// families where they change and leaves the others in place. canonicalize() puts the pool
// in canonical order, which is how a mesh built from its hierarchy lays it out, so a
// checkpoint (written canonical) rebuilds exactly the same mesh.
class Mesh {
 public:
  // Builds level 0 and, level by level, the families of `refined`, in canonical order
  // (pool order = canonical order). Every parent must exist; proper nesting is not checked
  // here (check_invariants does). Data of both time levels is zero. Every field must have
  // 1 or 2 time levels (Error(kInternal) otherwise). with_data = false: the structure only,
  // a store that holds no family yet (make_sparse(); a rank of several holds its own).
  Mesh(const Geometry& geometry, FieldRegistry fields, const Hierarchy& refined = {},
       bool with_data = true);

  const Geometry& geometry() const { return geometry_; }
  // The problem's ghost-cell states on sides with Boundary::kProblem (geometry.hpp).
  void set_problem_boundary(ProblemBoundary b) { problem_boundary_ = std::move(b); }
  const ProblemBoundary& problem_boundary() const { return problem_boundary_; }
  const FieldRegistry& fields() const { return fields_; }
  int nvar() const { return nvar_; }
  int num_patches() const { return static_cast<int>(patches_.size()); }
  int num_levels() const { return static_cast<int>(groups_.size()); }
  const PatchMeta& patch(int p) const { return patches_[p]; }
  // First patch of every patch group (family) of `level`.
  const std::vector<int>& groups(int level) const { return groups_[level]; }
  // Where every group's surrounding blocks come from (neighbour_table.hpp); rebuilt
  // whenever the structure changes (construction, apply_hierarchy, canonicalize).
  const NeighbourTable& neighbours() const { return neighbours_; }
  long long num_leaf_cells() const;
  long long num_leaf_cells(int level) const;
  // The families above the root, as the constructor takes them (canonical order).
  Hierarchy hierarchy() const;
  // Whether the mesh has exactly the families of `refined` (in any order).
  bool has_hierarchy(const Hierarchy& refined) const;
  // Every patch, level by level, family by family in canonical order.
  std::vector<int> canonical_order() const;
  bool is_canonical() const;
  // Position of the family of patch `p` along its level's curve (the key groups() is
  // sorted by): the Morton key of the family's coordinate. A family created again at the
  // same place has the same key, so a cut between keys survives regrids.
  std::uint64_t curve_key(int p) const;

  // Changes the mesh to `refined` in place: families that are no longer wanted are freed
  // (finest level first; their parents must already hold their restriction), new ones are
  // allocated (free slots first), linked to their neighbours and parents, and returned
  // per level for the caller to fill (coarse to fine: prolong_family). Everything else
  // keeps its slot, links and data. Holes left when the mesh shrinks are filled by moving
  // the last families. Throws Error(kInternal) for a family whose parent is missing or a
  // removed family that keeps children.
  MeshChange apply_hierarchy(const Hierarchy& refined);
  // Permutes the pool (metadata and both time levels) into canonical order.
  void canonicalize();

  // Patch covering patch coordinate `pc` of `level`, with periodic images wrapped;
  // kNoPatch outside the domain or where the level has no patch.
  int find_patch(int level, PatchCoord pc) const;
  // Wraps periodic dimensions; false when pc lies beyond a non-periodic boundary.
  bool wrap(int level, PatchCoord& pc) const;

  // Cells per dimension of a level and its width.
  std::array<int, 3> level_cells(int level) const;
  double dx(int level) const { return geometry_.dx(level); }
  std::array<double, 3> cell_center(int p, int i, int j, int k) const;

  // Two time levels per patch. Each level advances on its own (subcycling), so each
  // level has its own current slot; a level step reads `current` and writes `next`,
  // then swaps, leaving the previous state in `next` for time interpolation. A field with
  // one time level is updated in place in the current slot: swap_slots first copies it,
  // for every patch of the level, into the next slot, so the state carries across.
  Real* data(int slot, int p) {
    check_host(slot);
    return pool_[slot].data() + offset(p);
  }
  const Real* data(int slot, int p) const {
    check_host(slot);
    return pool_[slot].data() + offset(p);
  }

  // The patch store (docs/architecture.md, "Ranks"). A mesh holds the data of every family
  // at the pool position of its first patch (pool order = patch order) until make_sparse()
  // turns the pool into a store of the families this process holds, each anywhere in it:
  // on several ranks, a rank's own families and the buffer copies of the others' it reads.
  // hold() gives a family room (its data NaN until written: nothing current passes for
  // received), release() drops one, compact() returns the room of dropped ones (the pool
  // is rebuilt holding exactly the held families). data() of a family not held throws
  // Error(kInternal) naming the patch. Structure changes (apply_hierarchy, canonicalize)
  // keep every held family's data; a sparse mesh's new families are not held.
  void make_sparse();
  // Back to every family at the position of its first patch (each must be held): what the
  // checkpoint writer, which writes each level as one slab of the pool, needs.
  void make_dense();
  bool sparse() const { return sparse_; }
  bool holds(int p) const { return family_slot_[p / kFamilySize] >= 0; }
  void hold(int first_patch);
  // Room for `families` held families in all without reallocating (hold() grows the pool
  // geometrically, up to twice what it holds).
  void reserve_families(int families);
  void release(int first_patch);
  void compact();
  // Families whose data this process holds; released positions that hold() will reuse.
  int held_families() const;
  int free_families() const { return static_cast<int>(free_families_.size()); }
  // Device residency (exec/resident.hpp): a time level whose newest data are on the GPU
  // is marked stale, and data() refuses it with Error(kInternal) until it is copied back,
  // so that a host-side reader that forgot to ask for the copy is found at once.
  void set_host_stale(int slot, bool stale) {
    stale_slots_ = stale ? stale_slots_ | (1 << slot) : stale_slots_ & ~(1 << slot);
  }
  bool host_stale(int slot) const { return (stale_slots_ >> slot) & 1; }
  // Makes `level`'s next slot current without copying anything (the device-resident pipeline
  // carries one-level fields across itself).
  void flip_slots(int level) { current_slot_[level] = 1 - current_slot_[level]; }
  int current_slot(int level) const { return current_slot_[level]; }
  int next_slot(int level) const { return 1 - current_slot_[level]; }
  void swap_slots(int level);
  Real* current(int p) { return data(current_slot(patches_[p].level), p); }
  const Real* current(int p) const { return data(current_slot(patches_[p].level), p); }
  std::size_t patch_reals() const { return std::size_t(nvar_) * kPatchCells; }
  // Patches the pool holds room for without reallocating.
  std::size_t pool_capacity_patches() const { return pool_[0].capacity() / patch_reals(); }
  // The largest room the pool ever had, in patches: a rank's store never came near the
  // whole mesh when this is well below num_patches().
  std::size_t pool_peak_patches() const { return pool_peak_patches_; }
  // Where the patch data live (host memory; see patch_pool.hpp).
  MemorySpace memory_space() const { return pool_[0].space(); }

  // Throws tessera::Error(kInternal) naming the first violation: families complete and
  // contiguous, parent/child links consistent, neighbour links symmetric, and proper
  // nesting (every refined patch has all 26 same-level neighbours inside the domain),
  // and the neighbour table equal to one built afresh.
  void check_invariants() const;

 private:
  static std::uint64_t key(int level, PatchCoord pc);
  // Sets the metadata of a family at slot `first_patch` (appended when == num_patches()).
  void place_family(int first_patch, int level, PatchCoord first, int parent);
  void link_family(int first_patch);
  void unlink_family(int first_patch);
  void move_family(int from, int to);
  void resize_pool(std::size_t patches);
  void sort_groups(int level);
  void check_host(int slot) const {
    if (stale_slots_ >> slot & 1) [[unlikely]]
      refuse_stale(slot);
  }
  [[noreturn]] void refuse_stale(int slot) const;
  std::size_t offset(int p) const {
    const int f = family_slot_[p / kFamilySize];
    if (f < 0) [[unlikely]]
      refuse_absent(p);
    return (std::size_t(f) * kFamilySize + p % kFamilySize) * patch_reals();
  }
  [[noreturn]] void refuse_absent(int p) const;

  Geometry geometry_;
  ProblemBoundary problem_boundary_;
  FieldRegistry fields_;
  int nvar_;                           // fields_.size()
  std::vector<int> one_level_fields_;  // fields with time_levels == 1
  std::vector<PatchMeta> patches_;
  std::vector<std::vector<int>> groups_;  // [level]: first patches, canonical order
  std::unordered_map<std::uint64_t, int> lookup_;
  NeighbourTable neighbours_;
  // Families whose neighbour links or slot changed since the table was last brought up to
  // date (apply_hierarchy updates only their rows).
  std::vector<int> touched_;
  void touch(int patch) { touched_.push_back(patch - patch % kFamilySize); }
  PatchPool pool_[2];  // the two time levels
  // [family]: its position in the pool, in families (-1: not held); the identity unless
  // sparse_. free_families_: pool positions of released families, for hold() to reuse.
  std::vector<int> family_slot_;
  std::vector<int> free_families_;
  bool sparse_ = false;
  std::size_t pool_peak_patches_ = 0;
  void note_pool() { pool_peak_patches_ = std::max(pool_peak_patches_, pool_capacity_patches()); }
  std::vector<int> current_slot_;
  int stale_slots_ = 0;  // bit s: time level s is newer on the device
};

}  // namespace tessera::mesh
