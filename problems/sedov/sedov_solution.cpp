// Sedov-Taylor blast wave by numerical integration of the similarity ODEs; see the header.
#include "problems/sedov/sedov_solution.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numbers>
#include <string>

#include "tessera/core/error.hpp"

namespace tessera::problems {
namespace {

// U, ln G, ln P and the running energy integral Q (below) as functions of x = ln(lambda).
using Vec = std::array<double, 4>;

// Where the inward integration stops; see centre() for why it must not go much further.
constexpr double kLambdaStop = 1e-2;
constexpr double kTolerance = 1e-12;  // local error per step, relative to 1 + |y|
constexpr double kMaxStep = 1e-2;     // in x; also the spacing of the interpolation table
constexpr int kMaxSteps = 1000000;

// With R ∝ t^(2/5) (so dRdot/dt = -1.5 Rdot^2 / R), u = Rdot U, rho = rho0 G,
// p = rho0 Rdot^2 P and ' = d/dlambda, the spherical Euler equations become (V = U - lambda)
//   continuity  V G' + G (U' + 2 U / lambda) = 0,
//   momentum    -1.5 U + V U' + P' / G = 0,
//   entropy     -3 + V (P'/P - gamma G'/G) = 0,
// as in Landau & Lifshitz, Fluid Mechanics, 2nd ed., §106 (there in the variables V, Z, G).
// Solved for the derivatives, with D = G V^2 - gamma P = G (V^2 - c^2 / Rdot^2):
//   lambda U'   = (1.5 U G V lambda - 3 P lambda + 2 gamma P U) / D,
//   lambda G'/G = -(lambda U' + 2 U) / V,
//   lambda P'/P = 3 lambda / V + gamma lambda G'/G.
// Multiplying by lambda turns d/dlambda into d/dx, which resolves both the shock region and
// the centre, where G ~ lambda^(3/(gamma-1)) is tiny but ln G is merely linear in x.
// The fourth component is Q' = (G U^2/2 + P/(gamma-1)) lambda^3, i.e. the energy integrand
// (G U^2/2 + P/(gamma-1)) lambda^2 d lambda written in x.
Vec derivatives(double x, const Vec& y, double gamma) {
  const double lambda = std::exp(x);
  const double u = y[0], g = std::exp(y[1]), p = std::exp(y[2]);
  const double v = u - lambda;
  const double d = g * v * v - gamma * p;
  // The flow relative to the similarity lines is subsonic (D < 0) and inward (V < 0) in the
  // whole standard solution; anything else means the integration left it.
  if (!(d < 0 && v < 0)) {
    throw Error(ErrorKind::kInternal, "Sedov solution: the similarity ODEs met a sonic point");
  }
  const double lu = (1.5 * u * g * v * lambda - 3 * p * lambda + 2 * gamma * p * u) / d;
  const double lg = -(lu + 2 * u) / v;
  const double lp = 3 * lambda / v + gamma * lg;
  return {lu, lg, lp, (0.5 * g * u * u + p / (gamma - 1)) * lambda * lambda * lambda};
}

Vec rk4_step(double x, const Vec& y, double h, double gamma) {
  auto axpy = [](const Vec& a, double s, const Vec& b) {
    Vec r;
    for (std::size_t i = 0; i < 4; ++i) r[i] = a[i] + s * b[i];
    return r;
  };
  const Vec k1 = derivatives(x, y, gamma);
  const Vec k2 = derivatives(x + 0.5 * h, axpy(y, 0.5 * h, k1), gamma);
  const Vec k3 = derivatives(x + 0.5 * h, axpy(y, 0.5 * h, k2), gamma);
  const Vec k4 = derivatives(x + h, axpy(y, h, k3), gamma);
  Vec r;
  for (std::size_t i = 0; i < 4; ++i) r[i] = y[i] + h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
  return r;
}

void require(bool ok, const std::string& what) {
  if (!ok) throw Error(ErrorKind::kInput, "Sedov solution: " + what);
}

}  // namespace

SedovSolution::SedovSolution(double gamma, double energy, double rho0)
    : gamma_(gamma), energy_(energy), rho0_(rho0) {
  require(std::isfinite(gamma) && gamma > 1 && gamma < 7, "need 1 < gamma < 7");
  require(std::isfinite(energy) && energy > 0, "need a finite blast energy > 0");
  require(std::isfinite(rho0) && rho0 > 0, "need a finite ambient density > 0");

  // Strong-shock (p0 = 0) Rankine-Hugoniot conditions at lambda = 1 (Landau & Lifshitz §89):
  // u = 2 Rdot / (gamma+1), rho = rho0 (gamma+1)/(gamma-1), p = 2 rho0 Rdot^2 / (gamma+1).
  Vec y{2 / (gamma + 1), std::log((gamma + 1) / (gamma - 1)), std::log(2 / (gamma + 1)), 0};
  double x = 0;
  const double x_stop = std::log(kLambdaStop);
  auto push = [&] {
    const Vec d = derivatives(x, y, gamma_);
    table_.push_back({x, {y[0], y[1], y[2]}, {d[0], d[1], d[2]}});
  };
  push();
  // Classical RK4 with step doubling and local extrapolation (Press et al., Numerical
  // Recipes, 2nd ed., §16.2): the profile is steep behind the shock for gamma -> 1 (a thin
  // shell) and gentle elsewhere, so a fixed step would be either wasteful or inaccurate.
  double h = 1e-4;
  for (int steps = 0; x > x_stop; ++steps) {
    if (steps > kMaxSteps || h < 1e-14) {
      throw Error(ErrorKind::kInternal, "Sedov solution: step size control failed");
    }
    // Take the remainder in one go rather than leaving a sliver that would trip the h check.
    const bool last = x - h <= x_stop + 1e-9;
    if (last) h = x - x_stop;
    const Vec full = rk4_step(x, y, -h, gamma_);
    const Vec half = rk4_step(x - 0.5 * h, rk4_step(x, y, -0.5 * h, gamma_), -0.5 * h, gamma_);
    double err = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      err = std::max(err, std::abs(half[i] - full[i]) / (15 * (1 + std::abs(half[i]))));
    }
    if (!std::isfinite(err)) throw Error(ErrorKind::kInternal, "Sedov solution: NaN in ODEs");
    if (err > kTolerance) {
      h *= std::max(0.1, 0.9 * std::pow(kTolerance / err, 0.25));
      continue;
    }
    for (std::size_t i = 0; i < 4; ++i) y[i] = half[i] + (half[i] - full[i]) / 15;
    x = last ? x_stop : x - h;
    push();
    const double grow = err > 0 ? 0.9 * std::pow(kTolerance / err, 0.2) : 4.0;
    h = std::min(kMaxStep, h * std::min(4.0, grow));
  }

