// Exact Riemann solver for the ideal-gas Euler equations; see exact_riemann.hpp and
// E. F. Toro, "Riemann Solvers and Numerical Methods for Fluid Dynamics", 3rd ed., chapter 4.
#include "problems/sod/exact_riemann.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "tessera/core/error.hpp"

namespace tessera::problems {
namespace {

// Relative change of p between Newton iterates at which p* counts as converged. Toro's program
// uses 1e-6; a reference solution for tests must be far more accurate than the schemes tested.
constexpr double kTolerance = 1e-12;
constexpr int kMaxIterations = 100;

void require(bool ok, const std::string& what) {
  if (!ok) throw Error(ErrorKind::kInput, "exact Riemann solver: " + what);
}

bool is_physical(const RiemannState& w) {
  return std::isfinite(w.rho) && std::isfinite(w.u) && std::isfinite(w.p) && w.rho > 0 && w.p > 0;
}

// Speeds bounding a left-facing wave (a right wave is passed in mirrored, see sample_side):
// a shock gives head == tail == shock speed; a rarefaction gives head and tail of the fan.
struct WaveSpeeds {
  double head, tail;
};

WaveSpeeds wave_speeds(const RiemannState& w, double a, double p_star, double u_star,
                       double gamma) {
  if (p_star > w.p) {
    // Shock speed, Toro eq. 4.52.
    const double s =
        w.u - a * std::sqrt((gamma + 1) / (2 * gamma) * p_star / w.p + (gamma - 1) / (2 * gamma));
    return {s, s};
  }
  // Fan head and tail, Toro eqs. 4.55 and 4.54.
  const double a_star = a * std::pow(p_star / w.p, (gamma - 1) / (2 * gamma));
  return {w.u - a, u_star - a_star};
}

}  // namespace

ExactRiemann::ExactRiemann(RiemannState left, RiemannState right, double gamma)
    : left_(left), right_(right), gamma_(gamma) {
  require(std::isfinite(gamma) && gamma > 1, "gamma must be > 1");
  require(is_physical(left), "left state needs finite, positive density and pressure");
  require(is_physical(right), "right state needs finite, positive density and pressure");
  a_left_ = std::sqrt(gamma * left.p / left.rho);
  a_right_ = std::sqrt(gamma * right.p / right.rho);
  // Pressure positivity condition, Toro eq. 4.40: otherwise the two rarefactions separate
  // and leave a vacuum between them, which this solver (and the code it tests) excludes.
  const double du_crit = 2 * (a_left_ + a_right_) / (gamma - 1);
  require(du_crit > right.u - left.u, "the data generate a vacuum (Toro eq. 4.40)");
  p_star_ = solve_p_star();
  double dfl = 0, dfr = 0;
  // u* from the two pressure functions, Toro eq. 4.9.
  u_star_ = 0.5 * (left_.u + right_.u) + 0.5 * (pressure_function(p_star_, right_, a_right_, &dfr) -
                                                pressure_function(p_star_, left_, a_left_, &dfl));
}

double ExactRiemann::pressure_function(double p, const RiemannState& w, double a,
                                       double* derivative) const {
  const double g = gamma_;
  if (p > w.p) {
    // Shock branch, Toro eq. 4.6 and the derivative of eq. 4.37.
    const double a_k = 2 / ((g + 1) * w.rho);
    const double b_k = (g - 1) / (g + 1) * w.p;
    const double root = std::sqrt(a_k / (b_k + p));
    *derivative = root * (1 - 0.5 * (p - w.p) / (b_k + p));
    return (p - w.p) * root;
  }
  // Rarefaction branch, Toro eq. 4.7 and eq. 4.37.
  const double ratio = p / w.p;
  *derivative = std::pow(ratio, -(g + 1) / (2 * g)) / (w.rho * a);
  return 2 * a / (g - 1) * (std::pow(ratio, (g - 1) / (2 * g)) - 1);
}

// Initial guess from the approximations of Toro §4.3.2 (eqs. 4.46-4.49), chosen adaptively as
// in the GUESSP routine of his chapter-4 program: PVRS where the data are nearly uniform (it is
// accurate there and cheap), else the two-rarefaction or the two-shock estimate, whichever wave
// pattern the PVRS value indicates. A good guess keeps Newton to a handful of iterations.
double ExactRiemann::initial_guess() const {
  const double g = gamma_;
  const RiemannState& l = left_;
  const RiemannState& r = right_;
  const double p_min = std::min(l.p, r.p);
  const double p_max = std::max(l.p, r.p);
  const double p_pv = std::max(
      0.0, 0.5 * (l.p + r.p) - 0.125 * (r.u - l.u) * (l.rho + r.rho) * (a_left_ + a_right_));
  if (p_max / p_min < 2 && p_min <= p_pv && p_pv <= p_max) return p_pv;
  if (p_pv < p_min) {
    // Two rarefactions: exact when both waves are rarefactions.
    const double z = (g - 1) / (2 * g);
    const double num = a_left_ + a_right_ - 0.5 * (g - 1) * (r.u - l.u);
    const double den = a_left_ / std::pow(l.p, z) + a_right_ / std::pow(r.p, z);
    return std::pow(num / den, 1 / z);
  }
  // Two shocks, linearised about p_pv.
  const double gl = std::sqrt(2 / ((g + 1) * l.rho) / ((g - 1) / (g + 1) * l.p + p_pv));
  const double gr = std::sqrt(2 / ((g + 1) * r.rho) / ((g - 1) / (g + 1) * r.p + p_pv));
  return (gl * l.p + gr * r.p - (r.u - l.u)) / (gl + gr);
}

double ExactRiemann::solve_p_star() const {
  // f(p) is monotone increasing and concave (Toro §4.3.1), so Newton converges from below
  // monotonically; an iterate that overshoots to p <= 0 is pulled back into (0, p_old).
  double p = std::max(initial_guess(), kTolerance * std::min(left_.p, right_.p));
  for (int it = 0; it < kMaxIterations; ++it) {
    double dfl = 0, dfr = 0;
    const double f = pressure_function(p, left_, a_left_, &dfl) +
                     pressure_function(p, right_, a_right_, &dfr) + (right_.u - left_.u);
    double p_new = p - f / (dfl + dfr);
    if (!(p_new > 0)) p_new = 0.1 * p;
    const double change = 2 * std::abs(p_new - p) / (p_new + p);
    p = p_new;
    if (change < kTolerance) return p;
  }
  throw Error(ErrorKind::kNumerical, "exact Riemann solver: Newton iteration for p* failed");
}

RiemannState ExactRiemann::sample_side(double s, const RiemannState& w, double a,
                                       double sign) const {
  // Written for the left wave (Toro §4.5, Fig. 4.14); the right wave is its mirror image.
  const double g = gamma_;
  const RiemannState wm{w.rho, sign * w.u, w.p};
  const double um_star = sign * u_star_;
  const double sm = sign * s;
  const WaveSpeeds waves = wave_speeds(wm, a, p_star_, um_star, g);
  RiemannState out;
  const double ratio = p_star_ / w.p;
  if (sm <= waves.head) {
    out = wm;
  } else if (p_star_ > w.p) {
    // Behind the shock, Toro eq. 4.50.
    const double q = (g - 1) / (g + 1);
    out = {w.rho * (ratio + q) / (q * ratio + 1), um_star, p_star_};
  } else if (sm >= waves.tail) {
    // Behind the rarefaction: isentropic, Toro eq. 4.53.
    out = {w.rho * std::pow(ratio, 1 / g), um_star, p_star_};
  } else {
    // Inside the fan, Toro eq. 4.56.
    const double c = 2 / (g + 1) + (g - 1) / ((g + 1) * a) * (wm.u - sm);
    out = {w.rho * std::pow(c, 2 / (g - 1)), 2 / (g + 1) * (a + 0.5 * (g - 1) * wm.u + sm),
           w.p * std::pow(c, 2 * g / (g - 1))};
  }
  out.u *= sign;
  return out;
}

RiemannState ExactRiemann::sample(double s) const {
  // The contact travels at u*: left of it only the left wave matters (Toro §4.5).
  if (s <= u_star_) return sample_side(s, left_, a_left_, 1.0);
  return sample_side(s, right_, a_right_, -1.0);
}

double ExactRiemann::average_density(double s_lo, double s_hi) const {
  if (!(s_lo <= s_hi)) throw Error(ErrorKind::kInput, "average_density: need s_lo <= s_hi");
  if (s_hi == s_lo) return sample(s_lo).rho;
  // Split at every wave edge so that each piece is either constant or lies in one fan, where
  // the density is smooth and Gauss-Legendre quadrature converges spectrally.
  const RiemannState lm{left_.rho, left_.u, left_.p};
  const RiemannState rm{right_.rho, -right_.u, right_.p};
  const WaveSpeeds wl = wave_speeds(lm, a_left_, p_star_, u_star_, gamma_);
  const WaveSpeeds wr = wave_speeds(rm, a_right_, p_star_, -u_star_, gamma_);
  std::vector<double> cuts{s_lo, s_hi, wl.head, wl.tail, u_star_, -wr.tail, -wr.head};
  std::sort(cuts.begin(), cuts.end());
  // 5-point Gauss-Legendre nodes and weights on [-1, 1] (Abramowitz & Stegun, Table 25.4).
  constexpr double kNode[5] = {-0.9061798459386640, -0.5384693101056831, 0.0, 0.5384693101056831,
                               0.9061798459386640};
  constexpr double kWeight[5] = {0.2369268850561891, 0.4786286704993665, 0.5688888888888889,
                                 0.4786286704993665, 0.2369268850561891};
  constexpr int kSubintervals = 4;
  double integral = 0;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
    const double a = std::max(cuts[i], s_lo);
    const double b = std::min(cuts[i + 1], s_hi);
    if (!(b > a)) continue;
    const double h = (b - a) / kSubintervals;
    for (int k = 0; k < kSubintervals; ++k) {
      const double mid = a + (k + 0.5) * h;
      for (int q = 0; q < 5; ++q) {
        integral += 0.5 * h * kWeight[q] * sample(mid + 0.5 * h * kNode[q]).rho;
      }
    }
  }
  return integral / (s_hi - s_lo);
}

}  // namespace tessera::problems
