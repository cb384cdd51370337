// Ideal-gas Euler states: primitive/conserved structs, EOS, physical fluxes and floors.
// Equations: Wang, Abel & Kaehler 2009, eqs. 1-6 (ideal gas, p = (gamma-1) e).
#pragma once

#include <cmath>

#include "tessera/core/real.hpp"

namespace tessera::kernels {

// std:: overloads serve float and double on the host and, under nvcc, on the device.
using std::fabs;
using std::isfinite;
using std::sqrt;

// Plain comparisons rather than fmin/fmax: those must honour NaN rules, which keeps
// compilers from inlining them on the host (a libm call per face otherwise).
TESSERA_HD inline Real min_of(Real a, Real b) {
  return a < b ? a : b;
}
TESSERA_HD inline Real max_of(Real a, Real b) {
  return a > b ? a : b;
}

// Variable order of the patch data (docs/architecture.md, "Mesh and data layout").
enum HydroVar : int { kDens = 0, kMomX = 1, kMomY = 2, kMomZ = 3, kEngy = 4 };
inline constexpr int kNumHydroVars = 5;

struct Prim {
  Real rho;
  Real v[3];
  Real p;
};

// Also used for fluxes, which have the same components.
struct Cons {
  Real dens;
  Real mom[3];
  Real engy;
};

struct EosParams {
  Real gamma;
  Real density_floor;
  Real pressure_floor;
};

TESSERA_HD inline Real kinetic_energy(const Cons& u) {
  return Real(0.5) * (u.mom[0] * u.mom[0] + u.mom[1] * u.mom[1] + u.mom[2] * u.mom[2]) / u.dens;
}

TESSERA_HD inline Cons prim_to_cons(const Prim& w, Real gamma) {
  Cons u;
  u.dens = w.rho;
  for (int d = 0; d < 3; ++d) u.mom[d] = w.rho * w.v[d];
  u.engy = w.p / (gamma - Real(1)) +
           Real(0.5) * w.rho * (w.v[0] * w.v[0] + w.v[1] * w.v[1] + w.v[2] * w.v[2]);
  return u;
}

// Conversion used for reconstruction: floors keep the reconstructed states physical
// (they do not change the conserved data, which close_state() handles).
TESSERA_HD inline Prim cons_to_prim(const Cons& u, const EosParams& eos) {
  Prim w;
  w.rho = u.dens > eos.density_floor ? u.dens : eos.density_floor;
  const Real inv = Real(1) / w.rho;
  for (int d = 0; d < 3; ++d) w.v[d] = u.mom[d] * inv;
  const Real ek = Real(0.5) * w.rho * (w.v[0] * w.v[0] + w.v[1] * w.v[1] + w.v[2] * w.v[2]);
  const Real p = (eos.gamma - Real(1)) * (u.engy - ek);
  w.p = p > eos.pressure_floor ? p : eos.pressure_floor;
  return w;
}

TESSERA_HD inline Real sound_speed(const Prim& w, Real gamma) {
  return sqrt(gamma * w.p / w.rho);
}

// Physical flux along direction 0 of a state already rotated so v[0] is normal.
TESSERA_HD inline Cons physical_flux(const Prim& w, const Cons& u) {
  Cons f;
  f.dens = u.mom[0];
  f.mom[0] = u.mom[0] * w.v[0] + w.p;
  f.mom[1] = u.mom[1] * w.v[0];
  f.mom[2] = u.mom[2] * w.v[0];
  f.engy = (u.engy + w.p) * w.v[0];
  return f;
}

// Cyclic permutation (x,y,z) -> (n,t1,t2) so that one 1D Riemann solver serves all
// three directions. A flow along y or z alone is computed with exactly the operations of
// the same flow along x; with transverse velocities the results agree to round-off only,
// because the kinetic energy sums v_x^2 + v_y^2 + v_z^2 in lab-frame order.
TESSERA_HD inline Prim rotate_to(const Prim& w, int dir) {
  Prim r = w;
  for (int d = 0; d < 3; ++d) r.v[d] = w.v[(d + dir) % 3];
  return r;
}

TESSERA_HD inline Cons rotate_from(const Cons& f, int dir) {
  Cons r = f;
  for (int d = 0; d < 3; ++d) r.mom[(d + dir) % 3] = f.mom[d];
  return r;
}

TESSERA_HD inline bool is_finite(const Cons& u) {
  return isfinite(u.dens) && isfinite(u.mom[0]) && isfinite(u.mom[1]) && isfinite(u.mom[2]) &&
         isfinite(u.engy);
}

// Outcome of the floors on one updated cell.
enum class FloorResult { kOk, kFloored, kUnphysical };

// Applies the density and pressure floors to an updated conserved state. A state that
// is not finite cannot be repaired by floors: the caller aborts the run with it.
TESSERA_HD inline FloorResult apply_floors(Cons& u, const EosParams& eos) {
  if (!is_finite(u)) return FloorResult::kUnphysical;
  FloorResult result = FloorResult::kOk;
  if (u.dens < eos.density_floor) {
    u.dens = eos.density_floor;
    result = FloorResult::kFloored;
  }
  const Real ek = kinetic_energy(u);
  const Real p = (eos.gamma - Real(1)) * (u.engy - ek);
  if (!(p >= eos.pressure_floor)) {
    u.engy = ek + eos.pressure_floor / (eos.gamma - Real(1));
    result = FloorResult::kFloored;
  }
  return result;
}

}  // namespace tessera::kernels
