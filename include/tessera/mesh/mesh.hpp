// The patch mesh: 8^3-cell patches in families of 8 siblings (patch groups), their
// metadata (level, position, parent/children, neighbours) and their data, two time
// levels each, in one structure-of-arrays pool [patch][var][z][y][x].
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "tessera/core/real.hpp"
#include "tessera/mesh/geometry.hpp"

namespace tessera::mesh {

inline constexpr int kPatchSize = 8;
inline constexpr int kPatchCells = kPatchSize * kPatchSize * kPatchSize;
inline constexpr int kFamilySize = 8;  // patches per patch group
inline constexpr int kNoPatch = -1;    // outside a non-periodic boundary (or not refined)

// Index of neighbour offset (dx, dy, dz) in {-1, 0, 1}^3; 13 is the patch itself.
constexpr int neighbour_index(int dx, int dy, int dz) {
  return (dx + 1) + 3 * (dy + 1) + 9 * (dz + 1);
}

struct PatchMeta {
  int level = 0;
  std::array<int, 3> corner{};      // first cell, in the index space of `level`
  int parent = kNoPatch;            // level 0 has no parent
  int first_child = kNoPatch;       // first patch of the child family; kNoPatch for a leaf
  std::array<int, 27> neighbour{};  // same-level neighbours (periodic images included)

  bool is_leaf() const { return first_child == kNoPatch; }
};

class Mesh {
 public:
  // Builds level 0: the root grid in patch groups ordered along a Morton curve.
  Mesh(const Geometry& geometry, int nvar);

  const Geometry& geometry() const { return geometry_; }
  int nvar() const { return nvar_; }
  int num_patches() const { return static_cast<int>(patches_.size()); }
  int num_levels() const { return static_cast<int>(groups_.size()); }
  const PatchMeta& patch(int p) const { return patches_[p]; }
  // First patch of every patch group (family) of `level`.
  const std::vector<int>& groups(int level) const { return groups_[level]; }
  long long num_leaf_cells() const;

  // Patch covering patch coordinate `pc` (patch units) of `level`, with periodic
  // images wrapped; kNoPatch outside the domain or where the level has no patch.
  int find_patch(int level, std::array<int, 3> pc) const;

  // Cells per dimension of a level and its width.
  std::array<int, 3> level_cells(int level) const;
  double dx(int level) const { return geometry_.dx(level); }
  std::array<double, 3> cell_center(int p, int i, int j, int k) const;

  // Two time levels: `current` holds the state at the level's time, the other receives
  // the update; advancing a level swaps them.
  Real* data(int slot, int p) { return pool_[slot].data() + std::size_t(p) * patch_reals(); }
  const Real* data(int slot, int p) const {
    return pool_[slot].data() + std::size_t(p) * patch_reals();
  }
  Real* current(int p) { return data(current_slot_, p); }
  const Real* current(int p) const { return data(current_slot_, p); }
  int current_slot() const { return current_slot_; }
  int next_slot() const { return 1 - current_slot_; }
  void swap_slots() { current_slot_ = 1 - current_slot_; }
  std::size_t patch_reals() const { return std::size_t(nvar_) * kPatchCells; }

 private:
  static std::uint64_t key(int level, std::array<int, 3> pc);
  void link_neighbours();

  Geometry geometry_;
  int nvar_;
  std::vector<PatchMeta> patches_;
  std::vector<std::vector<int>> groups_;
  std::unordered_map<std::uint64_t, int> lookup_;
  std::vector<Real> pool_[2];
  int current_slot_ = 0;
};

}  // namespace tessera::mesh