  // Energy: E = int 4 pi r^2 (rho u^2/2 + p/(gamma-1)) dr = 4 pi rho0 Rdot^2 R^3 I with
  // I = int_0^1 (G U^2/2 + P/(gamma-1)) lambda^2 dlambda, and Rdot^2 R^3 = (4/25) xi0^5 E/rho0,
  // so 1 = (16 pi / 25) xi0^5 I (Landau & Lifshitz §106). Q ran from x = 0 downwards, hence
  // the sign; the part inside lambda_stop follows from the power laws of centre().
  const Node& s = table_.back();
  const double k = 3 / (gamma - 1);
  const double ls3 = kLambdaStop * kLambdaStop * kLambdaStop;
  const double tail = ls3 * (std::exp(s.y[1]) * s.y[0] * s.y[0] / (2 * (k + 5)) +
                             std::exp(s.y[2]) / (3 * (gamma - 1)));
  const double integral = -y[3] + tail;
  xi0_ = std::pow(25 / (16 * std::numbers::pi * integral), 0.2);
}

std::array<double, 3> SedovSolution::centre(double x) const {
  // Near lambda = 0 write U = w lambda: to leading order dw/dx = 3 (1/gamma - w), so w -> 1/gamma
  // going outwards but any error grows like lambda^-3 going inwards; integrating to lambda -> 0
  // would amplify round-off without bound. Inside lambda_stop we therefore use the central
  // asymptotics U ∝ lambda, G ∝ lambda^(3/(gamma-1)), P = const (from the entropy equation
  // with U = lambda/gamma; Sedov 1959, ch. IV), matched in value at lambda_stop.
  const Node& s = table_.back();
  const double dx = x - s.x;  // <= 0
  return {s.y[0] * std::exp(dx), s.y[1] + 3 / (gamma_ - 1) * dx, s.y[2]};
}

double SedovSolution::shock_radius(double t) const {
  if (!(std::isfinite(t) && t > 0)) {
    throw Error(ErrorKind::kInput, "Sedov solution: need a time t > 0");
  }
  return xi0_ * std::pow(energy_ * t * t / rho0_, 0.2);
}

SedovSolution::State SedovSolution::sample(double r, double t) const {
  const double radius = shock_radius(t);
  if (!(std::isfinite(r) && r >= 0)) {
    throw Error(ErrorKind::kInput, "Sedov solution: need a radius r >= 0");
  }
  if (r > radius) return {rho0_, 0, 0};
  const double rdot = 0.4 * radius / t;
  const double x = std::log(r / radius);  // -inf at r = 0, which centre() handles
  std::array<double, 3> y;
  if (x <= table_.back().x) {
    y = centre(x);
  } else {
    // First node at or below x (the table's x decreases), then cubic Hermite on [i-1, i].
    const auto it = std::lower_bound(table_.begin(), table_.end(), x,
                                     [](const Node& n, double v) { return n.x > v; });
    const std::size_t i = std::max<std::size_t>(1, static_cast<std::size_t>(it - table_.begin()));
    const Node& a = table_[i - 1];
    const Node& b = table_[i];
    const double h = b.x - a.x;
    const double q = (x - a.x) / h;
    const double h00 = (1 + 2 * q) * (1 - q) * (1 - q), h10 = q * (1 - q) * (1 - q);
    const double h01 = q * q * (3 - 2 * q), h11 = q * q * (q - 1);
    for (std::size_t c = 0; c < 3; ++c) {
      y[c] = h00 * a.y[c] + h10 * h * a.dy[c] + h01 * b.y[c] + h11 * h * b.dy[c];
    }
  }
  return {rho0_ * std::exp(y[1]), rdot * y[0], rho0_ * rdot * rdot * std::exp(y[2])};
}

}  // namespace tessera::problems
