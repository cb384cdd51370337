// Evrard collapse (Evrard 1988, MNRAS 235, 911): a cold gas sphere of mass M and radius R
// with rho(r) = M / (2 pi R^2 r), at rest, with the specific internal energy
// u = problem.thermal G M / R (0.05 in the standard set-up) and gamma = 5/3, collapses
// under its own gravity, bounces and virialises. Isolated boundaries. Its potential energy
// is W = -(2/3) G M^2 / R and its thermal energy problem.thermal G M^2 / R; the run's
// total energy (kinetic + thermal + potential, logged as "gravity: ... total energy")
// should stay at W + problem.thermal G M^2 / R through the bounce, to the truncation error
// of the scheme's source-term form of gravity (kernels/gravity.hpp).
#include <cmath>
#include <numbers>

#include "tessera/core/error.hpp"
#include "tessera/problem/problem.hpp"

namespace tessera::problems {

namespace {

class EvrardCollapse final : public Problem {
 public:
  explicit EvrardCollapse(const Params& p)
      : mass_(p.real("problem.mass")),
        radius_(p.real("problem.radius")),
        rho_b_(p.real("problem.background")),
        u_(p.real("problem.thermal") * p.real("gravity.G") * p.real("problem.mass") /
           p.real("problem.radius")),
        gamma_(p.real("hydro.gamma")),
        model_(p) {
    const auto lo = p.real3("mesh.xmin"), hi = p.real3("mesh.xmax");
    for (int d = 0; d < 3; ++d) center_[d] = 0.5 * (lo[d] + hi[d]);
  }

  void initial_state(const CellBox& cell, Real* u) const override {
    gauss_cell_average(
        cell, model_,
        [this](std::array<double, 3> x) {
          physics::FlowState f;
          f.rho = density(x);
          // The background has the sphere's temperature (specific energy) too.
          f.p = (gamma_ - 1) * f.rho * u_;
          f.s.fill(1.0);
          return f;
        },
        u);
  }

 private:
  double density(const std::array<double, 3>& x) const {
    double r2 = 0;
    for (int d = 0; d < 3; ++d) r2 += (x[d] - center_[d]) * (x[d] - center_[d]);
    const double r = std::sqrt(r2);
    if (r >= radius_) return rho_b_;
    // The 1/r cusp: a point exactly at the centre takes the value at a tiny radius (the
    // cell averages are finite: the quadrature points never sit on the centre).
    return std::max(
        rho_b_, mass_ / (2 * std::numbers::pi * radius_ * radius_ * std::max(r, 1e-6 * radius_)));
  }

  double mass_, radius_, rho_b_, u_, gamma_;
  std::array<double, 3> center_{};
  physics::Model model_;
};

void validate_evrard(const Params& p, const mesh::Geometry& g) {
  if (!p.boolean("gravity.enabled") || p.string("gravity.boundary") != "isolated")
    throw Error(ErrorKind::kInput,
                "needs gravity.enabled = true and gravity.boundary = \"isolated\": the sphere "
                "collapses under its own gravity, alone in space");
  if (p.string("hydro.eos") != "adiabatic")
    throw Error(ErrorKind::kInput,
                "hydro.eos = \"" + p.string("hydro.eos") + "\": the collapse heats the gas");
  const double r = p.real("problem.radius");
  for (int d = 0; d < 3; ++d)
    if (!(2 * r < g.xmax[d] - g.xmin[d]))
      throw Error(ErrorKind::kInput, "the sphere (problem.radius = " + format_number(r) +
                                         ") does not fit in the domain " + domain_extent(g));
  const double surface = p.real("problem.mass") / (2 * std::numbers::pi * r * r * r);
  if (!(p.real("problem.background") < surface))
    throw Error(ErrorKind::kInput,
                "problem.background = " + format_number(p.real("problem.background")) +
                    " is not below the sphere's surface density M / (2 pi R^3) = " +
                    format_number(surface));
  require_density_above_floor(
      p, p.real("problem.background"),
      "problem.background = " + format_number(p.real("problem.background")));
}

std::vector<ParamSpec> evrard_params() {
  const Range positive{0, std::numeric_limits<double>::infinity(), true, false};
  return {
      {"problem", "mass", ParamType::kReal, 1.0, "mass M of the sphere", positive, 0, {}},
      {"problem", "radius", ParamType::kReal, 1.0, "radius R of the sphere", positive, 0, {}},
      {"problem",
       "thermal",
       ParamType::kReal,
       0.05,
       "specific internal energy in units of G M / R",
       positive,
       0,
       {}},
      {"problem",
       "background",
       ParamType::kReal,
       1e-4,
       "density outside the sphere (same specific internal energy)",
       positive,
       0,
       {}},
  };
}

const ProblemRegistrar kRegistrar{{
    "evrard_collapse",
    "Adiabatic collapse of a cold self-gravitating gas sphere (Evrard 1988), isolated "
    "boundaries; total energy conservation through the bounce",
    evrard_params,
    [](const Params& p) -> std::unique_ptr<Problem> { return std::make_unique<EvrardCollapse>(p); },
    validate_evrard, [](const Params&) { return 3; },  // the flow varies along all three axes
}};

}  // namespace

}  // namespace tessera::problems
