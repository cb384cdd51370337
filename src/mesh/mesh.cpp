#include "tessera/mesh/mesh.hpp"

namespace tessera::mesh {

Mesh::Mesh(const Geometry& geometry, FieldRegistry fields, const Hierarchy& refined, bool with_data)
    : forest_(geometry, refined),
      store_(std::move(fields), forest_.num_patches(), forest_.num_levels(), with_data) {}

MeshChange Mesh::apply_changes(const HierarchyChange& change,
                               const std::function<void(std::size_t)>& before_pool_moves) {
  ForestChange fc = forest_.apply_changes(change);
  for (const auto& move : fc.moves) fc.mesh.moved.push_back(move.second);
  fc.mesh.moves = fc.moves;
  // The pool's arrays are reallocated when they grow beyond their capacity.
  if (before_pool_moves && fc.patches_grown > store_.pool_capacity_patches())
    before_pool_moves(fc.patches_grown);
  // The store follows the forest's steps in the same order: removed families dropped
  // (sparse), room for the largest extent, the moves into the holes, then the final size.
  if (store_.sparse())
    for (const int g : fc.removed) store_.release(g);
  if (fc.patches_grown > fc.patches_before) store_.resize(fc.patches_grown);
  for (const auto& [from, to] : fc.moves) store_.move_family(from, to);
  if (fc.patches_after < fc.patches_before) store_.resize(fc.patches_after);
  store_.set_levels(fc.levels_kept, forest_.num_levels());
  return std::move(fc.mesh);
}

void Mesh::canonicalize() {
  store_.permute(forest_.canonicalize());
}

}  // namespace tessera::mesh
