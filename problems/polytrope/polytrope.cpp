// Polytrope in hydrostatic equilibrium: the n = 1 solution of the Lane-Emden equation,
// theta(xi) = sin(xi) / xi, centred in the domain with isolated self-gravity. With
// p = K rho^2 and alpha^2 = K / (2 pi G) (Chandrasekhar 1939, ch. IV):
//   rho(r) = rho_c sin(r / alpha) / (r / alpha),   p = K rho^2,   r < R = pi alpha,
// at rest; outside R a background of density problem.background with the pressure
// K background^2. The gas keeps p = K rho^2 as its initial state only: hydro.gamma decides
// how it responds to perturbations (stable for gamma > 4/3). A good scheme keeps the star
// in place; the test measures the central density and the mass-weighted speed.
#include <cmath>
#include <numbers>

#include "tessera/core/error.hpp"
#include "tessera/problem/problem.hpp"

namespace tessera::problems {

namespace {

class Polytrope final : public Problem {
 public:
  explicit Polytrope(const Params& p)
      : rho_c_(p.real("problem.central_density")),
        radius_(p.real("problem.radius")),
        rho_b_(p.real("problem.background")),
        model_(p) {
    const auto lo = p.real3("mesh.xmin"), hi = p.real3("mesh.xmax");
    for (int d = 0; d < 3; ++d) center_[d] = 0.5 * (lo[d] + hi[d]);
    alpha_ = radius_ / std::numbers::pi;
    k_ = 2 * std::numbers::pi * p.real("gravity.G") * alpha_ * alpha_;
  }

  void initial_state(const CellBox& cell, Real* u) const override {
    gauss_cell_average(
        cell, model_,
        [this](std::array<double, 3> x) {
          physics::FlowState f;
          f.rho = density(x);
          f.p = k_ * f.rho * f.rho;
          f.s.fill(1.0);
          return f;
        },
        u);
  }

  // The equilibrium is the solution at every time.
  std::optional<double> analytic_density(const CellBox& cell, double) const override {
    return gauss_cell_average(cell, [this](std::array<double, 3> x) { return density(x); });
  }

 private:
  double density(const std::array<double, 3>& x) const {
    double r2 = 0;
    for (int d = 0; d < 3; ++d) r2 += (x[d] - center_[d]) * (x[d] - center_[d]);
    const double xi = std::sqrt(r2) / alpha_;
    if (xi >= std::numbers::pi) return rho_b_;
    return std::max(rho_b_, xi < 1e-8 ? rho_c_ : rho_c_ * std::sin(xi) / xi);
  }

  double rho_c_, radius_, rho_b_, alpha_ = 0, k_ = 0;
  std::array<double, 3> center_{};
  physics::Model model_;
};

void validate_polytrope(const Params& p, const mesh::Geometry& g) {
  if (!p.boolean("gravity.enabled") || p.string("gravity.boundary") != "isolated")
    throw Error(ErrorKind::kInput,
                "needs gravity.enabled = true and gravity.boundary = \"isolated\": the star is "
                "held together by its own gravity, alone in space");
  const double r = p.real("problem.radius");
  for (int d = 0; d < 3; ++d)
    if (!(2 * r < g.xmax[d] - g.xmin[d]))
      throw Error(ErrorKind::kInput, "the star (problem.radius = " + format_number(r) +
                                         ") does not fit in the domain " + domain_extent(g));
  if (!(p.real("problem.background") < p.real("problem.central_density")))
    throw Error(ErrorKind::kInput,
                "problem.background = " + format_number(p.real("problem.background")) +
                    " must be below problem.central_density = " +
                    format_number(p.real("problem.central_density")));
  require_density_above_floor(
      p, p.real("problem.background"),
      "problem.background = " + format_number(p.real("problem.background")));
  if (p.string("hydro.eos") != "adiabatic")
    throw Error(ErrorKind::kInput, "hydro.eos = \"" + p.string("hydro.eos") +
                                       "\": the polytrope's pressure K rho^2 needs an "
                                       "adiabatic gas");
  if (r < 4 * g.dx0)
    problem_warning(p, "problem.radius = " + format_number(r) + " is " + format_number(r / g.dx0) +
                           " root cells: the star's profile is barely resolved");
}

std::vector<ParamSpec> polytrope_params() {
  const Range positive{0, std::numeric_limits<double>::infinity(), true, false};
  return {
      {"problem",
       "central_density",
       ParamType::kReal,
       1.0,
       "central density rho_c",
       positive,
       0,
       {}},
      {"problem",
       "radius",
       ParamType::kReal,
       0.25,
       "radius R = pi alpha of the star",
       positive,
       0,
       {}},
      {"problem",
       "background",
       ParamType::kReal,
       1e-5,
       "density outside the star (pressure K background^2)",
       positive,
       0,
       {}},
  };
}

const ProblemRegistrar kRegistrar{{
    "polytrope",
    "n = 1 polytrope (Lane-Emden) in hydrostatic equilibrium with isolated self-gravity",
    polytrope_params,
    [](const Params& p) -> std::unique_ptr<Problem> { return std::make_unique<Polytrope>(p); },
    validate_polytrope, [](const Params&) { return 3; },  // the flow varies along all three axes
}};

}  // namespace

}  // namespace tessera::problems
