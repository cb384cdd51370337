// The fields of each physics as the solver stores them (pool order, plot order, vector
// components), for mesh::FieldRegistry: physics::Model::fields picks the run's.
#pragma once

#include "tessera/mesh/fields.hpp"

namespace tessera::physics {

// The fields of hydrodynamics as the solver stores them: density, momentum, total energy
// (adiabatic only), then `passive_scalars` conserved scalars rho*s (kernels/physics_*.hpp).
mesh::FieldRegistry hydro_fields(bool energy, int passive_scalars);

// The fields of GLM-MHD (kernels/physics_mhd.hpp): density, momentum, total energy, the
// cell-centred magnetic field Bcc1..3 (a vector; plot dataset "B"), the cleaning scalar
// psi, then the passive scalars.
mesh::FieldRegistry mhd_fields(int passive_scalars);

}  // namespace tessera::physics
