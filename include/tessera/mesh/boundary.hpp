// Physical boundary conditions (outflow, reflecting, problem-defined) on a patch group's
// ghost zones.
// Periodic boundaries need no filling here: the mesh links periodic images as neighbours.
#pragma once

#include <array>

#include "tessera/core/real.hpp"
#include "tessera/mesh/mesh.hpp"

namespace tessera::mesh {

// box: [nvar][n][n][n] with n = 16 + 2 * ghost; group_corner: first interior cell of the
// group in the index space of `level`. Sweeps x, then y, then z over the whole box extent
// so edge and corner ghost cells end up filled too. Outflow copies the nearest interior
// cell; a reflecting wall mirrors the interior and flips the sign of the fields that are
// the vector component normal to it (FieldInfo::vector_component); a problem-defined side
// (Boundary::kProblem) takes, cell by cell, what the mesh's ProblemBoundary gives at
// `time`, the time of the data in the box (a time-dependent inflow). Every boundary
// condition of the code is applied here; the device-resident gather (resident.hpp) mirrors
// the outflow and reflecting ones and leaves levels with problem-defined sides to the host.
void apply_physical_boundaries(const Mesh& mesh, int level, std::array<int, 3> group_corner,
                               int ghost, Real* box, double time);

}  // namespace tessera::mesh
