// The coarser level's potential as the refined levels' Poisson solves see it (internal to
// src/gravity: self_gravity.cpp gathers the solves' ghost layers with it, and the potential
// correction, potential_correction.cpp, evaluates the same ghost values).
#pragma once

#include <array>

#include "tessera/core/real.hpp"
#include "tessera/mesh/mesh.hpp"
#include "tessera/mesh/prolongation.hpp"

namespace tessera::gravity {

class SelfGravity;

namespace detail {

// The potential of patch `parent` with two layers of ghost cells (12^3, at time `weight`),
// continued beyond non-periodic domain boundaries (next to an isolated root, with `root`
// given, the root's free-space potential just outside): what its children's ghost values
// are interpolated from.
void gather_parent_potential(const mesh::Mesh& m, int parent, double weight, int phi_field,
                             mesh::CoarseBox& cb, const SelfGravity* root);

// The potential of fine cell `fine` (index of the finer level) from the 3 x 3 x 3 cells of
// `cb` around its parent: tensor-product quadratic Lagrange interpolation, third order.
Real interpolate_potential(const mesh::CoarseBox& cb, std::array<int, 3> fine);

// The same interpolation for all 16^3 cells of the group whose parent's box is `cb` (from
// gather_parent_potential), axis by axis (the tensor product's three passes: 9 products
// per cell instead of 27); out[(k * 16 + j) * 16 + i], the group's cell (i, j, k). Equal
// to interpolate_potential to round-off.
void interpolate_group_potential(const mesh::CoarseBox& cb, Real* out);

}  // namespace detail
}  // namespace tessera::gravity
