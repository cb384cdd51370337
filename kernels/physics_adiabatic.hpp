// Physics policy: adiabatic (ideal-gas) hydrodynamics, 5 variables.
// Equations: Wang, Abel & Kaehler 2009, eqs. 1-6 (ideal gas, p = (gamma-1) e).
//
// A physics policy is a type with: kNumVars and named indices (conserved and primitive
// share slots: density, velocity/momentum, then the rest), kNumVectors/vector_start (the
// triplets that rotate with the face direction and flip at reflecting walls), Params (its
// run-time parameters), prim_to_cons, cons_to_prim (with the floors), the physical flux
// along the first axis, the signal speeds (CFL, LLF, HLL bounds) and apply_floors. The
// integrators (mol_stages.hpp) and Riemann solvers are written against this interface.
#pragma once

#include "kernels/state.hpp"

namespace tessera::kernels {

struct HydroAdiabatic {
  static constexpr const char* kName = "adiabatic";
  static constexpr int kNumVars = 5;
  // Conserved: density, momentum, total energy. Primitive: density, velocity, pressure.
  enum : int { kDens = 0, kMomX = 1, kMomY = 2, kMomZ = 3, kEngy = 4 };
  enum : int { kRho = 0, kVelX = 1, kPres = 4 };
  // Primitive variables that must stay positive (reconstruction.hpp, ReconPlmMcEp).
  TESSERA_HD static constexpr bool positive_primitive(int v) { return v == kRho || v == kPres; }
  static constexpr int kNumVectors = 1;
  TESSERA_HD static constexpr int vector_start(int) { return kMomX; }
  static constexpr bool kGlm = false;  // no divergence cleaning (physics_mhd.hpp)
  using Vars = State<kNumVars>;

  struct Params {
    Real gamma;
    Real density_floor;
    Real pressure_floor;
  };

  TESSERA_HD static Real kinetic_energy(const Vars& u) {
    return Real(0.5) * (u[kMomX] * u[kMomX] + u[kMomY] * u[kMomY] + u[kMomZ] * u[kMomZ]) / u[kDens];
  }

  TESSERA_HD static Vars prim_to_cons(const Vars& w, const Params& p) {
    Vars u;
    u[kDens] = w[kRho];
    for (int d = 0; d < 3; ++d) u[kMomX + d] = w[kRho] * w[kVelX + d];
    u[kEngy] =
        w[kPres] / (p.gamma - Real(1)) +
        Real(0.5) * w[kRho] *
            (w[kVelX] * w[kVelX] + w[kVelX + 1] * w[kVelX + 1] + w[kVelX + 2] * w[kVelX + 2]);
    return u;
  }

  // Conversion used for reconstruction: floors keep the reconstructed states physical
  // (they do not change the conserved data, which apply_floors handles).
  TESSERA_HD static Vars cons_to_prim(const Vars& u, const Params& p) {
    Vars w;
    w[kRho] = u[kDens] > p.density_floor ? u[kDens] : p.density_floor;
    const Real inv = Real(1) / w[kRho];
    for (int d = 0; d < 3; ++d) w[kVelX + d] = u[kMomX + d] * inv;
    const Real ek =
        Real(0.5) * w[kRho] *
        (w[kVelX] * w[kVelX] + w[kVelX + 1] * w[kVelX + 1] + w[kVelX + 2] * w[kVelX + 2]);
    const Real pres = (p.gamma - Real(1)) * (u[kEngy] - ek);
    w[kPres] = pres > p.pressure_floor ? pres : p.pressure_floor;
    return w;
  }

  TESSERA_HD static Real sound_speed(const Vars& w, const Params& p) {
    return sqrt(p.gamma * w[kPres] / w[kRho]);
  }

  // The fastest wave speed relative to the flow along axis 0 (LLF).
  TESSERA_HD static Real fast_speed(const Vars& w, const Params& p) { return sound_speed(w, p); }

  // Physical flux along axis 0 of a state rotated so that velocity component 0 is normal.
  TESSERA_HD static Vars flux(const Vars& w, const Vars& u, const Params&) {
    Vars f;
    f[kDens] = u[kMomX];
    f[kMomX] = u[kMomX] * w[kVelX] + w[kPres];
    f[kMomY] = u[kMomY] * w[kVelX];
    f[kMomZ] = u[kMomZ] * w[kVelX];
    f[kEngy] = (u[kEngy] + w[kPres]) * w[kVelX];
    return f;
  }

  // Largest |v_d| + c_s of a cell: the signal speed the CFL condition uses.
  TESSERA_HD static Real max_signal_speed(const Vars& w, const Params& p) {
    const Real c = sound_speed(w, p);
    return max_of(fabs(w[kVelX]), max_of(fabs(w[kVelX + 1]), fabs(w[kVelX + 2]))) + c;
  }

  // Einfeldt (1988) bounds from the Roe-averaged state, as in Toro 2009 §10.6
  // (eqs. 10.52-10.53), for states rotated so that velocity component 0 is normal.
  TESSERA_HD static WaveSpeeds hll_speeds(const Vars& l, const Vars& r, const Params& p) {
    const Real sl = sqrt(l[kRho]), sr = sqrt(r[kRho]);
    const Real isum = Real(1) / (sl + sr);
    Real v2 = 0;
    Real vroe[3];
    for (int d = 0; d < 3; ++d) {
      vroe[d] = (sl * l[kVelX + d] + sr * r[kVelX + d]) * isum;
      v2 += vroe[d] * vroe[d];
    }
    const Real gm1 = p.gamma - Real(1);
    const Real hl = (p.gamma / gm1) * l[kPres] / l[kRho] +
                    Real(0.5) * (l[kVelX] * l[kVelX] + l[kVelX + 1] * l[kVelX + 1] +
                                 l[kVelX + 2] * l[kVelX + 2]);
    const Real hr = (p.gamma / gm1) * r[kPres] / r[kRho] +
                    Real(0.5) * (r[kVelX] * r[kVelX] + r[kVelX + 1] * r[kVelX + 1] +
                                 r[kVelX + 2] * r[kVelX + 2]);
    const Real hroe = (sl * hl + sr * hr) * isum;
    const Real croe = sqrt(max_of(gm1 * (hroe - Real(0.5) * v2), Real(0)));
    const Real cl = sound_speed(l, p), cr = sound_speed(r, p);
    return {min_of(l[kVelX] - cl, vroe[0] - croe), max_of(r[kVelX] + cr, vroe[0] + croe)};
  }

  // Applies the density and pressure floors to an updated conserved state. A state that
  // is not finite cannot be repaired by floors: the caller aborts the run with it.
  TESSERA_HD static FloorResult apply_floors(Vars& u, const Params& p) {
    if (!is_finite(u)) return FloorResult::kUnphysical;
    FloorResult result = FloorResult::kOk;
    if (u[kDens] < p.density_floor) {
      u[kDens] = p.density_floor;
      result = FloorResult::kFloored;
    }
    const Real ek = kinetic_energy(u);
    const Real pres = (p.gamma - Real(1)) * (u[kEngy] - ek);
    if (!(pres >= p.pressure_floor)) {
      u[kEngy] = ek + p.pressure_floor / (p.gamma - Real(1));
      result = FloorResult::kFloored;
    }
    return result;
  }
};

}  // namespace tessera::kernels
