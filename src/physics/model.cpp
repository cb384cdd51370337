#include "tessera/physics/model.hpp"

#include <type_traits>

#include "tessera/core/log.hpp"

namespace tessera::physics {

namespace {

using kernels::HydroAdiabatic;
using kernels::HydroIsothermal;

// Calls f(Phys{}) for the model's physics policy.
template <class F>
decltype(auto) with_physics(kernels::Physics p, F&& f) {
  if (p == kernels::Physics::kIsothermal) return f(HydroIsothermal{});
  return f(HydroAdiabatic{});
}

}  // namespace

Model::Model(const Params& p)
    : physics_(p.string("hydro.eos") == "isothermal" ? kernels::Physics::kIsothermal
                                                     : kernels::Physics::kAdiabatic),
      scalars_(static_cast<int>(p.integer("hydro.passive_scalars"))) {
  params_.adiabatic = {Real(p.real("hydro.gamma")), Real(p.real("hydro.density_floor")),
                       Real(p.real("hydro.pressure_floor"))};
  params_.isothermal = {Real(p.real("hydro.iso_sound_speed")), Real(p.real("hydro.density_floor"))};
}

std::string Model::describe() const {
  std::string s = has_energy() ? strprintf("adiabatic hydrodynamics (gamma = %.9g)",
                                           double(params_.adiabatic.gamma))
                               : strprintf("isothermal hydrodynamics (sound speed %.9g)",
                                           double(params_.isothermal.sound_speed));
  if (scalars_ > 0) s += strprintf(", %d passive scalar%s", scalars_, scalars_ > 1 ? "s" : "");
  return s;
}

mesh::FieldRegistry Model::fields() const {
  return mesh::hydro_fields(has_energy(), scalars_);
}

void Model::to_conserved(const FlowState& f, Real* u) const {
  with_physics(physics_, [&](auto phys) {
    using P = decltype(phys);
    typename P::Vars w;
    w[P::kRho] = Real(f.rho);
    for (int d = 0; d < 3; ++d) w[P::kVelX + d] = Real(f.v[d]);
    if constexpr (std::is_same_v<P, HydroAdiabatic>) w[P::kPres] = Real(f.p);
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
