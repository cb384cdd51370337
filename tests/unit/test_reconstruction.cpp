// Unit tests of the slope limiters and the PCM/PLM reconstruction of
// kernels/reconstruction.hpp, and of the mc_ep slopes (ReconPlmMcEp).
#include "kernels/reconstruction.hpp"
#include "tests/unit/hydro_structs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <type_traits>

namespace tessera::kernels::hydro_test {
namespace {

constexpr Real kEps = std::numeric_limits<Real>::epsilon();

// Random slope pairs over several decades, both signs, and some exact zeros and ties.
std::vector<std::pair<Real, Real>> slope_pairs() {
  std::mt19937_64 rng(31);
  std::uniform_real_distribution<Real> log_range(-6, 6), coin(0, 1);
  std::vector<std::pair<Real, Real>> pairs;
  auto draw = [&] {
    const Real a = std::pow(Real(10), log_range(rng));
    return coin(rng) < 0.5 ? -a : a;
  };
  for (int n = 0; n < 5000; ++n) pairs.emplace_back(draw(), draw());
  for (int n = 0; n < 200; ++n) {
    const Real a = draw();
    pairs.emplace_back(a, a);
    pairs.emplace_back(a, 0);
    pairs.emplace_back(0, a);
    pairs.emplace_back(a, -a);
  }
  pairs.emplace_back(0, 0);
  return pairs;
}

template <class Limiter>
class LimiterTest : public ::testing::Test {};

using Limiters = ::testing::Types<LimiterMinmod, LimiterMc, LimiterVanLeer>;
class LimiterNames {
 public:
  template <class T>
  static std::string GetName(int) {
    if (std::is_same_v<T, LimiterMinmod>) return "Minmod";
    if (std::is_same_v<T, LimiterMc>) return "Mc";
    return "VanLeer";
  }
};
TYPED_TEST_SUITE(LimiterTest, Limiters, LimiterNames);

TYPED_TEST(LimiterTest, SlopeIsZeroAtExtrema) {
  for (const auto& [dl, dr] : slope_pairs())
    if (dl * dr <= 0) {
      EXPECT_EQ(TypeParam::slope(dl, dr), 0) << dl << " " << dr;
    }
}

TYPED_TEST(LimiterTest, SlopeIsSymmetricInItsArguments) {
  for (const auto& [dl, dr] : slope_pairs())
    EXPECT_EQ(TypeParam::slope(dl, dr), TypeParam::slope(dr, dl)) << dl << " " << dr;
}

TYPED_TEST(LimiterTest, SlopeIsOddUnderReflection) {
  for (const auto& [dl, dr] : slope_pairs())
    EXPECT_EQ(TypeParam::slope(-dl, -dr), -TypeParam::slope(dl, dr)) << dl << " " << dr;
}

TYPED_TEST(LimiterTest, SlopeHasTheSignOfTheDataAndIsTvdBounded) {
  for (const auto& [dl, dr] : slope_pairs()) {
    const Real s = TypeParam::slope(dl, dr);
    // |s| <= 2 min(|dl|, |dr|) keeps face values between neighbours (Sweby's TVD region);
    // van Leer's 2 dl dr / (dl + dr) rounds three times, hence the 4 eps.
    EXPECT_LE(std::fabs(s), 2 * std::min(std::fabs(dl), std::fabs(dr)) * (1 + 4 * kEps))
        << dl << " " << dr;
    if (dl * dr > 0) {
      EXPECT_GT(s * dl, 0) << dl << " " << dr;
    }
  }
}

TYPED_TEST(LimiterTest, SlopeIsExactForLinearData) {
  for (const auto& [dl, dr] : slope_pairs()) {
    (void)dr;
    // minmod and MC select dl exactly; van Leer's 2 d^2 / (2 d) rounds (EXPECT_DOUBLE_EQ:
    // 4 ulps).
    EXPECT_DOUBLE_EQ(TypeParam::slope(dl, dl), dl) << dl;
  }
}

TEST(Limiters, MinmodAndMcSelectExactly) {
  // Minmod picks the smaller one-sided difference; MC the central one when within 2x.
  EXPECT_EQ(LimiterMinmod::slope(1.0, 3.0), 1.0);
  EXPECT_EQ(LimiterMinmod::slope(-3.0, -1.0), -1.0);
  EXPECT_EQ(LimiterMc::slope(1.0, 3.0), 2.0);
  EXPECT_EQ(LimiterMc::slope(1.0, 1.5), 1.25);
  EXPECT_EQ(LimiterMc::slope(1.0, 10.0), 2.0);
  EXPECT_EQ(LimiterVanLeer::slope(1.0, 3.0), 1.5);
}

TEST(Limiters, MinmodIsLeastAndMcMostCompressive) {
  for (const auto& [dl, dr] : slope_pairs()) {
    const Real mm = std::fabs(LimiterMinmod::slope(dl, dr));
    const Real vl = std::fabs(LimiterVanLeer::slope(dl, dr));
    const Real mc = std::fabs(LimiterMc::slope(dl, dr));
    // min(a, b) <= harmonic mean <= min(arithmetic mean, 2 min(a, b)); van Leer rounds, so
    // allow 4 eps relative.
    EXPECT_LE(mm, vl * (1 + 4 * kEps)) << dl << " " << dr;
    EXPECT_LE(vl, mc * (1 + 4 * kEps)) << dl << " " << dr;
  }
}

Prim make_prim(Real rho, Real vx, Real vy, Real vz, Real p) {
  return {rho, {vx, vy, vz}, p};
}

// Components of a Prim by index (rho, vx, vy, vz, p).
Real comp(const Prim& w, int var) {
  return var == 0 ? w.rho : (var == 4 ? w.p : w.v[var - 1]);
}

template <class Limiter>
void expect_face_values_between_neighbours() {
  using Recon = ReconPlm<Limiter>;
  std::mt19937_64 rng(32);
  std::uniform_real_distribution<Real> log_range(-6, 6), unit(-1, 1);
  auto positive = [&] { return std::pow(Real(10), log_range(rng)); };
  for (int n = 0; n < 20000; ++n) {
    Prim w[4];
    for (Prim& x : w) x = make_prim(positive(), unit(rng), unit(rng), unit(rng), positive());
    Prim left, right;
    face_states_of<Recon>(w[0], w[1], w[2], w[3], left, right);
    for (int var = 0; var < kNumHydroVars; ++var) {
      // Face i-1/2: both face values must lie between cells i-1 and i (to an ulp of the
      // sum a + (b - a)).
      const Real a = comp(w[1], var), b = comp(w[2], var);
      const Real lo = std::min(a, b), hi = std::max(a, b);
      const Real tol = 2 * kEps * std::max(std::fabs(a), std::fabs(b));
      EXPECT_GE(comp(left, var), lo - tol) << "sample " << n << " var " << var;
      EXPECT_LE(comp(left, var), hi + tol) << "sample " << n << " var " << var;
      EXPECT_GE(comp(right, var), lo - tol) << "sample " << n << " var " << var;
      EXPECT_LE(comp(right, var), hi + tol) << "sample " << n << " var " << var;
    }
    // Hence positive densities and pressures reconstruct to positive face states, even
    // across jumps of 12 decades (beyond the 1e-10 density floor against densities ~1; a
    // jump beyond 1/eps = 1e16 would lose the small value to round-off in a - (a - b)).
    EXPECT_GT(left.rho, 0) << n;
    EXPECT_GT(right.rho, 0) << n;
    EXPECT_GT(left.p, 0) << n;
    EXPECT_GT(right.p, 0) << n;
  }
}

TEST(Reconstruction, PlmMinmodFaceValuesStayBetweenNeighbours) {
  expect_face_values_between_neighbours<LimiterMinmod>();
}
TEST(Reconstruction, PlmMcFaceValuesStayBetweenNeighbours) {
  expect_face_values_between_neighbours<LimiterMc>();
}
TEST(Reconstruction, PlmVanLeerFaceValuesStayBetweenNeighbours) {
  expect_face_values_between_neighbours<LimiterVanLeer>();
}

TEST(Reconstruction, PlmIsExactForLinearProfiles) {
  // Cells at x = -2..1 of a linear profile; the face x = -1/2 has the value at -0.5, the
  // same from both sides (no jump, hence no numerical dissipation). The numbers are exact
  // in binary, so all limiters must reproduce them exactly.
  auto at = [](Real x) { return make_prim(2 + x, 0.5 * x, -x, 0.25, 3 - 0.5 * x); };
  const Prim w[4] = {at(-2), at(-1), at(0), at(1)};
  const Prim expected = at(-0.5);
  Prim left[3], right[3];
  face_states_of<ReconPlm<LimiterMinmod>>(w[0], w[1], w[2], w[3], left[0], right[0]);
  face_states_of<ReconPlm<LimiterMc>>(w[0], w[1], w[2], w[3], left[1], right[1]);
  face_states_of<ReconPlm<LimiterVanLeer>>(w[0], w[1], w[2], w[3], left[2], right[2]);
  for (int l = 0; l < 3; ++l)
    for (int var = 0; var < kNumHydroVars; ++var) {
      // Linear data with a zero slope (vz) gives the constant through the extremum rule.
      EXPECT_EQ(comp(left[l], var), comp(expected, var)) << "limiter " << l << " var " << var;
      EXPECT_EQ(comp(right[l], var), comp(expected, var)) << "limiter " << l << " var " << var;
    }
}

TEST(Reconstruction, PlmFlattensAtExtrema) {
  // A local maximum in cell i-1 and a minimum in cell i: both reconstruct to first order.
  const Prim w[4] = {make_prim(1, 0, 0, 0, 1), make_prim(3, 0, 0, 0, 3),
                     make_prim(0.5, 0, 0, 0, 0.5), make_prim(2, 0, 0, 0, 2)};
  Prim left, right;
  face_states_of<ReconPlm<LimiterMc>>(w[0], w[1], w[2], w[3], left, right);
  EXPECT_EQ(left.rho, 3);
  EXPECT_EQ(right.rho, 0.5);
  EXPECT_EQ(left.p, 3);
  EXPECT_EQ(right.p, 0.5);
}

TEST(Reconstruction, PcmReturnsTheCellValues) {
  const Prim w[4] = {make_prim(1, 2, 3, 4, 5), make_prim(6, 7, 8, 9, 10),
                     make_prim(11, 12, 13, 14, 15), make_prim(16, 17, 18, 19, 20)};
  Prim left, right;
  face_states_of<ReconPcm>(w[0], w[1], w[2], w[3], left, right);
  for (int var = 0; var < kNumHydroVars; ++var) {
    EXPECT_EQ(comp(left, var), comp(w[1], var)) << var;
    EXPECT_EQ(comp(right, var), comp(w[2], var)) << var;
  }
}

// mc_ep (ReconPlmMcEp) on five cells a[0..4], slope of the middle one.
Real ep_slope(const Real (&a)[5], bool positive = false) {
  return ReconPlmMcEp::slope(a[0], a[1], a[2], a[3], a[4], positive);
}

TEST(ReconstructionMcEp, EqualsMcWhereTheDataAreNotSmooth) {
  // Random five-cell data: wherever the three second differences do not share a sign or
  // differ by more than a factor 2, the slope is MC's, bit for bit (the bounds
  // 2 (M - a0) and 2 (a0 - m) are 2|dr| and 2|dl| for monotone data, zero at an extremum).
  std::mt19937_64 rng(33);
  std::uniform_real_distribution<Real> unit(-1, 1);
  int checked = 0, relaxed = 0;
  std::uniform_real_distribution<Real> omega_range(0.2, 1.0);
  for (int n = 0; n < 20000; ++n) {
    // Half noise, half sinusoids of 6 to 30 cells per wavelength (mostly smooth).
    Real a[5];
    const Real omega = omega_range(rng), phase = 4 * unit(rng);
    for (int k = 0; k < 5; ++k) a[k] = n % 2 ? unit(rng) : std::sin(omega * k + phase);
    const Real d2[3] = {a[0] - 2 * a[1] + a[2], a[1] - 2 * a[2] + a[3], a[2] - 2 * a[3] + a[4]};
    const Real lo = std::min({std::fabs(d2[0]), std::fabs(d2[1]), std::fabs(d2[2])});
    const Real hi = std::max({std::fabs(d2[0]), std::fabs(d2[1]), std::fabs(d2[2])});
    const bool one_sign =
        (d2[0] > 0 && d2[1] > 0 && d2[2] > 0) || (d2[0] < 0 && d2[1] < 0 && d2[2] < 0);
    const Real mc = LimiterMc::slope(a[2] - a[1], a[3] - a[2]);
    if (one_sign && hi <= 2 * lo) {
      ++relaxed;
      // Relaxed: never steeper than the central difference, never against its sign.
      const Real dc = Real(0.5) * (a[3] - a[1]);
      EXPECT_LE(std::fabs(ep_slope(a)), std::fabs(dc) * (1 + 4 * kEps)) << n;
      EXPECT_GE(ep_slope(a) * dc, 0) << n;
      EXPECT_GE(std::fabs(ep_slope(a)), std::fabs(mc) * (1 - 4 * kEps)) << n;
      continue;
    }
    ++checked;
    ASSERT_NEAR(ep_slope(a), mc, 4 * kEps * std::fabs(a[3] - a[1])) << n;
  }
  EXPECT_GT(checked, 10000);
  EXPECT_GT(relaxed, 2000);
}

TEST(ReconstructionMcEp, KeepsTheCentralSlopeAtASmoothExtremum) {
  // Samples of cos near its maximum at 12 cells per wavelength, the maximum a third of a
  // cell right of cell 0: MC flattens cell 0 (an extremum) and clips cell +1 (its right
  // difference is more than three times its left one); mc_ep keeps both central slopes.
  const Real h = 2 * std::numbers::pi / 12;
  auto at = [&](int i) { return std::cos(h * (i - Real(1) / 3)); };
  const Real a0[5] = {at(-2), at(-1), at(0), at(1), at(2)};
  const Real am[5] = {at(-1), at(0), at(1), at(2), at(3)};
  EXPECT_EQ(LimiterMc::slope(a0[2] - a0[1], a0[3] - a0[2]), 0);
  EXPECT_EQ(ep_slope(a0), Real(0.5) * (a0[3] - a0[1]));
  EXPECT_NE(ep_slope(a0), 0);
  EXPECT_EQ(ep_slope(am), Real(0.5) * (am[3] - am[1]));
  EXPECT_LT(std::fabs(LimiterMc::slope(am[2] - am[1], am[3] - am[2])), std::fabs(ep_slope(am)));
}

TEST(ReconstructionMcEp, LimitsASmearedStepAsMc) {
  // A step smeared over four cells, and a square pulse: second differences of both signs
  // (or far apart in size) beside them, so every slope is MC's and the face values stay
  // between the neighbours.
  const Real step[8] = {0, 0, 0.02, 0.3, 0.7, 0.98, 1, 1};
  const Real pulse[8] = {0, 0, 0, 1, 1, 1, 0, 0};
  for (const Real* a : {step, pulse})
    for (int i = 2; i < 6; ++i) {
      const Real c[5] = {a[i - 2], a[i - 1], a[i], a[i + 1], a[i + 2]};
      EXPECT_EQ(ep_slope(c), LimiterMc::slope(c[2] - c[1], c[3] - c[2])) << i;
    }
}

TEST(ReconstructionMcEp, PositiveVariablesStayAboveHalfTheirSmallestNeighbour) {
  // A sharp minimum that passes the smoothness test: second differences 0.96, 1.03, 0.96
  // allow 0.24 beyond the cells, which would take the middle cell's left face value to
  // 0.01 - 0.2375 < 0. As a positive variable its overshoot is capped at half the
  // smallest value.
  const Real a[5] = {1.05, 0.05, 0.01, 1.0, 2.95};
  const Real free_slope = ep_slope(a, false), capped = ep_slope(a, true);
  EXPECT_LT(a[2] - Real(0.5) * std::fabs(free_slope), 0);
  EXPECT_GE(a[2] - Real(0.5) * std::fabs(capped), Real(0.5) * 0.01 * (1 - 4 * kEps));
  EXPECT_GT(std::fabs(capped), 0);
  // Through the face values: cells i-3 .. i+2 around face i-1/2.
  const Real six[6] = {2.5, 1.05, 0.05, 0.01, 1.0, 2.95};
  Real left, right;
  ReconPlmMcEp::face_values(six, true, left, right);
  EXPECT_GT(right, 0);
  EXPECT_EQ(right, Real(0.01) - Real(0.5) * capped);
}

}  // namespace
}  // namespace tessera::kernels::hydro_test
