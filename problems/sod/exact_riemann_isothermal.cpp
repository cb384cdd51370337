// Exact Riemann solver for the isothermal Euler equations; see exact_riemann_isothermal.hpp.
//
// Wave curves through a data state K, written for the left (u - c) family; the right family
// follows by the reflection x -> -x, u -> -u (as in exact_riemann.cpp).
//
// Shock. With S the shock speed, the Rankine-Hugoniot conditions of the two conservation laws
// in the shock frame read m = rho_K (u_K - S) = rho* (u* - S) and
// m^2 / rho_K + c^2 rho_K = m^2 / rho* + c^2 rho*. Eliminating, m^2 = c^2 rho_K rho* and
// u_K - u* = m (1 / rho_K - 1 / rho*), so for a left shock (m > 0; admissible in the sense of
// Lax only if it compresses, rho* > rho_K)
//   u* = u_K - c (rho* - rho_K) / sqrt(rho* rho_K),   S = u_K - c sqrt(rho* / rho_K).     (1)
// Rarefaction. Along the integral curve of the eigenvector r = (1, u - c) of the flux
// Jacobian, d(rho u) / d rho = u - c, i.e. rho du = -c d rho: the Riemann invariant
// u + c ln rho is constant through a left fan (LeVeque 2002, ch. 14). Hence, for rho* <= rho_K,
//   u* = u_K - c ln(rho* / rho_K),                                                         (2)
// and on the ray x / t = s inside the fan the flow is sonic, u - c = s, so
//   u = s + c,   rho = rho_K exp((u_K - s) / c - 1),                                       (3)
// between the head s = u_K - c and the tail s = u* - c.
//
// In the variable d = ln(rho / rho_K), (1) and (2) become u* = u_K - F(d) with
//   F(d) = 2 c sinh(d / 2)  (d > 0, shock),   F(d) = c d  (d <= 0, rarefaction),          (4)
// and F is increasing, convex and C^1 (F' = c cosh(d / 2), resp. c, both >= c). So is
// g(x) = F(x - ln rho_L) + F(x - ln rho_R) + (u_R - u_L) in x = ln rho*, with g' >= 2c: g has
// exactly one root for all finite data (the star state always exists; there is no vacuum),
// and Newton's method on x converges for any start, monotonically from above after the first
// step (convexity puts every tangent below g). This is why the iteration runs on ln rho*.
#include "problems/sod/exact_riemann_isothermal.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "tessera/core/error.hpp"

