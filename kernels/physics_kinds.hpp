// The physics a run's equations can be (adiabatic and isothermal hydrodynamics, GLM-MHD),
// their run-time parameters and variable counts: what the physics model (and so every
// problem) needs of the kernels, without the reconstructions and Riemann solvers of the
// solver's scheme (scheme.hpp).
#pragma once

#include <string>

#include "kernels/physics_adiabatic.hpp"
#include "kernels/physics_isothermal.hpp"
#include "kernels/physics_mhd.hpp"

namespace tessera::kernels {

enum class Physics { kAdiabatic, kIsothermal, kMhd };

// Run-time parameters of every physics; the scheme's physics reads its own.
struct PhysicsParams {
  HydroAdiabatic::Params adiabatic;
  HydroIsothermal::Params isothermal;
  MhdGlm::Params mhd;
};

template <class Phys>
TESSERA_HD inline const typename Phys::Params& params_of(const PhysicsParams& p);
template <>
TESSERA_HD inline const HydroAdiabatic::Params& params_of<HydroAdiabatic>(const PhysicsParams& p) {
  return p.adiabatic;
}
template <>
TESSERA_HD inline const HydroIsothermal::Params& params_of<HydroIsothermal>(
    const PhysicsParams& p) {
  return p.isothermal;
}
template <>
TESSERA_HD inline const MhdGlm::Params& params_of<MhdGlm>(const PhysicsParams& p) {
  return p.mhd;
}

inline constexpr int kMaxPassiveScalars = 16;
// The most conserved variables of a cell: MHD's 9 and every passive scalar.
inline constexpr int kMaxVars = MhdGlm::kNumVars + kMaxPassiveScalars;

inline int physics_vars(Physics p) {
  switch (p) {
    case Physics::kIsothermal:
      return HydroIsothermal::kNumVars;
    case Physics::kMhd:
      return MhdGlm::kNumVars;
    default:
      return HydroAdiabatic::kNumVars;
  }
}

// Short name of conserved variable v (error messages): dens, momx, momy, momz, engy
// (adiabatic and MHD), bx, by, bz, psi (MHD), then scalar0, scalar1, ...
inline std::string conserved_name(Physics p, int v) {
  static const char* kNames[9] = {"dens", "momx", "momy", "momz", "engy", "bx", "by", "bz", "psi"};
  const int n = physics_vars(p);
  return v < n ? kNames[v] : "scalar" + std::to_string(v - n);
}

}  // namespace tessera::kernels
