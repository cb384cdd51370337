// Test adapter: adiabatic hydro states as named structs (rho, v, p / dens, mom, engy), so
// that tests read like the equations, over the physics policy's Real u[5]. Every function
// converts and calls the policy (kernels/physics_adiabatic.hpp) or solver under test; tests
// using it live in namespace tessera::kernels::hydro_test, where these names hide the
// policy templates of the same name.
#pragma once

#include "kernels/mol_stages.hpp"
#include "kernels/physics_adiabatic.hpp"
#include "kernels/reconstruction.hpp"
#include "kernels/riemann_hll.hpp"
#include "kernels/riemann_hllc.hpp"
#include "kernels/riemann_llf.hpp"

namespace tessera::kernels::hydro_test {

using P = HydroAdiabatic;
using EosParams = P::Params;
inline constexpr int kNumHydroVars = P::kNumVars;
inline constexpr int kDens = P::kDens, kMomX = P::kMomX, kMomY = P::kMomY, kMomZ = P::kMomZ,
                     kEngy = P::kEngy;

struct Prim {
  Real rho;
  Real v[3];
  Real p;
};
struct Cons {
  Real dens;
  Real mom[3];
  Real engy;
};

inline P::Vars vars(const Prim& w) {
  return {{w.rho, w.v[0], w.v[1], w.v[2], w.p}};
}
inline P::Vars vars(const Cons& u) {
  return {{u.dens, u.mom[0], u.mom[1], u.mom[2], u.engy}};
}
inline Prim prim(const P::Vars& x) {
  return {x[0], {x[1], x[2], x[3]}, x[4]};
}
inline Cons cons(const P::Vars& x) {
  return {x[0], {x[1], x[2], x[3]}, x[4]};
}
inline EosParams eos_of(Real gamma) {
  return {gamma, Real(0), Real(0)};
}

inline Cons prim_to_cons(const Prim& w, Real gamma) {
  return cons(P::prim_to_cons(vars(w), eos_of(gamma)));
}
inline Prim cons_to_prim(const Cons& u, const EosParams& eos) {
  return prim(P::cons_to_prim(vars(u), eos));
}
inline Real sound_speed(const Prim& w, Real gamma) {
  return P::sound_speed(vars(w), eos_of(gamma));
}
inline Real kinetic_energy(const Cons& u) {
  return P::kinetic_energy(vars(u));
}
inline Cons physical_flux(const Prim& w, const Cons& u) {
  return cons(P::flux(vars(w), vars(u), eos_of(Real(1.4))));
}
inline Real max_signal_speed(const Prim& w, Real gamma) {
  return P::max_signal_speed(vars(w), eos_of(gamma));
}
inline WaveSpeeds einfeldt_speeds(const Prim& l, const Prim& r, Real gamma) {
  return P::hll_speeds(vars(l), vars(r), eos_of(gamma));
}
inline Prim rotate_to(const Prim& w, int dir) {
  return prim(kernels::rotate_to<P>(vars(w), dir));
}
inline Cons rotate_from(const Cons& f, int dir) {
  return cons(kernels::rotate_from<P>(vars(f), dir));
}
inline bool is_finite(const Cons& u) {
  return kernels::is_finite(vars(u));
}
inline FloorResult apply_floors(Cons& u, const EosParams& eos) {
  P::Vars x = vars(u);
  const FloorResult r = P::apply_floors(x, eos);
  u = cons(x);
  return r;
}

// The solvers with struct states: RiemannHll::flux(l, r, gamma) and so on.
template <template <class> class Solver>
struct SolverOf {
  static Cons flux(const Prim& l, const Prim& r, Real gamma) {
    return cons(Solver<P>::flux(vars(l), vars(r), eos_of(gamma)));
  }
};
using RiemannHll = SolverOf<kernels::RiemannHll>;
using RiemannHllc = SolverOf<kernels::RiemannHllc>;
using RiemannLlf = SolverOf<kernels::RiemannLlf>;

// Recon::face_states on struct states.
template <class Recon>
void face_states_of(const Prim& wm2, const Prim& wm1, const Prim& w0, const Prim& wp1, Prim& left,
                    Prim& right) {
  P::Vars l, r;
  kernels::face_states<Recon>(vars(wm2), vars(wm1), vars(w0), vars(wp1), l, r);
  left = prim(l), right = prim(r);
}

inline void store_cons(Real* u, int n3, int idx, const Cons& c) {
  store_vars<P>(u, n3, idx, vars(c));
}

}  // namespace tessera::kernels::hydro_test
