// Unit tests of the gravity source terms (kernels/gravity.hpp), called on the host: the
// kick's momentum and energy change against a hand computation, the thermal energy it
// leaves untouched, and the central-difference acceleration; the quadratic interpolation
// of the coarser level's potential (src/gravity/coarse_potential.hpp).
#include "kernels/gravity.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/group_layout.hpp"
#include "src/gravity/coarse_potential.hpp"

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

namespace tessera::gravity {
namespace {

// A parent patch's box of potential (12^3, two ghost layers) at an arbitrary place.
mesh::CoarseBox potential_box(std::array<int, 3> lo, auto&& value) {
  mesh::CoarseBox cb;
  cb.lo = lo;
  cb.n = mesh::kPatchSize + 4;
  cb.nvar = 1;
  cb.data.resize(std::size_t(cb.n) * cb.n * cb.n);
  for (int k = 0; k < cb.n; ++k)
    for (int j = 0; j < cb.n; ++j)
      for (int i = 0; i < cb.n; ++i)
        cb.at(0, i, j, k) = Real(value(lo[0] + i, lo[1] + j, lo[2] + k));
  return cb;
}

TEST(PotentialInterpolation, QuadraticPotentialIsReproducedExactly) {
  // Coarse cell centres at x = c + 1/2 (coarse units), fine centres at (f + 1/2) / 2: a
  // quadratic with cross terms, interpolated at fine cells on both sides of their parent.
  auto q = [](double x, double y, double z) {
    return 0.3 * x * x - 0.7 * y * y + 0.2 * z * z + 0.5 * x * y - 0.4 * y * z + 1.3 * x - 2.0 * z;
  };
  const mesh::CoarseBox cb =
      potential_box({5, -3, 9}, [&](int i, int j, int k) { return q(i + 0.5, j + 0.5, k + 0.5); });
  // Fine cells of the group (its first cell twice the parent's corner, lo + 2).
  for (const auto off : {std::array<int, 3>{0, 9, 15}, std::array<int, 3>{15, 8, 0}}) {
    const std::array<int, 3> f = {2 * (5 + 2) + off[0], 2 * (-3 + 2) + off[1],
                                  2 * (9 + 2) + off[2]};
    const double exact = q((f[0] + 0.5) / 2, (f[1] + 0.5) / 2, (f[2] + 0.5) / 2);
    EXPECT_NEAR(detail::interpolate_potential(cb, f), exact, 1e-12) << f[0] << " " << f[1];
  }
}

TEST(PotentialInterpolation, GroupPassesEqualThePointwiseInterpolation) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  const std::array<int, 3> lo = {5, -3, 9};
  const mesh::CoarseBox cb = potential_box(lo, [&](int, int, int) { return u(rng); });
  std::vector<Real> out(kernels::kGroupCells);
  detail::interpolate_group_potential(cb, out.data());
  constexpr int g = kernels::kGroupSize;
  double worst = 0;
  for (int k = 0; k < g; ++k)
    for (int j = 0; j < g; ++j)
      for (int i = 0; i < g; ++i) {
        // The group's first fine cell is twice its parent patch's corner, lo + 2.
        const std::array<int, 3> f = {2 * (lo[0] + 2) + i, 2 * (lo[1] + 2) + j,
                                      2 * (lo[2] + 2) + k};
        worst = std::max(worst, std::fabs(double(out[(k * g + j) * g + i]) -
                                          detail::interpolate_potential(cb, f)));
      }
  EXPECT_LT(worst, 1e-14);
}

}  // namespace
}  // namespace tessera::gravity
