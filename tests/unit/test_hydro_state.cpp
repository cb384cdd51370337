// Unit tests of the ideal-gas state functions of kernels/hydro_state.hpp: EOS conversions,
// the direction rotation, the physical flux and the floors.
#include "tests/unit/hydro_structs.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace tessera::kernels::hydro_test {
namespace {

constexpr Real kNaN = std::numeric_limits<Real>::quiet_NaN();
constexpr Real kInf = std::numeric_limits<Real>::infinity();

// Floors far below the states used here, so that conversions do not touch them.
constexpr EosParams kEos{Real(5) / 3, Real(1e-10), Real(1e-12)};

Real rel_diff(Real a, Real b) {
  const Real scale = std::max(std::fabs(a), std::fabs(b));
  return scale == 0 ? 0 : std::fabs(a - b) / scale;
}

// Random state with density and pressure over four decades and a Mach number below 3.
// The bound on the Mach number matters for the round trip: p is recovered as
// (gamma-1)(E - rho v^2/2), which loses about log10(1 + gamma(gamma-1)M^2/2) digits.
Prim random_state(std::mt19937_64& rng, Real gamma) {
  std::uniform_real_distribution<Real> log_range(-2, 2), unit(-1, 1);
  Prim w;
  w.rho = std::pow(Real(10), log_range(rng));
  w.p = std::pow(Real(10), log_range(rng));
  const Real c = std::sqrt(gamma * w.p / w.rho);
  // Each component below Mach sqrt(3) makes |v| < 3 c.
  for (Real& v : w.v) v = Real(1.7) * c * unit(rng);
  return w;
}

TEST(HydroState, PrimToConsToPrimRoundTripsRandomStates) {
  std::mt19937_64 rng(20240601);
  for (Real gamma : {Real(1.4), Real(5) / 3}) {
    const EosParams eos{gamma, kEos.density_floor, kEos.pressure_floor};
    for (int n = 0; n < 2000; ++n) {
      const Prim w = random_state(rng, gamma);
      const Prim back = cons_to_prim(prim_to_cons(w, gamma), eos);
      // 1e-14: a few ulps for rho and v (one product and one quotient); the pressure
      // loses at most a factor ~10 to the cancellation E - E_kin at Mach < 3.
      EXPECT_LE(rel_diff(back.rho, w.rho), 1e-14) << "state " << n;
      for (int d = 0; d < 3; ++d) EXPECT_LE(rel_diff(back.v[d], w.v[d]), 1e-14) << "state " << n;
      EXPECT_LE(rel_diff(back.p, w.p), 1e-14) << "state " << n;
    }
  }
}

TEST(HydroState, PrimToConsGivesMomentumAndTotalEnergy) {
  const Real gamma = 1.4;
  const Prim w{2.0, {3.0, -1.0, 0.5}, 4.0};
  const Cons u = prim_to_cons(w, gamma);
  EXPECT_DOUBLE_EQ(u.dens, 2.0);
  EXPECT_DOUBLE_EQ(u.mom[0], 6.0);
  EXPECT_DOUBLE_EQ(u.mom[1], -2.0);
  EXPECT_DOUBLE_EQ(u.mom[2], 1.0);
  // E = p/(gamma-1) + rho |v|^2 / 2 = 10 + 10.25.
  EXPECT_DOUBLE_EQ(u.engy, 20.25);
  EXPECT_DOUBLE_EQ(kinetic_energy(u), 10.25);
  EXPECT_DOUBLE_EQ(sound_speed(w, gamma), std::sqrt(1.4 * 4.0 / 2.0));
}

TEST(HydroState, ConsToPrimFloorsReconstructionInputsWithoutTouchingValidOnes) {
  // Negative density and negative internal energy come out at the floors...
  const Cons bad{-1.0, {0.0, 0.0, 0.0}, -5.0};
  const Prim w = cons_to_prim(bad, kEos);
  EXPECT_EQ(w.rho, kEos.density_floor);
  EXPECT_EQ(w.p, kEos.pressure_floor);
  // ...while a valid state keeps its density exactly.
  const Cons good{0.25, {0.0, 0.0, 0.0}, 3.0};
  const Prim g = cons_to_prim(good, kEos);
  EXPECT_EQ(g.rho, 0.25);
  EXPECT_DOUBLE_EQ(g.p, (kEos.gamma - 1) * 3.0);
}

TEST(HydroState, RotateFromInvertsRotateTo) {
  const Prim w{1.0, {0.1, -0.2, 0.3}, 2.0};
  for (int dir = 0; dir < 3; ++dir) {
    const Prim r = rotate_to(w, dir);
    // The face-normal velocity comes first, the rest in cyclic order.
    EXPECT_EQ(r.v[0], w.v[dir]);
    EXPECT_EQ(r.v[1], w.v[(dir + 1) % 3]);
    EXPECT_EQ(r.v[2], w.v[(dir + 2) % 3]);
    EXPECT_EQ(r.rho, w.rho);
    EXPECT_EQ(r.p, w.p);
    // rotate_from applied to a vector in rotated components gives back the original.
    const Cons rc{7.0, {r.v[0], r.v[1], r.v[2]}, 9.0};
    const Cons back = rotate_from(rc, dir);
    for (int d = 0; d < 3; ++d) EXPECT_EQ(back.mom[d], w.v[d]) << "dir " << dir;
    EXPECT_EQ(back.dens, 7.0);
    EXPECT_EQ(back.engy, 9.0);
  }
}

TEST(HydroState, RotatedPhysicalFluxIsTheFluxAlongEachDirection) {
  const Real gamma = 1.4;
  const Prim w{1.5, {0.7, -0.4, 0.9}, 2.5};
  const Cons u = prim_to_cons(w, gamma);
  for (int dir = 0; dir < 3; ++dir) {
    const Prim r = rotate_to(w, dir);
    const Cons f = rotate_from(physical_flux(r, prim_to_cons(r, gamma)), dir);
    // F_dir = (rho v_dir, rho v v_dir + p e_dir, (E + p) v_dir).
    EXPECT_DOUBLE_EQ(f.dens, w.rho * w.v[dir]);
    for (int d = 0; d < 3; ++d)
      EXPECT_DOUBLE_EQ(f.mom[d], w.rho * w.v[d] * w.v[dir] + (d == dir ? w.p : 0))
          << "dir " << dir << " component " << d;
    EXPECT_DOUBLE_EQ(f.engy, (u.engy + w.p) * w.v[dir]);
  }
}

TEST(HydroState, PhysicalFluxOfStateAtRestIsPurePressure) {
  const Prim w{0.3, {0.0, 0.0, 0.0}, 1.7};
  const Cons f = physical_flux(w, prim_to_cons(w, 1.4));
  EXPECT_EQ(f.dens, 0.0);
  EXPECT_EQ(f.mom[0], 1.7);
  EXPECT_EQ(f.mom[1], 0.0);
  EXPECT_EQ(f.mom[2], 0.0);
  EXPECT_EQ(f.engy, 0.0);
}

TEST(HydroState, ValidStateIsUntouchedByFloors) {
  Cons u = prim_to_cons({0.8, {1.0, -2.0, 0.5}, 0.6}, kEos.gamma);
  const Cons before = u;
  EXPECT_EQ(apply_floors(u, kEos), FloorResult::kOk);
  EXPECT_EQ(u.dens, before.dens);
  for (int d = 0; d < 3; ++d) EXPECT_EQ(u.mom[d], before.mom[d]);
  EXPECT_EQ(u.engy, before.engy);
}

TEST(HydroState, DensityBelowFloorIsRaisedAndReported) {
  Cons u{0.5 * kEos.density_floor, {0.0, 0.0, 0.0}, 1.0};
  EXPECT_EQ(apply_floors(u, kEos), FloorResult::kFloored);
  EXPECT_EQ(u.dens, kEos.density_floor);
  EXPECT_EQ(u.engy, 1.0);  // pressure (gamma-1) * 1 is far above its floor
  Cons negative{-3.0, {0.0, 0.0, 0.0}, 1.0};
  EXPECT_EQ(apply_floors(negative, kEos), FloorResult::kFloored);
  EXPECT_EQ(negative.dens, kEos.density_floor);
}

TEST(HydroState, PressureBelowFloorIsRaisedKeepingMomentum) {
  // Kinetic energy 0.5 * 4 / 1 = 2 exceeds E = 1: negative internal energy.
  Cons u{1.0, {2.0, 0.0, 0.0}, 1.0};
  EXPECT_EQ(apply_floors(u, kEos), FloorResult::kFloored);
  EXPECT_EQ(u.dens, 1.0);
  EXPECT_EQ(u.mom[0], 2.0);
  const Real p = (kEos.gamma - 1) * (u.engy - kinetic_energy(u));
  // E = 2 + p_floor/(gamma-1) cannot hold p_floor = 1e-12 to better than ulp(2) ~ 4e-16.
  EXPECT_NEAR(p, kEos.pressure_floor, 1e-15);
  // Once floored, the state passes the floors unchanged.
  EXPECT_EQ(apply_floors(u, kEos), FloorResult::kOk);
}

TEST(HydroState, NonFiniteStatesAreReportedUnphysical) {
  for (int var = 0; var < kNumHydroVars; ++var)
    for (Real bad : {kNaN, kInf, -kInf}) {
      Cons u{1.0, {0.1, 0.2, 0.3}, 5.0};
      Real* comp[kNumHydroVars] = {&u.dens, &u.mom[0], &u.mom[1], &u.mom[2], &u.engy};
      *comp[var] = bad;
      EXPECT_EQ(apply_floors(u, kEos), FloorResult::kUnphysical) << "variable " << var;
    }
}

}  // namespace
}  // namespace tessera::kernels::hydro_test
