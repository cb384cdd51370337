// Unit tests of the gravity source terms (kernels/gravity.hpp), called on the host: the
// kick's momentum and energy change against a hand computation, the thermal energy it
// leaves untouched, and the central-difference acceleration.
#include "kernels/gravity.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace tessera::kernels {
namespace {

TEST(GravityKick, MomentumAndEnergyChangeByHandComputation) {
  // A cell with an asymmetric momentum and acceleration, stored with stride 3 to catch a
  // wrong stride.
  constexpr std::size_t s = 3;
  Real u[5 * s] = {};
  const Real rho = 2.0, m[3] = {0.4, -1.0, 0.25}, e = 7.0;
  u[0] = rho;
  for (int d = 0; d < 3; ++d) u[(1 + d) * s] = m[d];
  u[4 * s] = e;
  const Real g[3] = {0.5, 3.0, -2.0}, dt = 0.1;
  gravity_kick(u, s, g, dt, true);
  double ek0 = 0, ek1 = 0;
  for (int d = 0; d < 3; ++d) {
    const double m1 = m[d] + dt * rho * g[d];  // m += dt rho g
    EXPECT_DOUBLE_EQ(u[(1 + d) * s], m1) << "momentum " << d;
    ek0 += m[d] * m[d] / (2 * rho);
    ek1 += m1 * m1 / (2 * rho);
  }
  EXPECT_DOUBLE_EQ(u[0], rho);  // no source for the density
  // E changes by the change of the kinetic energy: the thermal energy is untouched.
  EXPECT_NEAR(u[4 * s] - e, ek1 - ek0, 1e-14);
  EXPECT_NEAR((u[4 * s] - ek1) - (e - ek0), 0.0, 1e-14);
}

TEST(GravityKick, IsothermalGasHasNoEnergyToChange) {
  Real u[5] = {1.5, 0.1, 0.2, 0.3, 42.0};  // u[4]: not a variable of isothermal gas
  const Real g[3] = {1, 2, 3};
  gravity_kick(u, 1, g, 0.5, false);
  EXPECT_DOUBLE_EQ(u[1], 0.1 + 0.5 * 1.5 * 1);
  EXPECT_DOUBLE_EQ(u[3], 0.3 + 0.5 * 1.5 * 3);
  EXPECT_EQ(u[4], 42.0);
}

TEST(GravityAcceleration, CentralDifferenceOfTheNeighbours) {
  // phi = 2x - 3y + 5z sampled at distance h: g = -grad phi exactly, per axis.
  const Real h = 0.25;
  const Real lo[3] = {-2 * h, 3 * h, -5 * h}, hi[3] = {2 * h, -3 * h, 5 * h};
  Real g[3];
  gravity_acceleration(lo, hi, Real(0.5) / h, g);
  EXPECT_DOUBLE_EQ(g[0], -2.0);
  EXPECT_DOUBLE_EQ(g[1], 3.0);
  EXPECT_DOUBLE_EQ(g[2], -5.0);
}

}  // namespace
}  // namespace tessera::kernels
