// Exact solution of the Riemann problem for the 1D isothermal Euler equations,
//
//   rho_t + (rho u)_x = 0,   (rho u)_t + (rho u^2 + c^2 rho)_x = 0,   p = c^2 rho, c constant,
//
// the reference for isothermal shock tubes and their regression tests. The system has two
// genuinely nonlinear families with speeds u - c and u + c and no contact wave (R. J. LeVeque,
// "Finite Volume Methods for Hyperbolic Problems", CUP 2002, ch. 14 on isothermal flow; the
// Hugoniot-locus and integral-curve construction used below is the one of his ch. 13). The
// algorithm follows E. F. Toro, "Riemann Solvers and Numerical Methods for Fluid Dynamics",
// 3rd ed. (Springer, 2009), ch. 4, with the star pressure replaced by the star density:
//
//   u* = u_L - f_L(rho*) = u_R + f_R(rho*),  i.e.  f(rho*) = f_L + f_R + (u_R - u_L) = 0,
//
//   f_K(rho) = c (rho - rho_K) / sqrt(rho rho_K)   if rho > rho_K  (shock),
//            = c ln(rho / rho_K)                    if rho <= rho_K (rarefaction),
//
// the counterpart of Toro eqs. 4.5-4.7; the .cpp derives both branches.
#pragma once

namespace tessera::problems {

// Primitive state of an isothermal gas. There is no pressure field: p = c^2 rho.
struct IsothermalState {
  double rho, u;
};

class ExactRiemannIsothermal {
 public:
  // Throws tessera::Error(kInput) for a non-positive or non-finite density or sound speed, a
  // non-finite velocity, or data whose star density is not representable in double precision
  // (an expansion with u_R - u_L beyond about 1400 c underflows it). A vacuum never forms for
  // finite data: f_K -> -infinity as rho -> 0 (the logarithm), so f has a positive root.
  ExactRiemannIsothermal(IsothermalState left, IsothermalState right, double sound_speed);

  double rho_star() const { return rho_star_; }
  double u_star() const { return u_star_; }
  double sound_speed() const { return c_; }

  // Solution at similarity coordinate s = (x - x0) / t.
  IsothermalState sample(double s) const;

  // Density averaged over [s_lo, s_hi] (e.g. a cell [x_lo, x_hi] at time t, divided by t).
  // Exact to rounding: constant on the piecewise-constant parts and, unlike
  // ExactRiemann::average_density (Gauss-Legendre there), the closed-form integral inside the
  // fans, where the isothermal density is an exponential in s.
  double average_density(double s_lo, double s_hi) const;

 private:
  double solve_log_rho_star() const;

  IsothermalState left_, right_;
  double c_;
  double rho_star_, u_star_;
};

}  // namespace tessera::problems
