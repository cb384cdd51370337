// The run-time scheme choice (physics x reconstruction x Riemann solver x integrator) and
// the one place that maps it to template instantiations: dispatch_scheme, used by the CPU
// loops (mol_cpu.cpp) and the device launches (mol_cuda.cuh) alike.
#pragma once

#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/group_layout.hpp"
#include "kernels/physics_kinds.hpp"
#include "kernels/reconstruction.hpp"
#include "kernels/reconstruction_ppm.hpp"
#include "kernels/reconstruction_ppm_char.hpp"
#include "kernels/riemann_hll.hpp"
#include "kernels/riemann_hllc.hpp"
#include "kernels/riemann_hlld.hpp"
#include "kernels/riemann_llf.hpp"

namespace tessera::kernels {

enum class Reconstruction { kPcm, kPlmMinmod, kPlmMc, kPlmVanLeer, kPlmMcEp, kPpm, kPpmChar };

inline bool is_ppm(Reconstruction r) {
  return r == Reconstruction::kPpm || r == Reconstruction::kPpmChar;
}
// HLLC serves hydrodynamics only, HLLD MHD only (supports_riemann).
enum class RiemannSolver { kHll, kHllc, kLlf, kHlld };

inline bool supports_riemann(Physics p, RiemannSolver r) {
  if (r == RiemannSolver::kHllc) return p != Physics::kMhd;
  if (r == RiemannSolver::kHlld) return p == Physics::kMhd;
  return true;
}

struct Scheme {
  Reconstruction recon = Reconstruction::kPlmMc;
  RiemannSolver riemann = RiemannSolver::kHllc;
  Integrator integrator = Integrator::kRk2;  // with recon, sets the ghost width (ghost_width)
  Physics physics = Physics::kAdiabatic;
};

// Cells the scheme's reconstruction reads on each side of a face (its kReach).
inline int recon_reach(const Scheme& s) {
  static_assert(ReconPcm::kReach == 1 && ReconPlmMcEp::kReach == 3 && ReconPpm::kReach == 3 &&
                ReconPpmChar::kReach == 3);
  if (s.recon == Reconstruction::kPcm) return 1;
  return s.recon == Reconstruction::kPlmMcEp || is_ppm(s.recon) ? 3 : 2;
}

// Ghost layers of the scheme's input box (group_layout.hpp; PCM gets PLM's boxes).
inline int ghost_width(const Scheme& s) {
  return ghost_width(s.integrator, recon_reach(s),
                     is_ppm(s.recon) ? ReconPpm::Vl2Predictor::kReach : 1);
}

// How far a flag of FOFC's correcting pass reaches into a group (group_layout.hpp).
inline int flag_reach(const Scheme& s) {
  return flag_reach(s.integrator, recon_reach(s));
}

// What one step of the patch-group solver needs besides the data.
struct MolParams {
  PhysicsParams phys;
  Real dt_over_dx;
  int scalars = 0;  // passive scalars after the physics' variables
  // First-order flux correction, detecting pass (mol_stages.hpp): a cell that the step
  // leaves unphysical is flagged, not floored.
  bool flag_unphysical = false;
  // Whether the first stage's state (rk2's u1, vl2's half step) is floored. With the
  // correction it is not: its reconstruction floors the primitives it reads, and a floor
  // there would create mass or energy unseen; the final state is checked instead.
  bool floor_first_stage = true;
};

// Conserved variables of the solver's boxes: the physics' then the passive scalars.
inline int solver_vars(const Scheme& s, int scalars) {
  return physics_vars(s.physics) + scalars;
}

// Integrator tags; their stage bodies are in mol_stages.hpp.
struct IntegratorRk2;
struct IntegratorVl2;

template <class... T>
struct Types {};

// Calls f(Types<Phys, Recon, Riemann, IntegratorTag>{}) for the scheme's choice. Only the
// solvers a physics supports are instantiated; the caller has refused the others
// (supports_riemann), which fall back to HLL here.
template <class F>
void dispatch_scheme(const Scheme& s, F&& f) {
  auto with_integrator = [&](auto phys, auto recon, auto riemann) {
    using P = decltype(phys);
    using Rc = decltype(recon);
    using Rs = decltype(riemann);
    if (s.integrator == Integrator::kVl2)
      f(Types<P, Rc, Rs, IntegratorVl2>{});
    else
      f(Types<P, Rc, Rs, IntegratorRk2>{});
  };
  auto with_riemann = [&](auto phys, auto recon) {
    using P = decltype(phys);
    constexpr bool mhd = std::is_same_v<P, MhdGlm>;
    switch (s.riemann) {
      case RiemannSolver::kHllc:
        if constexpr (!mhd) return with_integrator(phys, recon, RiemannHllc<P>{});
        break;
      case RiemannSolver::kHlld:
        if constexpr (mhd) return with_integrator(phys, recon, RiemannHlld<P>{});
        break;
      case RiemannSolver::kLlf:
        return with_integrator(phys, recon, RiemannLlf<P>{});
      case RiemannSolver::kHll:
        break;
    }
    with_integrator(phys, recon, RiemannHll<P>{});
  };
  auto with_recon = [&](auto phys) {
    switch (s.recon) {
      case Reconstruction::kPcm:
        return with_riemann(phys, ReconPcm{});
      case Reconstruction::kPlmMinmod:
        return with_riemann(phys, ReconPlm<LimiterMinmod>{});
      case Reconstruction::kPlmMc:
        return with_riemann(phys, ReconPlm<LimiterMc>{});
      case Reconstruction::kPlmVanLeer:
        return with_riemann(phys, ReconPlm<LimiterVanLeer>{});
      case Reconstruction::kPlmMcEp:
        return with_riemann(phys, ReconPlmMcEp{});
      case Reconstruction::kPpm:
        return with_riemann(phys, ReconPpm{});
      case Reconstruction::kPpmChar:
        if constexpr (Characteristics<decltype(phys)>::kAvailable)
          return with_riemann(phys, ReconPpmChar{});
        // A run's set-up refuses this with a message (physics_of, src/physics/model.cpp);
        // a caller that skips it must not get another scheme silently.
        throw std::invalid_argument("ppm_char: characteristic limiting is for hydrodynamics");
    }
  };
  switch (s.physics) {
    case Physics::kIsothermal:
      return with_recon(HydroIsothermal{});
    case Physics::kMhd:
      return with_recon(MhdGlm{});
    case Physics::kAdiabatic:
      return with_recon(HydroAdiabatic{});
  }
}

}  // namespace tessera::kernels
