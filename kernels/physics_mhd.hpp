// Physics policy: ideal magnetohydrodynamics with GLM divergence cleaning, 9 variables.
//
// Equations: the GLM-MHD system of Dedner et al. 2002 (J. Comput. Phys. 175, 645), in the
// conservative form Wang, Abel & Kaehler 2009 use (§7, eqs. 14-16): conserved
// U = (rho, rho v, E, B, psi) with E = p/(gamma-1) + rho v^2/2 + B^2/2 (units in which
// the magnetic pressure is B^2/2, as Athena++), and fluxes along x
//   F = (rho u, rho u v - Bx B + p_T e_x, (E + p_T) u - Bx (v.B), psi, u B_t - Bx v_t,
//        ch^2 Bx),       p_T = p + B^2/2,
// so that div B is carried away at speed ch by the psi waves instead of accumulating.
// Before the Riemann solver, every face solves the linear (Bn, psi) subsystem exactly
// (Dedner et al. 2002, eq. 41; glm_face), after which both face states share Bn and psi
// and any solver of the 7-wave MHD system (riemann_hll/llf.hpp, riemann_hlld.hpp) gives
// the Bn and psi fluxes psi* and ch^2 Bn*. The parabolic part of the mixed cleaning is
// applied after each step by the exact factor exp(-alpha ch dt / dx) on psi (Mignone &
// Tzeferacos 2010, J. Comput. Phys. 229, 2117, eq. 27 with alpha = dx ch / c_p^2; the
// factor comes in Params::psi_decay, end_of_step).
//
// Primitive variables share the conserved slots: rho, v, p, B, psi.
#pragma once

#include "kernels/state.hpp"

namespace tessera::kernels {

struct MhdGlm {
  static constexpr const char* kName = "mhd";
  static constexpr int kNumVars = 9;
  enum : int { kDens = 0, kMomX = 1, kMomY = 2, kMomZ = 3, kEngy = 4, kBx = 5, kBy = 6, kBz = 7 };
  enum : int { kPsi = 8 };
  enum : int { kRho = 0, kVelX = 1, kPres = 4 };
  // Primitive variables that must stay positive (reconstruction.hpp, ReconPlmMcEp).
  TESSERA_HD static constexpr bool positive_primitive(int v) { return v == kRho || v == kPres; }
  // Momentum and magnetic field rotate with the face direction and flip at walls.
  static constexpr int kNumVectors = 2;
  TESSERA_HD static constexpr int vector_start(int t) { return t == 0 ? kMomX : kBx; }
  static constexpr bool kGlm = true;  // glm_face before the solver, end_of_step after
  using Vars = State<kNumVars>;

  struct Params {
    Real gamma;
    Real density_floor;
    Real pressure_floor;
    Real ch;         // GLM wave speed: the largest fast speed of the step
    Real psi_decay;  // exp(-alpha ch dt / dx): parabolic damping of psi per step (1: none)
  };

  TESSERA_HD static Real kinetic_energy(const Vars& u) {
    return Real(0.5) * (u[kMomX] * u[kMomX] + u[kMomY] * u[kMomY] + u[kMomZ] * u[kMomZ]) / u[kDens];
  }
  // B^2 / 2 (the same slots in conserved and primitive form).
  TESSERA_HD static Real magnetic_energy(const Vars& x) {
    return Real(0.5) * (x[kBx] * x[kBx] + x[kBy] * x[kBy] + x[kBz] * x[kBz]);
  }

  TESSERA_HD static Vars prim_to_cons(const Vars& w, const Params& p) {
    Vars u;
    u[kDens] = w[kRho];
    for (int d = 0; d < 3; ++d) u[kMomX + d] = w[kRho] * w[kVelX + d];
    u[kEngy] =
        w[kPres] / (p.gamma - Real(1)) +
        Real(0.5) * w[kRho] *
            (w[kVelX] * w[kVelX] + w[kVelX + 1] * w[kVelX + 1] + w[kVelX + 2] * w[kVelX + 2]) +
        magnetic_energy(w);
    for (int d = 0; d < 3; ++d) u[kBx + d] = w[kBx + d];
    u[kPsi] = w[kPsi];
    return u;
  }

  // Conversion used for reconstruction; the floors keep the states physical (the conserved
  // data are floored by apply_floors).
  TESSERA_HD static Vars cons_to_prim(const Vars& u, const Params& p) {
    Vars w;
    w[kRho] = u[kDens] > p.density_floor ? u[kDens] : p.density_floor;
    const Real inv = Real(1) / w[kRho];
    for (int d = 0; d < 3; ++d) w[kVelX + d] = u[kMomX + d] * inv;
    const Real ek =
        Real(0.5) * w[kRho] *
        (w[kVelX] * w[kVelX] + w[kVelX + 1] * w[kVelX + 1] + w[kVelX + 2] * w[kVelX + 2]);
    const Real pres = (p.gamma - Real(1)) * (u[kEngy] - ek - magnetic_energy(u));
    w[kPres] = pres > p.pressure_floor ? pres : p.pressure_floor;
    for (int d = 0; d < 3; ++d) w[kBx + d] = u[kBx + d];
    w[kPsi] = u[kPsi];
    return w;
  }

  TESSERA_HD static Real sound_speed(const Vars& w, const Params& p) {
    return sqrt(p.gamma * w[kPres] / w[kRho]);
  }

