// Unit tests of the approximate Riemann solvers (HLL, HLLC, LLF) and the Einfeldt wave
// speeds: consistency, mirror symmetry, upwinding, contact resolution.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "kernels/riemann_hll.hpp"
#include "kernels/riemann_hllc.hpp"
#include "kernels/riemann_llf.hpp"
#include "tests/unit/hydro_structs.hpp"

namespace tessera::kernels::hydro_test {
namespace {

constexpr Real kGamma = 1.4;

Prim random_state(std::mt19937_64& rng) {
  std::uniform_real_distribution<Real> log_range(-2, 2), unit(-1, 1);
  Prim w;
  w.rho = std::pow(Real(10), log_range(rng));
  w.p = std::pow(Real(10), log_range(rng));
  const Real c = std::sqrt(kGamma * w.p / w.rho);
  for (Real& v : w.v) v = 3 * c * unit(rng);
  return w;
}

Real signal_speed(const Prim& w) {
  return std::max({std::fabs(w.v[0]), std::fabs(w.v[1]), std::fabs(w.v[2])}) +
         sound_speed(w, kGamma);
}

// Components of a Cons by variable index (dens, mom x/y/z, engy).
Real comp(const Cons& u, int var) {
  return var == 0 ? u.dens : (var == 4 ? u.engy : u.mom[var - 1]);
}

Prim mirror(const Prim& w) {
  Prim m = w;
  m.v[0] = -w.v[0];
  return m;
}

template <class Solver>
class RiemannSolverTest : public ::testing::Test {};

using Solvers = ::testing::Types<RiemannHll, RiemannHllc, RiemannLlf>;
class SolverNames {
 public:
  template <class T>
  static std::string GetName(int) {
    if (std::is_same_v<T, RiemannHll>) return "Hll";
    if (std::is_same_v<T, RiemannHllc>) return "Hllc";
    return "Llf";
  }
};
TYPED_TEST_SUITE(RiemannSolverTest, Solvers, SolverNames);

TYPED_TEST(RiemannSolverTest, FluxOfEqualStatesIsThePhysicalFlux) {
  std::mt19937_64 rng(11);
  for (int n = 0; n < 2000; ++n) {
    const Prim w = random_state(rng);
    const Cons u = prim_to_cons(w, kGamma);
    const Cons exact = physical_flux(w, u);
    const Cons f = TypeParam::flux(w, w, kGamma);
    const Real s = signal_speed(w);
    for (int v = 0; v < kNumHydroVars; ++v) {
      // The solvers add wave-speed-weighted state differences (S * (U_r - U_l), and for
      // HLLC S * (U* - U)) that vanish only to round-off: 1e-13 of |F| + S |U|.
      const Real tol = 1e-13 * (std::fabs(comp(exact, v)) + s * std::fabs(comp(u, v)));
      EXPECT_NEAR(comp(f, v), comp(exact, v), tol) << "state " << n << " variable " << v;
    }
  }
}

TYPED_TEST(RiemannSolverTest, MirroredStatesGiveMirroredFlux) {
  // Swapping left and right and reversing the normal velocity is the reflection x -> -x:
  // the fluxes of mass, energy and transverse momentum change sign, the normal momentum
  // flux does not.
  std::mt19937_64 rng(12);
  for (int n = 0; n < 2000; ++n) {
    const Prim l = random_state(rng), r = random_state(rng);
    const Cons f = TypeParam::flux(l, r, kGamma);
    const Cons g = TypeParam::flux(mirror(r), mirror(l), kGamma);
    const Real s = std::max(signal_speed(l), signal_speed(r));
    const Cons ul = prim_to_cons(l, kGamma), ur = prim_to_cons(r, kGamma);
    for (int v = 0; v < kNumHydroVars; ++v) {
      const Real sign = v == kMomX ? 1 : -1;
      // Same operations on reflected numbers; 1e-13 of the flux scale allows for the
      // solvers' branch on the contact speed sign when it is zero to round-off.
      const Real scale = std::fabs(comp(f, v)) +
                         s * std::max(std::fabs(comp(ul, v)), std::fabs(comp(ur, v))) +
                         (v == kMomX ? std::max(l.p, r.p) : 0);
      EXPECT_NEAR(comp(g, v), sign * comp(f, v), 1e-13 * scale)
          << "states " << n << " variable " << v;
    }
  }
}

// A flow to the right faster than every wave: all signals come from the left, so the
// upwind solvers must give the physical flux of the left state.
template <class Solver>
void expect_supersonic_upwind() {
  std::mt19937_64 rng(13);
  for (int n = 0; n < 500; ++n) {
    Prim l = random_state(rng), r = random_state(rng);
    const Real c = std::max(sound_speed(l, kGamma), sound_speed(r, kGamma));
    l.v[0] = 2 * c + std::fabs(l.v[0]);
    r.v[0] = 2 * c + std::fabs(r.v[0]);
    ASSERT_GT(einfeldt_speeds(l, r, kGamma).left, 0) << "state " << n;
    const Cons ul = prim_to_cons(l, kGamma);
    const Cons exact = physical_flux(l, ul);
    const Cons f = Solver::flux(l, r, kGamma);
    for (int v = 0; v < kNumHydroVars; ++v) {
      // HLL computes b+ F_l / b+ here: a couple of ulps.
      EXPECT_NEAR(comp(f, v), comp(exact, v), 1e-14 * std::fabs(comp(exact, v)))
          << "state " << n << " variable " << v;
    }
  }
}

TEST(Riemann, HllIsUpwindForSupersonicFlow) {
  expect_supersonic_upwind<RiemannHll>();
}
TEST(Riemann, HllcIsUpwindForSupersonicFlow) {
  expect_supersonic_upwind<RiemannHllc>();
}

TEST(Riemann, SupersonicFlowToTheLeftTakesTheRightFlux) {
  const Prim l{1.0, {-5.0, 0.3, 0.1}, 1.0}, r{0.5, {-6.0, -0.2, 0.4}, 0.8};
  const Cons exact = physical_flux(r, prim_to_cons(r, kGamma));
  for (const Cons& f : {RiemannHll::flux(l, r, kGamma), RiemannHllc::flux(l, r, kGamma)})
    for (int v = 0; v < kNumHydroVars; ++v)
      EXPECT_NEAR(comp(f, v), comp(exact, v), 1e-14 * std::fabs(comp(exact, v))) << v;
}

TEST(Riemann, HllcResolvesStationaryContactWhileHllDiffusesIt) {
  // Density jump at rest with equal pressures, transverse velocities different on each
  // side: an exact stationary contact (and shear) wave. Its exact flux is (0, p, 0, 0, 0).
  const Real p = 1.0;
  const Prim l{1.0, {0.0, 0.5, -0.25}, p}, r{0.125, {0.0, -0.3, 0.2}, p};
  const Cons hllc = RiemannHllc::flux(l, r, kGamma);
  // Round-off only: U*_K = rho (S_K - 0) / (S_K - 0) (...) is U_K to an ulp or two of
  // rho S_K, the scale 1e-15 allows.
  const Real s = std::max(signal_speed(l), signal_speed(r));
  EXPECT_NEAR(hllc.dens, 0.0, 1e-15 * l.rho * s);
  EXPECT_NEAR(hllc.mom[0], p, 1e-15 * p);
  EXPECT_NEAR(hllc.mom[1], 0.0, 1e-15 * l.rho * s * s);
  EXPECT_NEAR(hllc.mom[2], 0.0, 1e-15 * l.rho * s * s);
  EXPECT_NEAR(hllc.engy, 0.0, 1e-15 * l.rho * s * s * s);
  // HLL averages the whole fan: mass flux -S_L S_R / (S_R - S_L) * (rho_r - rho_l), about
  // 0.8 here; 0.1 leaves a wide margin while being 14 orders above HLLC's round-off.
  const Cons hll = RiemannHll::flux(l, r, kGamma);
  EXPECT_GT(hll.dens, 0.1);  // mass diffuses from the dense left side to the right
  const Cons llf = RiemannLlf::flux(l, r, kGamma);
  EXPECT_GT(llf.dens, 0.1);
}

TEST(Riemann, HllcAdvectsTransverseVelocityFromTheUpwindSide) {
  // F(rho v_t) = F(rho) * v_t of the side the contact moves away from (Toro eq. 10.39):
  // transverse velocities are passive scalars carried by the mass flux.
  std::mt19937_64 rng(14);
  for (int n = 0; n < 2000; ++n) {
    const Prim l = random_state(rng), r = random_state(rng);
    const Cons f = RiemannHllc::flux(l, r, kGamma);
    const Prim& up = f.dens >= 0 ? l : r;
    const Real s = std::max(signal_speed(l), signal_speed(r));
    const Real rho = std::max(l.rho, r.rho);
    for (int t = 1; t < 3; ++t) {
      // Products of round-off-level mass flux terms: 1e-13 of rho S |v_t|.
      const Real vt = std::max(std::fabs(l.v[t]), std::fabs(r.v[t]));
      EXPECT_NEAR(f.mom[t], f.dens * up.v[t], 1e-13 * rho * s * vt)
          << "states " << n << " component " << t;
    }
  }
}

TEST(Riemann, EinfeldtSpeedsBoundTheSoundSpeedsOfBothStates) {
  std::mt19937_64 rng(15);
  for (int n = 0; n < 2000; ++n) {
    const Prim l = random_state(rng), r = random_state(rng);
    const WaveSpeeds s = einfeldt_speeds(l, r, kGamma);
    EXPECT_LE(s.left, l.v[0] - sound_speed(l, kGamma)) << n;
    EXPECT_GE(s.right, r.v[0] + sound_speed(r, kGamma)) << n;
    EXPECT_LT(s.left, s.right) << n;
  }
}

TEST(Riemann, EinfeldtSpeedsOfEqualStatesAreTheAcousticSpeeds) {
  // The Roe average of a state with itself is that state, so S = v -+ c; 1e-14 relative
  // allows for the enthalpy round trip c^2 = (gamma-1)(H - v^2/2).
  const Prim w{0.7, {0.4, -1.2, 2.0}, 1.3};
  const Real c = sound_speed(w, kGamma);
  const WaveSpeeds s = einfeldt_speeds(w, w, kGamma);
  EXPECT_NEAR(s.left, w.v[0] - c, 1e-14 * c);
  EXPECT_NEAR(s.right, w.v[0] + c, 1e-14 * c);
}

// Pre-shock state `ahead` and the post-shock state behind a right-moving shock of Mach
// number `mach` relative to it (Rankine-Hugoniot, Toro 2009 eqs. 3.51-3.57); `speed`
// receives the shock speed.
Prim shocked_state(const Prim& ahead, Real mach, Real* speed) {
  const Real g = kGamma, m2 = mach * mach;
  const Real s = ahead.v[0] + mach * sound_speed(ahead, g);
  Prim behind = ahead;
  behind.rho = ahead.rho * (g + 1) * m2 / ((g - 1) * m2 + 2);
  behind.p = ahead.p * (2 * g * m2 - (g - 1)) / (g + 1);
  // Mass conservation in the shock frame: rho_b (v_b - S) = rho_a (v_a - S).
  behind.v[0] = s + (ahead.v[0] - s) * ahead.rho / behind.rho;
  *speed = s;
  return behind;
}

TEST(Riemann, EinfeldtRightSpeedIsTheShockSpeedOfAnIsolatedShock) {
  // Roe's linearization satisfies Rankine-Hugoniot, so for two states joined by a single
  // right-moving shock the Roe eigenvalue v + c is the shock speed, and it exceeds
  // v_R + c_R (Lax's condition): S_R must equal the exact shock speed.
  for (Real mach : {1.01, 1.5, 2.0, 5.0, 30.0})
    for (Real v_ahead : {-1.0, 0.0, 0.7}) {
      const Prim ahead{0.3, {v_ahead, 0.2, -0.4}, 0.6};
      Real speed;
      const Prim behind = shocked_state(ahead, mach, &speed);
      const WaveSpeeds s = einfeldt_speeds(behind, ahead, kGamma);
      // Square roots and Roe averages of O(1) numbers: 1e-13 of the fastest speed.
      const Real scale = std::fabs(speed) + signal_speed(behind);
      EXPECT_NEAR(s.right, speed, 1e-13 * scale) << "M=" << mach << " v=" << v_ahead;
      EXPECT_LT(s.left, s.right);
    }
}

TEST(Riemann, HllAndHllcGiveTheExactFluxOfAnIsolatedShock) {
  // With S_R equal to the shock speed, the HLL average of the fan and the HLLC star state
  // (S* = v behind the shock) reproduce the exact Godunov flux: the upwind flux of the
  // side the interface x = 0 lies in, i.e. the post-shock state for a shock moving right.
  for (Real mach : {1.01, 1.5, 2.0, 5.0, 30.0})
    for (Real v_ahead : {0.0, 0.7}) {
      const Prim ahead{0.3, {v_ahead, 0.2, -0.4}, 0.6};
      Real speed;
      const Prim behind = shocked_state(ahead, mach, &speed);
      ASSERT_GT(speed, 0);
      const Cons ub = prim_to_cons(behind, kGamma);
      const Cons exact = physical_flux(behind, ub);
      const Real s = speed + signal_speed(behind);
      for (const Cons& f :
           {RiemannHll::flux(behind, ahead, kGamma), RiemannHllc::flux(behind, ahead, kGamma)})
        for (int v = 0; v < kNumHydroVars; ++v) {
          // Differences of O(S U) terms cancelling to the flux: 1e-12 of |F| + S |U|
          // (strong shocks amplify the round-off of the Roe averages).
          const Real tol = 1e-12 * (std::fabs(comp(exact, v)) + s * std::fabs(comp(ub, v)));
          EXPECT_NEAR(comp(f, v), comp(exact, v), tol) << "M=" << mach << " variable " << v;
        }
    }
}

}  // namespace
}  // namespace tessera::kernels::hydro_test

