// The patch mesh: the octree's structure (Forest, forest.hpp: families of 8^3-cell
// patches, their levels, positions, links and the neighbour table) and the data of the
// patches this process holds (PatchStore, patch_store.hpp: two time levels each, in one
// structure-of-arrays pool [patch][var][z][y][x], the variables the fields of a
// FieldRegistry in its order). Every rank holds the whole forest and a store of its own
// families plus the buffer copies it reads (docs/architecture.md, "Ranks"). A structure
// change (apply_hierarchy, canonicalize) is made on the forest and followed by the store,
// so every held family keeps its data.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "tessera/core/real.hpp"
#include "tessera/mesh/fields.hpp"
#include "tessera/mesh/forest.hpp"
#include "tessera/mesh/geometry.hpp"
#include "tessera/mesh/patch_store.hpp"

namespace tessera::mesh {

class Mesh {
 public:
  // Builds level 0 and, level by level, the families of `refined`, in canonical order
  // (pool order = canonical order). Every parent must exist; proper nesting is not checked
  // here (check_invariants does). Data of both time levels is zero. Every field must have
  // 1 or 2 time levels (Error(kInternal) otherwise). with_data = false: the structure only,
  // a store that holds no family yet (sparse; a rank of several holds its own).
  Mesh(const Geometry& geometry, FieldRegistry fields, const Hierarchy& refined = {},
       bool with_data = true);

  const Forest& forest() const { return forest_; }
  const PatchStore& store() const { return store_; }
  PatchStore& store() { return store_; }

  // The structure (forest.hpp).
  const Geometry& geometry() const { return forest_.geometry(); }
  int num_patches() const { return forest_.num_patches(); }
  int num_levels() const { return forest_.num_levels(); }
  PatchMeta patch(int p) const { return forest_.patch(p); }
  const std::vector<int>& groups(int level) const { return forest_.groups(level); }
  NeighbourTable neighbours() const { return forest_.neighbours(); }
  long long num_leaf_cells() const { return forest_.num_leaf_cells(); }
  long long num_leaf_cells(int level) const { return forest_.num_leaf_cells(level); }
  Hierarchy hierarchy() const { return forest_.hierarchy(); }
  bool has_hierarchy(const Hierarchy& refined) const { return forest_.has_hierarchy(refined); }
  std::vector<int> canonical_order() const { return forest_.canonical_order(); }
  bool is_canonical() const { return forest_.is_canonical(); }
  std::uint64_t curve_key(int p) const { return forest_.curve_key(p); }
  int find_patch(int level, PatchCoord pc) const { return forest_.find_patch(level, pc); }
  int neighbour_patch(int p, int n) const { return forest_.neighbour_patch(p, n); }
  bool wrap(int level, PatchCoord& pc) const { return forest_.wrap(level, pc); }
  std::array<int, 3> level_cells(int level) const { return forest_.level_cells(level); }
  double dx(int level) const { return forest_.dx(level); }
  std::array<double, 3> cell_center(int p, int i, int j, int k) const {
    return forest_.cell_center(p, i, j, k);
  }

  // Changes the mesh by `change` in place (Forest::apply_changes): the removed families are
  // freed (finest level first; their parents must already hold their
  // restriction), new ones allocated and returned per level for the caller to fill (coarse
  // to fine: prolong_family). Everything else keeps its position, links and data; families
  // moved into the holes of removed ones take their data along. A sparse store does not
  // hold the new families.
  // `before_pool_moves(patches)`, when set, is called before the pool's arrays are
  // reallocated (they must hold `patches`, beyond their capacity): a device copy that
  // page-locked them lets go first, or reserves a larger capacity (reserve_families) and
  // follows it.
  MeshChange apply_changes(const HierarchyChange& change,
                           const std::function<void(std::size_t)>& before_pool_moves = nullptr);
  // The same to a mesh of `refined` (Forest::change_to: a pass over the whole hierarchy).
  MeshChange apply_hierarchy(const Hierarchy& refined,
                             const std::function<void(std::size_t)>& before_pool_moves = nullptr) {
    return apply_changes(forest_.change_to(refined), before_pool_moves);
  }
  // Renumbers the patches (metadata and both time levels) in canonical order.
  void canonicalize();
  // Throws tessera::Error(kInternal) naming the first violation of the forest's
  // invariants (Forest::check_invariants).
  void check_invariants() const { forest_.check_invariants(); }

  // The problem's ghost-cell states on sides with Boundary::kProblem (geometry.hpp).
  void set_problem_boundary(ProblemBoundary b) { problem_boundary_ = std::move(b); }
  const ProblemBoundary& problem_boundary() const { return problem_boundary_; }

  // The data (patch_store.hpp). Two time levels per patch. Each level advances on its own
  // (subcycling), so each level has its own current slot; a level step reads `current` and
  // writes `next`, then swaps, leaving the previous state in `next` for time interpolation.
  // A field with one time level is updated in place in the current slot: swap_slots first
  // copies it, for every patch of the level, into the next slot, so the state carries
  // across.
  const FieldRegistry& fields() const { return store_.fields(); }
  int nvar() const { return store_.nvar(); }
  Real* data(int slot, int p) { return store_.data(slot, p); }
  const Real* data(int slot, int p) const { return store_.data(slot, p); }
  void make_sparse() { store_.make_sparse(); }
  void make_dense() { store_.make_dense(); }
  bool sparse() const { return store_.sparse(); }
  bool holds(int p) const { return store_.holds(p); }
  void hold(int first_patch) { store_.hold(first_patch); }
  void reserve_families(int families) { store_.reserve_families(families); }
  void release(int first_patch) { store_.release(first_patch); }
  void compact() { store_.compact(); }
  int held_families() const { return store_.held_families(); }
  int free_families() const { return store_.free_families(); }
  void set_host_stale(int slot, bool stale) { store_.set_host_stale(slot, stale); }
  bool host_stale(int slot) const { return store_.host_stale(slot); }
  void flip_slots(int level) { store_.flip_slots(level); }
  int current_slot(int level) const { return store_.current_slot(level); }
  int next_slot(int level) const { return store_.next_slot(level); }
  void swap_slots(int level) { store_.swap_slots(level, forest_.groups(level)); }
  Real* current(int p) { return data(current_slot(patch(p).level), p); }
  const Real* current(int p) const { return data(current_slot(patch(p).level), p); }
  std::size_t patch_reals() const { return store_.patch_reals(); }
  std::size_t pool_capacity_patches() const { return store_.pool_capacity_patches(); }
  std::size_t pool_peak_patches() const { return store_.pool_peak_patches(); }
  MemorySpace memory_space() const { return store_.memory_space(); }

 private:
  Forest forest_;
  PatchStore store_;
  ProblemBoundary problem_boundary_;
};

}  // namespace tessera::mesh
