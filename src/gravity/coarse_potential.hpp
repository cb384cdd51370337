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

}  // namespace detail
}  // namespace tessera::gravity
