// Whether one cell's conserved state is physically admissible (mesh/fields.hpp,
// FieldRegistry::admissible): the check prolongation, refluxing and first-order flux
// correction share, on the host and (for device-resident adaptive levels) on the GPU.
#pragma once

#include <cstddef>

#include "tessera/core/real.hpp"

namespace tessera::kernels {

// Positive density and, with an energy field, a pressure (gamma - 1) (E - m^2 / (2 rho) -
// B^2 / 2) at or above the floor, for a state u[v * stride] in the conserved layout of the
// physics (density 0, momentum 1-3, energy 4, field 5-7). Off (the default): every state is.
struct AdmissibleState {
  bool on = false;
  bool energy = false;  // an energy field at 4 (adiabatic gas, MHD): check the pressure
  bool field = false;   // a magnetic field at 5-7 (MHD)
  Real gamma_minus_1 = 0, pressure_floor = 0;

  TESSERA_HD explicit operator bool() const { return on; }
  // The variables operator() reads: the first vars() of the layout (none when off).
  TESSERA_HD int vars() const { return !on ? 0 : field ? 8 : energy ? 5 : 1; }
  TESSERA_HD bool operator()(const Real* u, std::size_t stride) const {
    const Real rho = u[0];
    if (!(rho > 0)) return false;
    if (!energy) return true;
    const Real mx = u[stride], my = u[2 * stride], mz = u[3 * stride];
    Real e = Real(0.5) * (mx * mx + my * my + mz * mz) / rho;
    if (field) {
      const Real bx = u[5 * stride], by = u[6 * stride], bz = u[7 * stride];
      e += Real(0.5) * (bx * bx + by * by + bz * bz);
    }
    return gamma_minus_1 * (u[4 * stride] - e) >= pressure_floor;
  }
};

// Variables the check reads at most (density, momentum, energy, field).
inline constexpr int kAdmissibleVars = 8;

}  // namespace tessera::kernels
