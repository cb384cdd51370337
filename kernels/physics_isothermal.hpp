// Physics policy: isothermal hydrodynamics, 4 variables (density, momentum), p = c^2 rho
// with a constant sound speed c (hydro.iso_sound_speed). The energy equation is replaced
// by the isothermal closure (e.g. Toro 2009 §1.6.2; LeVeque 2002 §14.6), so there is no
// pressure floor and no energy variable. Interface: see physics_adiabatic.hpp.
#pragma once

#include "kernels/state.hpp"

namespace tessera::kernels {

struct HydroIsothermal {
  static constexpr const char* kName = "isothermal";
  static constexpr int kNumVars = 4;
  enum : int { kDens = 0, kMomX = 1, kMomY = 2, kMomZ = 3 };
  enum : int { kRho = 0, kVelX = 1 };
  // Primitive variables that must stay positive (reconstruction.hpp, ReconPlmMcEp).
  TESSERA_HD static constexpr bool positive_primitive(int v) { return v == kRho; }
  static constexpr int kNumVectors = 1;
  TESSERA_HD static constexpr int vector_start(int) { return kMomX; }
  static constexpr bool kGlm = false;  // no divergence cleaning (physics_mhd.hpp)
  using Vars = State<kNumVars>;

  struct Params {
    Real sound_speed;
    Real density_floor;
  };

  TESSERA_HD static Vars prim_to_cons(const Vars& w, const Params&) {
    Vars u;
    u[kDens] = w[kRho];
    for (int d = 0; d < 3; ++d) u[kMomX + d] = w[kRho] * w[kVelX + d];
    return u;
  }

  TESSERA_HD static Vars cons_to_prim(const Vars& u, const Params& p) {
    Vars w;
    w[kRho] = u[kDens] > p.density_floor ? u[kDens] : p.density_floor;
    const Real inv = Real(1) / w[kRho];
    for (int d = 0; d < 3; ++d) w[kVelX + d] = u[kMomX + d] * inv;
    return w;
  }

  TESSERA_HD static Real sound_speed(const Vars&, const Params& p) { return p.sound_speed; }
  // The fastest wave speed relative to the flow along axis 0 (LLF).
  TESSERA_HD static Real fast_speed(const Vars& w, const Params& p) { return sound_speed(w, p); }

  // Physical flux along axis 0: (rho v_x, rho v_x^2 + c^2 rho, rho v_y v_x, rho v_z v_x).
  TESSERA_HD static Vars flux(const Vars& w, const Vars& u, const Params& p) {
    Vars f;
    f[kDens] = u[kMomX];
    f[kMomX] = u[kMomX] * w[kVelX] + p.sound_speed * p.sound_speed * w[kRho];
    f[kMomY] = u[kMomY] * w[kVelX];
    f[kMomZ] = u[kMomZ] * w[kVelX];
    return f;
  }

  TESSERA_HD static Real max_signal_speed(const Vars& w, const Params& p) {
    return max_of(fabs(w[kVelX]), max_of(fabs(w[kVelX + 1]), fabs(w[kVelX + 2]))) + p.sound_speed;
  }

  // Einfeldt-type bounds (Einfeldt 1988; Toro 2009 eqs. 10.52-10.53) with the constant
  // isothermal sound speed: the Roe average of an isothermal gas is the sqrt(rho)-weighted
  // velocity with sound speed c (Roe 1981 applied to p = c^2 rho).
  TESSERA_HD static WaveSpeeds hll_speeds(const Vars& l, const Vars& r, const Params& p) {
    const Real sl = sqrt(l[kRho]), sr = sqrt(r[kRho]);
    const Real vroe = (sl * l[kVelX] + sr * r[kVelX]) / (sl + sr);
    const Real c = p.sound_speed;
    return {min_of(l[kVelX] - c, vroe - c), max_of(r[kVelX] + c, vroe + c)};
  }

  // Density floor only (the pressure follows the density). A state that is not finite
  // cannot be repaired: the caller aborts the run with it.
  TESSERA_HD static FloorResult apply_floors(Vars& u, const Params& p) {
    if (!is_finite(u)) return FloorResult::kUnphysical;
    if (u[kDens] < p.density_floor) {
      u[kDens] = p.density_floor;
      return FloorResult::kFloored;
    }
    return FloorResult::kOk;
  }
};

}  // namespace tessera::kernels
