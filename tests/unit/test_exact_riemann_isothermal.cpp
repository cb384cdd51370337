// Unit tests of the exact isothermal Riemann solver (problems/sod/exact_riemann_isothermal.hpp):
// jump conditions, Riemann invariants, an independent root, averages, symmetry and input checks.
#include "problems/sod/exact_riemann_isothermal.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "tessera/core/error.hpp"

namespace tessera::problems {
namespace {

struct Case {
  IsothermalState left, right;
  double c;
};

// Two shocks: colliding streams, including a strong, very asymmetric one.
const std::vector<Case> kTwoShock = {
    {{1.0, 2.0}, {0.5, -1.0}, 0.8},
    {{1.0, 0.0}, {1.0, -3.0}, 1.0},
    {{1.0, 100.0}, {1e-2, -100.0}, 1.0},
};
// Two rarefactions, up to a star density of exp(-20) (isothermal gas has no vacuum).
const std::vector<Case> kTwoRarefaction = {
    {{1.0, -1.0}, {2.0, 1.5}, 0.9},
    {{1.0, -20.0}, {1.0, 20.0}, 1.0},
};
// One shock and one rarefaction: a density ratio of 1e9 against a Mach-50 collision, and a
// left shock with a right rarefaction in a drifting frame.
const std::vector<Case> kMixed = {
    {{1e6, 50.0}, {1e-3, -50.0}, 2.0},
    {{0.3, 0.7}, {2.0, 0.2}, 1.5},
};
// The isothermal Sod tube: left rarefaction (transonic: its fan straddles s = 0), right shock.
const Case kShockTube = {{1.0, 0.0}, {0.125, 0.0}, 1.0};

// Mass and momentum fluxes of the isothermal equations, p = c^2 rho.
double mass(const IsothermalState& w) {
  return w.rho * w.u;
}
double momentum_flux(const IsothermalState& w, double c) {
  return w.rho * w.u * w.u + c * c * w.rho;
}

// The jump between `a` and `b` satisfies both Rankine-Hugoniot conditions, S [U] = [F(U)], and
// sample() places it at that S; returns S.
double check_shock(const ExactRiemannIsothermal& rp, const IsothermalState& a,
                   const IsothermalState& b) {
  const double c = rp.sound_speed();
  const double s = (mass(b) - mass(a)) / (b.rho - a.rho);  // mass jump condition
  const double lhs = s * (mass(b) - mass(a));
  const double rhs = momentum_flux(b, c) - momentum_flux(a, c);
  EXPECT_NEAR(lhs, rhs, 1e-12 * (momentum_flux(a, c) + momentum_flux(b, c)));
  const double eps = 1e-9 * (1 + std::abs(s));
  EXPECT_NEAR(rp.sample(s - eps).rho, a.rho, 1e-12 * a.rho);
  EXPECT_NEAR(rp.sample(s + eps).rho, b.rho, 1e-12 * b.rho);
  return s;
}

TEST(ExactRiemannIsothermal, TwoShockStarStateSatisfiesRankineHugoniot) {
  for (const Case& t : kTwoShock) {
    const ExactRiemannIsothermal rp(t.left, t.right, t.c);
    const IsothermalState star{rp.rho_star(), rp.u_star()};
    ASSERT_GT(star.rho, t.left.rho);
    ASSERT_GT(star.rho, t.right.rho);
    const double s_left = check_shock(rp, t.left, star);
    const double s_right = check_shock(rp, star, t.right);
    // Lax entropy conditions: characteristics run into each shock.
    EXPECT_GT(t.left.u - t.c, s_left);
    EXPECT_GT(s_left, star.u - t.c);
    EXPECT_GT(star.u + t.c, s_right);
    EXPECT_GT(s_right, t.right.u + t.c);
  }
}

TEST(ExactRiemannIsothermal, RiemannInvariantsAreContinuousAcrossTheFans) {
  for (const Case& t : kTwoRarefaction) {
    const ExactRiemannIsothermal rp(t.left, t.right, t.c);
    ASSERT_LT(rp.rho_star(), std::min(t.left.rho, t.right.rho));
    // Left of u*, u + c ln rho is that of the left state (LeVeque 2002, ch. 14); right of it,
    // u - c ln rho is that of the right state. In each fan the flow is sonic: u -/+ c = s.
    const double w_left = t.left.u + t.c * std::log(t.left.rho);
    const double w_right = t.right.u - t.c * std::log(t.right.rho);
    const double scale = 1 + std::abs(w_left) + std::abs(w_right);
    int in_fans = 0;
    for (double s = -30.0; s <= 30.0; s += 0.0625) {
      const IsothermalState w = rp.sample(s);
      if (s <= rp.u_star()) {
        EXPECT_NEAR(w.u + t.c * std::log(w.rho), w_left, 1e-13 * scale) << "s = " << s;
        if (s > t.left.u - t.c && s < rp.u_star() - t.c) {
          EXPECT_NEAR(w.u - t.c, s, 1e-13 * scale) << "s = " << s;
          ++in_fans;
        }
      } else {
        EXPECT_NEAR(w.u - t.c * std::log(w.rho), w_right, 1e-13 * scale) << "s = " << s;
        if (s > rp.u_star() + t.c && s < t.right.u + t.c) {
          EXPECT_NEAR(w.u + t.c, s, 1e-13 * scale) << "s = " << s;
          ++in_fans;
        }
      }
    }
    EXPECT_GT(in_fans, 10);
  }
}

// Independent star density: bisection on the wave functions in their original form,
// f_K = c (rho - rho_K) / sqrt(rho rho_K) (shock) or c ln(rho / rho_K) (rarefaction).
double bisect_rho_star(const Case& t) {
  auto f_k = [&](double rho, double rho_k) {
    return rho > rho_k ? t.c * (rho - rho_k) / std::sqrt(rho * rho_k) : t.c * std::log(rho / rho_k);
  };
  double lo = 1e-3, hi = 1e3;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    const double f = f_k(mid, t.left.rho) + f_k(mid, t.right.rho) + t.right.u - t.left.u;
    (f > 0 ? hi : lo) = mid;
  }
  return 0.5 * (lo + hi);
}

TEST(ExactRiemannIsothermal, ShockTubeMatchesIndependentSolution) {
  const ExactRiemannIsothermal rp(kShockTube.left, kShockTube.right, kShockTube.c);
  EXPECT_NEAR(rp.rho_star(), bisect_rho_star(kShockTube), 1e-14);
  // 40-digit bisection (mpmath) of the same equation, and u* = -c ln(rho* / rho_L).
  EXPECT_NEAR(rp.rho_star(), 0.345780127785323766518514567689479293, 1e-15);
  EXPECT_NEAR(rp.u_star(), 1.06195217474885211184145767081189051, 1e-14);
  // Profile: data, fan (u = s + c, rho = exp(-s - 1), eq. 3 with u_L = 0), star, data.
  EXPECT_EQ(rp.sample(-1.01).rho, 1.0);
  EXPECT_EQ(rp.sample(-1.01).u, 0.0);
  for (double s : {-0.9, -0.5, 0.0, 0.06}) {
    EXPECT_NEAR(rp.sample(s).rho, std::exp(-s - 1), 1e-15) << "s = " << s;
    EXPECT_NEAR(rp.sample(s).u, s + 1, 1e-15) << "s = " << s;
  }
  // Shock at S_R = u_R + c sqrt(rho* / rho_R) = 1.66320203892449282...
  EXPECT_EQ(rp.sample(1.663).rho, rp.rho_star());
  EXPECT_EQ(rp.sample(1.6633).rho, 0.125);
  EXPECT_NEAR(check_shock(rp, {rp.rho_star(), rp.u_star()}, kShockTube.right),
              1.66320203892449282078544133128100827, 1e-13);
}

TEST(ExactRiemannIsothermal, AverageDensity) {
  const ExactRiemannIsothermal rp(kShockTube.left, kShockTube.right, kShockTube.c);
  // Constant regions: data states and the star state (fan tail 0.062, shock 1.663).
  EXPECT_DOUBLE_EQ(rp.average_density(-5.0, -1.5), 1.0);
  EXPECT_DOUBLE_EQ(rp.average_density(0.2, 1.6), rp.rho_star());
  EXPECT_DOUBLE_EQ(rp.average_density(2.0, 7.0), 0.125);
  // Inside the fan [-1, 0.062]: a fine midpoint rule (error h^2 / 24 max|rho''| ~ 4e-12) and
  // the closed form, integral of exp(-s - 1) = exp(-a - 1) - exp(-b - 1).
  const double a = -0.95, b = 0.05;
  const int n = 100000;
  double midpoint = 0;
  for (int i = 0; i < n; ++i) midpoint += rp.sample(a + (i + 0.5) * (b - a) / n).rho;
  midpoint /= n;
  EXPECT_NEAR(rp.average_density(a, b), midpoint, 1e-10);
  EXPECT_NEAR(rp.average_density(a, b), (std::exp(-a - 1) - std::exp(-b - 1)) / (b - a), 1e-14);
  // Over all waves the mass at t = 1 is the initial mass plus the inflow rho_L u_L - rho_R u_R
  // through the ends, exactly (no midpoint rule would get this across the shock).
  for (const std::vector<Case>* cases : {&kTwoShock, &kTwoRarefaction, &kMixed}) {
    for (const Case& t : *cases) {
      const ExactRiemannIsothermal p(t.left, t.right, t.c);
      const double lo = -100, hi = 100;
      const double m = -lo * t.left.rho + hi * t.right.rho + mass(t.left) - mass(t.right);
      EXPECT_NEAR(p.average_density(lo, hi), m / (hi - lo), 1e-12 * m / (hi - lo));
    }
  }
}

TEST(ExactRiemannIsothermal, MirroredDataGiveMirroredSolution) {
  std::vector<Case> cases = kTwoShock;
  cases.insert(cases.end(), kTwoRarefaction.begin(), kTwoRarefaction.end());
  cases.insert(cases.end(), kMixed.begin(), kMixed.end());
  cases.push_back(kShockTube);
  for (const Case& t : cases) {
    const ExactRiemannIsothermal rp(t.left, t.right, t.c);
    // Reflection x -> -x swaps the states and flips the velocities.
    const ExactRiemannIsothermal mirror({t.right.rho, -t.right.u}, {t.left.rho, -t.left.u}, t.c);
    EXPECT_NEAR(mirror.rho_star(), rp.rho_star(), 1e-13 * rp.rho_star());
    EXPECT_NEAR(mirror.u_star(), -rp.u_star(), 1e-12 * (1 + std::abs(rp.u_star())));
    for (double s = -60.0; s <= 60.0; s += 0.37) {
      const IsothermalState a = rp.sample(s);
      const IsothermalState b = mirror.sample(-s);
      EXPECT_NEAR(b.rho, a.rho, 1e-12 * a.rho) << "s = " << s;
      EXPECT_NEAR(b.u, -a.u, 1e-12 * (1 + std::abs(a.u))) << "s = " << s;
    }
  }
}

TEST(ExactRiemannIsothermal, InvalidInputThrows) {
  const IsothermalState good{1.0, 0.0};
  const double nan = std::nan("");
  const double inf = HUGE_VAL;
  auto expect_input_error = [](auto&& make) {
    try {
      make();
      ADD_FAILURE() << "expected tessera::Error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInput) << e.what();
    }
  };
  for (const IsothermalState bad : std::vector<IsothermalState>{
           {0.0, 0.0}, {-1.0, 0.0}, {nan, 0.0}, {inf, 0.0}, {1.0, nan}, {1.0, inf}}) {
    expect_input_error([&] { ExactRiemannIsothermal(bad, good, 1.0); });
    expect_input_error([&] { ExactRiemannIsothermal(good, bad, 1.0); });
  }
  for (double c : {0.0, -1.0, nan, inf}) {
    expect_input_error([&] { ExactRiemannIsothermal(good, good, c); });
  }
  // u_R - u_L = 2000 c: rho* = exp(-1000) underflows (no vacuum, but not representable).
  expect_input_error([&] { ExactRiemannIsothermal({1.0, -1000.0}, {1.0, 1000.0}, 1.0); });
  const ExactRiemannIsothermal rp(good, good, 1.0);
  expect_input_error([&] { rp.average_density(1.0, 0.0); });
}

}  // namespace
}  // namespace tessera::problems