  // Fast magnetosonic speed along axis `dir` of a primitive state:
  // c_f^2 = (a^2 + b^2 + sqrt((a^2 + b^2)^2 - 4 a^2 b_n^2)) / 2 with a^2 = gamma p / rho,
  // b^2 = B^2 / rho, b_n^2 = B_dir^2 / rho (Miyoshi & Kusano 2005, eq. 3).
  TESSERA_HD static Real fast_speed_along(const Vars& w, int dir, const Params& p) {
    const Real inv = Real(1) / w[kRho];
    const Real a2 = p.gamma * w[kPres] * inv;
    const Real b2 = Real(2) * magnetic_energy(w) * inv;
    const Real bn2 = w[kBx + dir] * w[kBx + dir] * inv;
    const Real s = a2 + b2;
    const Real disc = s * s - Real(4) * a2 * bn2;
    return sqrt(Real(0.5) * (s + sqrt(disc > 0 ? disc : Real(0))));
  }
  // The fastest wave speed relative to the flow along axis 0 (LLF, HLL bounds).
  TESSERA_HD static Real fast_speed(const Vars& w, const Params& p) {
    return fast_speed_along(w, 0, p);
  }

  // Physical flux along axis 0 of a state rotated so that component 0 is normal
  // (Wang et al. 2009 eq. 14 with the GLM terms of Dedner et al. 2002 eq. 24).
  TESSERA_HD static Vars flux(const Vars& w, const Vars& u, const Params& p) {
    const Real bx = w[kBx], by = w[kBy], bz = w[kBz];
    const Real vx = w[kVelX], vy = w[kVelX + 1], vz = w[kVelX + 2];
    const Real pt = w[kPres] + magnetic_energy(w);
    const Real vb = vx * bx + vy * by + vz * bz;
    Vars f;
    f[kDens] = u[kMomX];
    f[kMomX] = u[kMomX] * vx + pt - bx * bx;
    f[kMomY] = u[kMomY] * vx - bx * by;
    f[kMomZ] = u[kMomZ] * vx - bx * bz;
    f[kEngy] = (u[kEngy] + pt) * vx - bx * vb;
    f[kBx] = w[kPsi];
    f[kBy] = by * vx - bx * vy;
    f[kBz] = bz * vx - bx * vz;
    f[kPsi] = p.ch * p.ch * bx;
    return f;
  }

  // Largest |v_d| + c_f,d of a cell: the signal speed of the CFL condition (and of ch).
  TESSERA_HD static Real max_signal_speed(const Vars& w, const Params& p) {
    Real s = 0;
    for (int d = 0; d < 3; ++d) s = max_of(s, fabs(w[kVelX + d]) + fast_speed_along(w, d, p));
    return s;
  }

  // Bounds of the Riemann fan: Miyoshi & Kusano 2005 eq. 67 (Davis 1988),
  // S_L = min(u_L, u_R) - max(c_f,L, c_f,R), S_R = max(u_L, u_R) + max(c_f,L, c_f,R).
  TESSERA_HD static WaveSpeeds hll_speeds(const Vars& l, const Vars& r, const Params& p) {
    const Real cf = max_of(fast_speed(l, p), fast_speed(r, p));
    return {min_of(l[kVelX], r[kVelX]) - cf, max_of(l[kVelX], r[kVelX]) + cf};
  }

  // The (Bn, psi) subsystem of a face solved exactly (Dedner et al. 2002, eq. 41):
  //   Bn* = (Bn_L + Bn_R)/2 - (psi_R - psi_L) / (2 ch),
  //   psi* = (psi_L + psi_R)/2 - ch (Bn_R - Bn_L) / 2,
  // given to both states (rotated so that component 0 is normal).
  TESSERA_HD static void glm_face(Vars& l, Vars& r, const Params& p) {
    const Real bn = Real(0.5) * (l[kBx] + r[kBx]) - Real(0.5) * (r[kPsi] - l[kPsi]) / p.ch;
    const Real psi = Real(0.5) * (l[kPsi] + r[kPsi]) - Real(0.5) * p.ch * (r[kBx] - l[kBx]);
    l[kBx] = r[kBx] = bn;
    l[kPsi] = r[kPsi] = psi;
  }

  // Parabolic damping of psi after the step (Mignone & Tzeferacos 2010, eq. 27).
  TESSERA_HD static void end_of_step(Vars& u, const Params& p) { u[kPsi] = u[kPsi] * p.psi_decay; }

  // The density floor, then the pressure floor on p = (gamma-1)(E - rho v^2/2 - B^2/2): the
  // total energy is raised so that the pressure is the floor; momentum and field are kept.
  // In low-beta regions truncation errors in E are comparable to p, so this floor fires
  // there first. A state that is not finite cannot be repaired: the caller aborts.
  TESSERA_HD static FloorResult apply_floors(Vars& u, const Params& p) {
    if (!is_finite(u)) return FloorResult::kUnphysical;
    FloorResult result = FloorResult::kOk;
    if (u[kDens] < p.density_floor) {
      u[kDens] = p.density_floor;
      result = FloorResult::kFloored;
    }
    const Real e = kinetic_energy(u) + magnetic_energy(u);
    const Real pres = (p.gamma - Real(1)) * (u[kEngy] - e);
    if (!(pres >= p.pressure_floor)) {
      u[kEngy] = e + p.pressure_floor / (p.gamma - Real(1));
      result = FloorResult::kFloored;
    }
    return result;
  }
};

}  // namespace tessera::kernels
