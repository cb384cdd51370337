// PPM limited in characteristic variables (hydro.reconstruction = "ppm_char"), for
// adiabatic and isothermal hydrodynamics: Colella & Woodward 1984 §4, the method of
// Athena++'s "xorder = 3c" (Stone et al. 2020, ApJS 249, 4; Stone et al. 2008, ApJS 178,
// 137, appendix A for the eigenvectors).
//
// Each cell's five-cell stencil of primitive states (rotated so that component 1 is the
// face normal) is projected onto the left eigenvectors of the linearised equations at the
// cell's own state; each characteristic field gets the parabola and the limiter of
// ReconPpm (Colella & Sekora 2008, McCorquodale & Colella 2011); the two limited edges are
// projected back with the right eigenvectors. A jump of one wave family (a shock, a
// contact) then leaves the other fields smooth, so their parabolas are not limited by it,
// and the limiter acts on the family's own amplitude instead of every primitive variable
// it touches: the ringing behind shocks of primitive limiting (docs/validation.md, "PPM
// reconstruction") is what this removes. On data where no limiter acts, both give the same
// edges up to rounding (the interpolant is linear).
//
// Density and pressure edges that come back non-positive fall back to the cell's value
// on both edges of that cell, as ReconPpm's do. Passive scalars are their own
// characteristic field (they move with the flow) and are reconstructed as in ReconPpm.
#pragma once

#include <type_traits>

#include "kernels/physics_adiabatic.hpp"
#include "kernels/physics_isothermal.hpp"
#include "kernels/reconstruction_ppm.hpp"

namespace tessera::kernels {

// The characteristic projections of a physics at a reference state w (primitive,
// rotated: kVelX is the normal velocity). left() maps a primitive vector to the wave
// amplitudes, ordered by speed; right() maps amplitudes back.
template <class Phys>
struct Characteristics;

// Adiabatic: waves u - c, entropy, two shear waves, u + c (Stone et al. 2008, appendix A,
// the hydrodynamic eigenvectors in primitive variables).
template <>
struct Characteristics<HydroAdiabatic> {
  using Phys = HydroAdiabatic;
  using Vars = Phys::Vars;
  static constexpr bool kAvailable = true;
  Real rho_over_2c, inv_c2, c_over_rho, c2;

  TESSERA_HD Characteristics(const Vars& w, const Phys::Params& p) {
    const Real c = Phys::sound_speed(w, p);
    rho_over_2c = Real(0.5) * w[Phys::kRho] / c;
    c2 = c * c;
    inv_c2 = Real(1) / c2;
    c_over_rho = c / w[Phys::kRho];
  }
  TESSERA_HD Vars left(const Vars& x) const {
    const Real dp = Real(0.5) * x[Phys::kPres] * inv_c2, dv = rho_over_2c * x[Phys::kVelX];
    Vars a;
    a[0] = dp - dv;
    a[1] = x[Phys::kRho] - x[Phys::kPres] * inv_c2;
    a[2] = x[Phys::kVelX + 1];
    a[3] = x[Phys::kVelX + 2];
    a[4] = dp + dv;
    return a;
  }
  TESSERA_HD Vars right(const Vars& a) const {
    Vars x;
    x[Phys::kRho] = a[0] + a[1] + a[4];
    x[Phys::kVelX] = (a[4] - a[0]) * c_over_rho;
    x[Phys::kVelX + 1] = a[2];
    x[Phys::kVelX + 2] = a[3];
    x[Phys::kPres] = (a[0] + a[4]) * c2;
    return x;
  }
};

// Isothermal: waves u - c, two shear waves, u + c.
template <>
struct Characteristics<HydroIsothermal> {
  using Phys = HydroIsothermal;
  using Vars = Phys::Vars;
  static constexpr bool kAvailable = true;
  Real rho_over_2c, c_over_rho;

  TESSERA_HD Characteristics(const Vars& w, const Phys::Params& p) {
    const Real c = Phys::sound_speed(w, p);
    rho_over_2c = Real(0.5) * w[Phys::kRho] / c;
    c_over_rho = c / w[Phys::kRho];
  }
  TESSERA_HD Vars left(const Vars& x) const {
    const Real dr = Real(0.5) * x[Phys::kRho], dv = rho_over_2c * x[Phys::kVelX];
    Vars a;
    a[0] = dr - dv;
    a[1] = x[Phys::kVelX + 1];
    a[2] = x[Phys::kVelX + 2];
    a[3] = dr + dv;
    return a;
  }
  TESSERA_HD Vars right(const Vars& a) const {
    Vars x;
    x[Phys::kRho] = a[0] + a[3];
    x[Phys::kVelX] = (a[3] - a[0]) * c_over_rho;
    x[Phys::kVelX + 1] = a[1];
    x[Phys::kVelX + 2] = a[2];
    return x;
  }
};

template <class Phys>
struct Characteristics {
  static constexpr bool kAvailable = false;  // MHD: primitive limiting only (scheme.hpp)
};

struct ReconPpmChar : ReconPpm {
  static constexpr const char* kName = "ppm_char";
  static constexpr bool kCharacteristic = true;

  // Cell 0's limited edges (minus: low face, plus: high face) from the rotated primitive
  // states of cells -2 .. +2, in cell 0's characteristic fields.
  template <class Phys>
  TESSERA_HD static void cell_edges(const typename Phys::Vars& wm2, const typename Phys::Vars& wm1,
                                    const typename Phys::Vars& w0, const typename Phys::Vars& wp1,
                                    const typename Phys::Vars& wp2, const typename Phys::Params& p,
                                    typename Phys::Vars& minus, typename Phys::Vars& plus) {
    using Vars = typename Phys::Vars;
    const Characteristics<Phys> ch(w0, p);
    const Vars am2 = ch.left(wm2), am1 = ch.left(wm1), a0 = ch.left(w0), ap1 = ch.left(wp1),
               ap2 = ch.left(wp2);
    Vars lo, hi;
    for (int v = 0; v < Phys::kNumVars; ++v)
      ReconPpm::parabola(am2[v], am1[v], a0[v], ap1[v], ap2[v], lo[v], hi[v]);
    minus = ch.right(lo);
    plus = ch.right(hi);
    for (int v = 0; v < Phys::kNumVars; ++v)
      if (Phys::positive_primitive(v) && !(minus[v] > 0 && plus[v] > 0)) minus[v] = plus[v] = w0[v];
  }

  // The states at the face between cells -1 and 0 from cells -3 .. +2: the high edge of
  // cell -1, the low edge of cell 0.
  template <class Phys>
  TESSERA_HD static void face_states(const typename Phys::Vars& wm3, const typename Phys::Vars& wm2,
                                     const typename Phys::Vars& wm1, const typename Phys::Vars& w0,
                                     const typename Phys::Vars& wp1, const typename Phys::Vars& wp2,
                                     const typename Phys::Params& p, typename Phys::Vars& left,
                                     typename Phys::Vars& right) {
    typename Phys::Vars unused;
    cell_edges<Phys>(wm3, wm2, wm1, w0, wp1, p, unused, left);
    cell_edges<Phys>(wm2, wm1, w0, wp1, wp2, p, right, unused);
  }
};

// Whether a reconstruction limits in characteristic variables (face_flux, mol_stages.hpp).
template <class Recon, class = void>
struct IsCharacteristic : std::false_type {};
template <class Recon>
struct IsCharacteristic<Recon, std::void_t<decltype(Recon::kCharacteristic)>>
    : std::bool_constant<Recon::kCharacteristic> {};

}  // namespace tessera::kernels