// Isothermal HLLC (kernels/riemann_hllc.hpp): across a pure shear layer (equal density and
// normal velocity, transverse velocity jumping) the transverse momentum flux is the mass
// flux times the upwind side's transverse velocity, which HLL smears.
namespace tessera::kernels {
namespace {

TEST(IsothermalHllc, ShearLayerTakesTheUpwindTransverseVelocity) {
  using P = HydroIsothermal;
  const P::Params prm{Real(1), Real(1e-10)};
  for (const Real vn : {Real(0.5), Real(-0.5)}) {
    const P::Vars l{{Real(1), vn, Real(1), Real(0.25)}}, r{{Real(1), vn, Real(-1), Real(-0.75)}};
    const P::Vars f = RiemannHllc<P>::flux(l, r, prm);
    const P::Vars& up = vn > 0 ? l : r;
    EXPECT_DOUBLE_EQ(f[P::kDens], vn);
    EXPECT_DOUBLE_EQ(f[P::kMomX], vn * vn + 1);
    EXPECT_DOUBLE_EQ(f[P::kMomY], vn * up[P::kVelX + 1]);
    EXPECT_DOUBLE_EQ(f[P::kMomZ], vn * up[P::kVelX + 2]);
    const P::Vars h = RiemannHll<P>::flux(l, r, prm);
    EXPECT_GT(std::fabs(h[P::kMomY] - f[P::kMomY]), 0.1) << "HLL smears the shear layer";
  }
}

TEST(IsothermalHllc, SupersonicFlowTakesTheUpwindPhysicalFlux) {
  using P = HydroIsothermal;
  const P::Params prm{Real(1), Real(1e-10)};
  const P::Vars l{{Real(2), Real(3), Real(0.5), Real(0)}}, r{{Real(1), Real(3), Real(0), Real(1)}};
  const P::Vars f = RiemannHllc<P>::flux(l, r, prm);
  const P::Vars phys = P::flux(l, P::prim_to_cons(l, prm), prm);
  for (int v = 0; v < P::kNumVars; ++v) EXPECT_EQ(f[v], phys[v]);
}

}  // namespace
}  // namespace tessera::kernels
