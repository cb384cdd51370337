// Exact solution of the Riemann problem for the 1D Euler equations with an ideal-gas EOS.
//
// Used as the reference for the Sod shock-tube problem and its regression tests. The algorithm
// is the one of E. F. Toro, "Riemann Solvers and Numerical Methods for Fluid Dynamics", 3rd ed.
// (Springer, 2009), chapter 4: the star pressure is the root of the pressure function
// f(p) = f_L(p) + f_R(p) + (u_R - u_L) (eqs. 4.5-4.8), found by Newton-Raphson (§4.3.2); the
// solution is then sampled along rays s = (x - x0) / t by the wave pattern (§4.5).
#pragma once

namespace tessera::problems {

// Primitive state of a 1D ideal gas: density, velocity, pressure.
struct RiemannState {
  double rho, u, p;
};

class ExactRiemann {
 public:
  // Throws tessera::Error(kInput) for a non-positive (or non-finite) density or pressure,
  // gamma <= 1, or data that generate a vacuum (Toro eq. 4.40), where no star state exists.
  ExactRiemann(RiemannState left, RiemannState right, double gamma);

  double p_star() const { return p_star_; }
  double u_star() const { return u_star_; }

  // Solution at similarity coordinate s = (x - x0) / t.
  RiemannState sample(double s) const;

  // Density averaged over [s_lo, s_hi] (e.g. a cell [x_lo, x_hi] at time t, divided by t).
  // Exact on the piecewise-constant parts and Gauss-Legendre accurate inside the fans, so it
  // can initialise or check cell averages without a grid-dependent quadrature error.
  double average_density(double s_lo, double s_hi) const;

 private:
  // Pressure function f_K and its derivative for one side (Toro eqs. 4.6, 4.7, 4.37).
  double pressure_function(double p, const RiemannState& w, double a, double* derivative) const;
  double initial_guess() const;
  double solve_p_star() const;
  // Sample one side; `sign` is +1 for the left wave and -1 for the right one, which maps the
  // right-side formulas of Toro §4.5 onto the left-side ones by the reflection x -> -x.
  RiemannState sample_side(double s, const RiemannState& w, double a, double sign) const;

  RiemannState left_, right_;
  double gamma_;
  double a_left_, a_right_;  // sound speeds of the data states
  double p_star_, u_star_;
};

}  // namespace tessera::problems
