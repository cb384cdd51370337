// Sedov-Taylor self-similar solution of a point explosion in a uniform, cold (p = 0) gas.
//
// Reference solution for the Sedov blast-wave problem and its regression tests. Instead of the
// closed form of Sedov (Similarity and Dimensional Methods in Mechanics, 1959, ch. IV), whose
// exponents degenerate at special gammas (Kamm & Timmes 2007, "On efficient generation of
// numerically robust Sedov solutions", LA-UR-07-2849), the similarity ODEs are integrated
// numerically from the shock inwards, as G. I. Taylor did (Proc. R. Soc. A 201, 159, 1950).
#pragma once

#include <array>
#include <vector>

namespace tessera::problems {

class SedovSolution {
 public:
  // energy: total blast energy E; rho0: ambient density. Throws tessera::Error(kInput) unless
  // 1 < gamma < 7, E > 0 and rho0 > 0. For gamma >= 7 a uniform-density spherical blast is not
  // of the "standard" kind of Kamm & Timmes (gamma = 7 is singular, above it the core is a
  // vacuum) and the inward integration meets a sonic point; this class does not model that.
  SedovSolution(double gamma, double energy, double rho0);

  // Dimensionless constant of R(t) = xi0 (E t^2 / rho0)^(1/5).
  double xi0() const { return xi0_; }
  // Shock radius at time t > 0.
  double shock_radius(double t) const;

  struct State {
    double rho, u, p;  // u: radial velocity
  };
  // State at radius r >= 0 and time t > 0: ambient (rho0, 0, 0) outside the shock, the
  // tabulated self-similar profile (cubic Hermite interpolation) at and inside it.
  State sample(double r, double t) const;

 private:
  // Similarity variables U, ln G, ln P (u = Rdot U, rho = rho0 G, p = rho0 Rdot^2 P) against
  // x = ln(lambda), lambda = r / R, with their x-derivatives for Hermite interpolation.
  struct Node {
    double x;
    std::array<double, 3> y, dy;
  };
  // U, ln G, ln P at lambda < table_.back(), continued as power laws (see .cpp).
  std::array<double, 3> centre(double x) const;

  double gamma_, energy_, rho0_;
  double xi0_ = 0;
  std::vector<Node> table_;  // x decreasing from 0 (the shock) to ln(lambda_stop)
};

}  // namespace tessera::problems