namespace tessera::problems {
namespace {

// Newton stops once a step changes ln rho* by less than this (relative change of rho*), or
// once rounding stops the monotone decrease. The iteration bound is generous: the slowest case
// is a shock far into its exponential branch, where each step lowers x by only about 2
// (density ratios of 1e12 take 10 steps, 1e600 takes 344).
constexpr double kTolerance = 1e-14;
constexpr int kMaxIterations = 1000;

void require(bool ok, const std::string& what) {
  if (!ok) throw Error(ErrorKind::kInput, "isothermal exact Riemann solver: " + what);
}

bool is_physical(const IsothermalState& w) {
  return std::isfinite(w.rho) && std::isfinite(w.u) && w.rho > 0;
}

// F(d) of eq. (4) and its derivative with respect to d (or to x = ln rho, the same).
double wave_function(double d, double c, double* derivative) {
  if (d > 0) {
    *derivative = c * std::cosh(0.5 * d);
    return 2 * c * std::sinh(0.5 * d);
  }
  *derivative = c;
  return c * d;
}

// Speeds bounding a left-facing wave (a right wave is passed in mirrored, see sample_side):
// a shock gives head == tail == shock speed, eq. (1); a rarefaction the edges of its fan.
struct WaveSpeeds {
  double head, tail;
};

WaveSpeeds wave_speeds(const IsothermalState& w, double rho_star, double u_star, double c) {
  if (rho_star > w.rho) {
    const double s = w.u - c * std::sqrt(rho_star / w.rho);
    return {s, s};
  }
  return {w.u - c, u_star - c};
}

// Solution of the left wave on the ray s; `sign` = -1 maps the right wave onto a left one
// (x -> -x, u -> -u), as ExactRiemann::sample_side does.
IsothermalState sample_side(double s, const IsothermalState& w, double rho_star, double u_star,
                            double c, double sign) {
  const IsothermalState wm{w.rho, sign * w.u};
  const double um_star = sign * u_star;
  const double sm = sign * s;
  const WaveSpeeds waves = wave_speeds(wm, rho_star, um_star, c);
  IsothermalState out;
  if (sm <= waves.head) {
    out = wm;
  } else if (rho_star > w.rho || sm >= waves.tail) {
    out = {rho_star, um_star};  // behind the shock or the fan
  } else {
    out = {w.rho * std::exp((wm.u - sm) / c - 1), sm + c};  // inside the fan, eq. (3)
  }
  out.u *= sign;
  return out;
}

}  // namespace

ExactRiemannIsothermal::ExactRiemannIsothermal(IsothermalState left, IsothermalState right,
                                               double sound_speed)
    : left_(left), right_(right), c_(sound_speed) {
  require(std::isfinite(sound_speed) && sound_speed > 0, "the sound speed must be > 0");
  require(is_physical(left), "left state needs a finite, positive density, finite velocity");
  require(is_physical(right), "right state needs a finite, positive density, finite velocity");
  const double x = solve_log_rho_star();
  rho_star_ = std::exp(x);
  require(rho_star_ > 0 && std::isfinite(rho_star_),
          "the star density is not representable in double precision (u_R - u_L too large)");
  // u* from both waves, the analogue of Toro eq. 4.9: the mean is symmetric in L and R.
  double dl = 0, dr = 0;
  const double fl = wave_function(x - std::log(left_.rho), c_, &dl);
  const double fr = wave_function(x - std::log(right_.rho), c_, &dr);
  u_star_ = 0.5 * (left_.u + right_.u) + 0.5 * (fr - fl);
}

double ExactRiemannIsothermal::solve_log_rho_star() const {
  const double xl = std::log(left_.rho);
  const double xr = std::log(right_.rho);
  const double q = (right_.u - left_.u) / c_;
  // Two starting values, each the exact root when both waves are of one kind and, because F
  // of eq. (4) lies above both c d and 2 c sinh(d / 2), each at or above the true root:
  // two rarefactions, (xl - x) + (xr - x) = q ...
  const double x_rr = 0.5 * (xl + xr) - 0.5 * q;
  // ... and two shocks: with y = sqrt(rho), A y^2 + q y - B = 0 where A = rho_L^(-1/2) +
  // rho_R^(-1/2), B = rho_L^(1/2) + rho_R^(1/2); the positive root, without cancellation.
  const double a = 1 / std::sqrt(left_.rho) + 1 / std::sqrt(right_.rho);
  const double b = std::sqrt(left_.rho) + std::sqrt(right_.rho);
  const double disc = std::sqrt(q * q + 4 * a * b);
  const double y = q > 0 ? 2 * b / (q + disc) : (disc - q) / (2 * a);
  const double x_ss = 2 * std::log(y);
  double x = std::isfinite(x_ss) ? std::min(x_rr, x_ss) : x_rr;
  for (int it = 0; it < kMaxIterations; ++it) {
    double dl = 0, dr = 0;
    const double g = wave_function(x - xl, c_, &dl) + wave_function(x - xr, c_, &dr) + q * c_;
    const double dx = -g / (dl + dr);
    x += dx;
    // The start is at or above the root, so in exact arithmetic every step is downhill; one
    // that is not is rounding noise (or a NaN from absurd data, which the caller rejects).
    if (std::abs(dx) <= kTolerance * (1 + std::abs(x)) || !(dx < 0)) return x;
  }
  throw Error(ErrorKind::kNumerical,
              "isothermal exact Riemann solver: Newton iteration for rho* failed");
}

IsothermalState ExactRiemannIsothermal::sample(double s) const {
  // Every left-wave speed is below u* and every right-wave speed above it (Lax).
  if (s <= u_star_) return sample_side(s, left_, rho_star_, u_star_, c_, 1.0);
  return sample_side(s, right_, rho_star_, u_star_, c_, -1.0);
}

double ExactRiemannIsothermal::average_density(double s_lo, double s_hi) const {
  if (!(s_lo <= s_hi)) throw Error(ErrorKind::kInput, "average_density: need s_lo <= s_hi");
  if (s_hi == s_lo) return sample(s_lo).rho;
  // Split at every wave edge so that each piece is either constant or lies in one fan.
  const WaveSpeeds wl = wave_speeds(left_, rho_star_, u_star_, c_);
  const WaveSpeeds wr = wave_speeds({right_.rho, -right_.u}, rho_star_, -u_star_, c_);
  std::vector<double> cuts{s_lo, s_hi, wl.head, wl.tail, -wr.tail, -wr.head};
  std::sort(cuts.begin(), cuts.end());
  double integral = 0;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
    const double lo = std::max(cuts[i], s_lo);
    const double hi = std::min(cuts[i + 1], s_hi);
    if (!(hi > lo)) continue;
    const double mid = 0.5 * (lo + hi);
    // The piece seen from its own wave, mirrored to a left wave if it is right of u*.
    const double sign = mid <= u_star_ ? 1.0 : -1.0;
    const IsothermalState& w = sign > 0 ? left_ : right_;
    const IsothermalState wm{w.rho, sign * w.u};
    const WaveSpeeds waves = wave_speeds(wm, rho_star_, sign * u_star_, c_);
    const double a = std::min(sign * lo, sign * hi);
    const double b = std::max(sign * lo, sign * hi);
    if (rho_star_ <= w.rho && sign * mid > waves.head && sign * mid < waves.tail) {
      // The fan density (3) is an exponential in s, so its integral is closed-form:
      // int_a^b rho_K exp((u_K - s) / c - 1) ds = c (rho(a) - rho(b)), written with expm1 to
      // keep digits on thin pieces. Even a many-point quadrature would lose accuracy here on
      // the strong fans that isothermal gas allows (rho varying by e^20 and more).
      const double rho_a = w.rho * std::exp((wm.u - a) / c_ - 1);
      integral += -c_ * rho_a * std::expm1(-(b - a) / c_);
    } else {
      integral += (hi - lo) * sample(mid).rho;
    }
  }
  return integral / (s_hi - s_lo);
}

}  // namespace tessera::problems
