// The run's equations, chosen at run time (hydro.eos, mhd.enabled, hydro.passive_scalars): which
// physics policy of kernels/ advances the data, its parameters, its fields, and the host-
// side conversions that problems, outputs, flagging and the time step use. Everything
// outside kernels/ that needs to know the equations asks this class.
#pragma once

#include <array>
#include <cstddef>
#include <string>

#include "kernels/physics_kinds.hpp"
#include "tessera/core/params.hpp"
#include "tessera/mesh/fields.hpp"

namespace tessera::physics {

// A point of a flow as problems describe it, independent of the equations: the model
// turns it into its conserved variables (the pressure is ignored by isothermal gas, the
// magnetic field by hydrodynamics; the passive-scalar concentrations s_i fill the scalars
// the run has). Units of B: magnetic pressure B^2/2.
struct FlowState {
  double rho = 0;
  std::array<double, 3> v{};
  double p = 0;
  std::array<double, 3> B{};
  std::array<double, kernels::kMaxPassiveScalars> s{};
};

class Model {
 public:
  // From the validated [hydro] and [mhd] keys: eos, gamma, iso_sound_speed, floors,
  // passive_scalars, mhd.enabled, mhd.glm_alpha. Throws Error(kInput) for a combination
  // the equations do not have (MHD with isothermal gas, HLLC with MHD, HLLD without).
  explicit Model(const Params& params);

  kernels::Physics physics() const { return physics_; }
  const kernels::PhysicsParams& params() const { return params_; }
  int num_scalars() const { return scalars_; }
  int num_physics_vars() const { return kernels::physics_vars(physics_); }
  int num_vars() const { return num_physics_vars() + scalars_; }
  bool has_energy() const { return physics_ != kernels::Physics::kIsothermal; }
  bool has_magnetic_field() const { return physics_ == kernels::Physics::kMhd; }
  // The parabolic cleaning parameter alpha of mhd.glm_alpha (psi decays by
  // exp(-alpha ch dt / dx) per step).
  double glm_alpha() const { return glm_alpha_; }
  // Index of conserved variable: density 0, momentum 1-3, energy 4 (adiabatic, MHD),
  // magnetic field 5-7 and psi 8 (MHD), then the passive scalars.
  int scalar_index(int i) const { return num_physics_vars() + i; }
  // "adiabatic hydrodynamics (gamma = 1.4)", "... , 2 passive scalars", "ideal MHD ...".
  std::string describe() const;
  // The fields of the patch pool (mesh/fields.hpp).
  mesh::FieldRegistry fields() const;

  // u[v], v < num_vars(): the conserved state of a flow state.
  void to_conserved(const FlowState& f, Real* u) const;
  // One cell: conserved u[v * stride] -> primitive w[v] in pool order (density, velocity,
  // pressure for adiabatic gas, scalar concentrations), with the solver's floors.
  void to_primitive(const Real* u, std::size_t stride, Real* w) const;
  // Gas pressure of a primitive state (pool order): p, or c^2 rho for isothermal gas.
  double pressure(const Real* w) const;
  // Largest |v_d| + c_s (c_f for MHD) of one cell's conserved u[v * stride] (the CFL speed).
  double max_signal_speed(const Real* u, std::size_t stride) const;
  // The signal speed of the Riemann problem between two cells a (left) and b (right)
  // neighbouring along `dir` (conserved states u[v * stride]): at least each cell's
  // max_signal_speed, and |u*| + c* of the star states in the two-rarefaction
  // approximation (Toro 2009 §9.4.1, eqs. 9.33-9.36; isothermal gas: u* = (u_a + u_b) / 2 +
  // c ln(rho_a / rho_b) / 2, exact for two rarefactions). A discontinuity of fluid at rest
  // has cells moving at u* within the first step, faster than c alone: a time step from
  // the cells' own speeds would be too long (MHD: the cells' fast speeds only).
  double interface_signal_speed(const Real* a, const Real* b, std::size_t stride, int dir) const;
  // The solver's floors on a contiguous conserved state u[v]; kUnphysical when not finite.
  kernels::FloorResult apply_floors(Real* u) const;

 private:
  kernels::Physics physics_;
  kernels::PhysicsParams params_{};
  int scalars_ = 0;
  double glm_alpha_ = 0;
};

}  // namespace tessera::physics
