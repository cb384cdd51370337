#include "tessera/physics/model.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/physics/fields.hpp"

namespace tessera::physics {

namespace {

using kernels::HydroAdiabatic;
using kernels::HydroIsothermal;
using kernels::MhdGlm;

// Calls f(Phys{}) for the model's physics policy.
template <class F>
decltype(auto) with_physics(kernels::Physics p, F&& f) {
  if (p == kernels::Physics::kIsothermal) return f(HydroIsothermal{});
  if (p == kernels::Physics::kMhd) return f(MhdGlm{});
  return f(HydroAdiabatic{});
}

kernels::Physics physics_of(const Params& p) {
  const std::string& eos = p.string("hydro.eos");
  const std::string& riemann = p.string("hydro.riemann");
  if (p.boolean("mhd.enabled")) {
    if (eos != "adiabatic")
      throw Error(ErrorKind::kInput,
                  "mhd.enabled = true needs hydro.eos = \"adiabatic\" (got \"" + eos +
                      "\"): the MHD equations have an energy equation; for nearly isothermal "
                      "magnetised gas use a gamma close to 1 (e.g. hydro.gamma = 1.001)");
    if (p.string("hydro.scheme") == "relaxing_tvd")
      throw Error(ErrorKind::kInput,
                  "hydro.scheme = \"relaxing_tvd\" solves the hydrodynamic equations only, and "
                  "mhd.enabled = true: use hydro.scheme = \"mol\" for MHD (GLM-MHD with the "
                  "HLL-family solvers)");
    if (riemann == "hllc")
      throw Error(ErrorKind::kInput,
                  "hydro.riemann = \"hllc\" is a hydrodynamics solver and mhd.enabled = true: "
                  "use \"hlld\" (the MHD counterpart of HLLC; \"auto\" chooses it), \"hll\" or "
                  "\"llf\"");
    if (p.string("hydro.reconstruction") == "ppm_char")
      throw Error(ErrorKind::kInput,
                  "hydro.reconstruction = \"ppm_char\" limits the parabolas in the "
                  "characteristic variables of hydrodynamics, and mhd.enabled = true: use "
                  "\"ppm\" (limited in primitive variables) for MHD");
    return kernels::Physics::kMhd;
  }
  if (riemann == "hlld")
    throw Error(ErrorKind::kInput,
                "hydro.riemann = \"hlld\" needs mhd.enabled = true (HLLD solves the MHD Riemann "
                "problem); for hydrodynamics use \"hllc\" (\"auto\" chooses it), \"hll\" or "
                "\"llf\"");
  return eos == "isothermal" ? kernels::Physics::kIsothermal : kernels::Physics::kAdiabatic;
}

}  // namespace

Model::Model(const Params& p)
    : physics_(physics_of(p)),
      scalars_(static_cast<int>(p.integer("hydro.passive_scalars"))),
      glm_alpha_(p.real("mhd.glm_alpha")) {
  params_.adiabatic = {Real(p.real("hydro.gamma")), Real(p.real("hydro.density_floor")),
                       Real(p.real("hydro.pressure_floor"))};
  params_.isothermal = {Real(p.real("hydro.iso_sound_speed")), Real(p.real("hydro.density_floor"))};
  // ch and the psi decay are set each step (Simulation, HydroPass).
  params_.mhd = {params_.adiabatic.gamma, params_.adiabatic.density_floor,
                 params_.adiabatic.pressure_floor, Real(1), Real(1)};
}

std::string Model::describe() const {
  std::string s;
  if (has_magnetic_field())
    s = strprintf(
        "ideal MHD with GLM divergence cleaning (gamma = %.9g, parabolic cleaning alpha = %.9g)",
        double(params_.mhd.gamma), glm_alpha_);
  else if (has_energy())
    s = strprintf("adiabatic hydrodynamics (gamma = %.9g)", double(params_.adiabatic.gamma));
  else
    s = strprintf("isothermal hydrodynamics (sound speed %.9g)",
                  double(params_.isothermal.sound_speed));
  if (scalars_ > 0) s += strprintf(", %d passive scalar%s", scalars_, scalars_ > 1 ? "s" : "");
  return s;
}

mesh::FieldRegistry Model::fields() const {
  mesh::FieldRegistry f =
      has_magnetic_field() ? mhd_fields(scalars_) : hydro_fields(has_energy(), scalars_);
  // Limited-linear prolongation of the conserved variables keeps each child's density and
  // total energy positive, but not its pressure: where the kinetic (or magnetic) energy
  // dominates, a child's m^2 / (2 rho), from separately interpolated momentum and density,
  // can exceed its interpolated energy. The coarse cells whose children would be
  // unphysical give them their own value (mesh/prolongation.cpp, enforce_admissible).
  mesh::AdmissibleState check;
  check.on = true;
  check.energy = has_energy();
  check.field = has_magnetic_field();
  if (check.energy) {
    check.gamma_minus_1 = params_.adiabatic.gamma - Real(1);
    check.pressure_floor = params_.adiabatic.pressure_floor;
  }
  f.set_admissible(check);
  return f;
}

void Model::to_conserved(const FlowState& f, Real* u) const {
  with_physics(physics_, [&](auto phys) {
    using P = decltype(phys);
    typename P::Vars w;
    w[P::kRho] = Real(f.rho);
    for (int d = 0; d < 3; ++d) w[P::kVelX + d] = Real(f.v[d]);
    if constexpr (!std::is_same_v<P, HydroIsothermal>) w[P::kPres] = Real(f.p);
    if constexpr (std::is_same_v<P, MhdGlm>) {
      for (int d = 0; d < 3; ++d) w[P::kBx + d] = Real(f.B[d]);
      w[P::kPsi] = 0;
    }
    const auto c = P::prim_to_cons(w, kernels::params_of<P>(params_));
    for (int v = 0; v < P::kNumVars; ++v) u[v] = c[v];
  });
  for (int i = 0; i < scalars_; ++i) u[scalar_index(i)] = Real(f.rho * f.s[i]);
}

void Model::to_primitive(const Real* u, std::size_t stride, Real* w) const {
  with_physics(physics_, [&](auto phys) {
    using P = decltype(phys);
    typename P::Vars c;
    for (int v = 0; v < P::kNumVars; ++v) c[v] = u[v * stride];
    const auto x = P::cons_to_prim(c, kernels::params_of<P>(params_));
    for (int v = 0; v < P::kNumVars; ++v) w[v] = x[v];
  });
  const Real inv = Real(1) / w[0];
  for (int i = 0; i < scalars_; ++i) w[scalar_index(i)] = u[scalar_index(i) * stride] * inv;
}

double Model::pressure(const Real* w) const {
  static_assert(int(HydroAdiabatic::kPres) == int(MhdGlm::kPres));
  if (has_energy()) return w[HydroAdiabatic::kPres];
  const double c = params_.isothermal.sound_speed;
  return c * c * w[HydroIsothermal::kRho];
}

double Model::max_signal_speed(const Real* u, std::size_t stride) const {
  return with_physics(physics_, [&](auto phys) {
    using P = decltype(phys);
    const auto& prm = kernels::params_of<P>(params_);
    typename P::Vars c;
    for (int v = 0; v < P::kNumVars; ++v) c[v] = u[v * stride];
    return double(P::max_signal_speed(P::cons_to_prim(c, prm), prm));
  });
}

double Model::interface_signal_speed(const Real* a, const Real* b, std::size_t stride,
                                     int dir) const {
  const double cells = std::max(max_signal_speed(a, stride), max_signal_speed(b, stride));
  return with_physics(physics_, [&](auto phys) {
    using P = decltype(phys);
    if constexpr (std::is_same_v<P, MhdGlm>) {
      return cells;
    } else {
      const auto& prm = kernels::params_of<P>(params_);
      typename P::Vars ca, cb;
      for (int v = 0; v < P::kNumVars; ++v) ca[v] = a[v * stride], cb[v] = b[v * stride];
      const auto wl = P::cons_to_prim(ca, prm), wr = P::cons_to_prim(cb, prm);
      const double ul = wl[P::kVelX + dir], ur = wr[P::kVelX + dir];
      if constexpr (std::is_same_v<P, HydroIsothermal>) {
        const double c = prm.sound_speed;
        const double star = 0.5 * (ul + ur) + 0.5 * c * std::log(double(wl[P::kRho]) / wr[P::kRho]);
        return std::max(cells, std::abs(star) + c);
      } else {
        const double g = prm.gamma, z = (g - 1) / (2 * g);
        const double pl = wl[P::kPres], pr = wr[P::kPres];
        const double cl = std::sqrt(g * pl / wl[P::kRho]), cr = std::sqrt(g * pr / wr[P::kRho]);
        const double num = cl + cr - 0.5 * (g - 1) * (ur - ul);
        if (!(num > 0)) return cells;  // the two rarefactions open a vacuum: no star state
        const double ps = std::pow(num / (cl / std::pow(pl, z) + cr / std::pow(pr, z)), 1 / z);
        const double plr = std::pow(pl / pr, z);
        const double us = (plr * ul / cl + ur / cr + 2 * (plr - 1) / (g - 1)) / (plr / cl + 1 / cr);
        const double cs = std::max(cl * std::pow(ps / pl, z), cr * std::pow(ps / pr, z));
        const double star = std::abs(us) + cs;
        return std::isfinite(star) ? std::max(cells, star) : cells;
      }
    }
  });
}

kernels::FloorResult Model::apply_floors(Real* u) const {
  return with_physics(physics_, [&](auto phys) {
    using P = decltype(phys);
    typename P::Vars c;
    for (int v = 0; v < P::kNumVars; ++v) c[v] = u[v];
    kernels::FloorResult r = P::apply_floors(c, kernels::params_of<P>(params_));
    for (int v = 0; v < P::kNumVars; ++v) u[v] = c[v];
    for (int i = 0; i < scalars_; ++i)
      if (!std::isfinite(u[scalar_index(i)])) r = kernels::FloorResult::kUnphysical;
    return r;
  });
}

}  // namespace tessera::physics
