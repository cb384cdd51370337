// Uniform sphere (the spectral Poisson test of seed 004; Hockney & Eastwood 1981): gas of
// density problem.density inside a sphere of problem.radius centred in the domain, in a
// background of problem.background, at rest with the uniform pressure problem.pressure.
// With isolated boundaries the potential of the sphere is analytic:
// -2 pi G rho (R^2 - r^2 / 3) inside, -G M / r outside, M = (4/3) pi R^3 rho. The
// background's own potential is not included: with background << density it is a
// correction of relative order (background / density) (L / R)^2.
//
// problem.profile = "gaussian": the smooth isolated test instead, density
// background + (density - background) exp(-r^2 / 2 sigma^2) with sigma = problem.radius,
// sampled at cell centres; potential -G M erf(r / (sqrt(2) sigma)) / r,
// M = (2 pi)^(3/2) sigma^3 (density - background). The domain must reach 5 sigma from the
// centre, where the density has fallen to 4e-6 of the peak.
#include <cmath>
#include <numbers>

#include "tessera/core/error.hpp"
#include "tessera/problem/problem.hpp"

namespace tessera::problems {

namespace {

class UniformSphere final : public Problem {
 public:
  explicit UniformSphere(const Params& p)
      : radius_(p.real("problem.radius")),
        rho_in_(p.real("problem.density")),
        rho_out_(p.real("problem.background")),
        pressure_(p.real("problem.pressure")),
        gaussian_(p.string("problem.profile") == "gaussian"),
        model_(p) {
    const auto lo = p.real3("mesh.xmin"), hi = p.real3("mesh.xmax");
    for (int d = 0; d < 3; ++d) center_[d] = 0.5 * (lo[d] + hi[d]);
  }

  // Cells cut by the surface are averaged over 8^3 sub-cells, so the sphere's mass is
  // close to (4/3) pi R^3 (density - background) + the background's.
  void initial_state(const CellBox& cell, Real* u) const override {
    const double h = cell.hi[0] - cell.lo[0];
    const auto c = cell.center();
    if (gaussian_) {
      const double r = distance(c);
      physics::FlowState f;
      f.rho = rho_out_ + (rho_in_ - rho_out_) * std::exp(-0.5 * r * r / (radius_ * radius_));
      f.p = pressure_;
      f.s.fill(1.0);
      model_.to_conserved(f, u);
      return;
    }
    const double r = distance(c), half_diag = 0.5 * std::sqrt(3.0) * h;
    double inside = r + half_diag <= radius_ ? 1.0 : (r - half_diag >= radius_ ? 0.0 : -1);
    if (inside < 0) {
      constexpr int m = 8;
      int count = 0;
      for (int a = 0; a < m; ++a)
        for (int b = 0; b < m; ++b)
          for (int e = 0; e < m; ++e) {
            const std::array<double, 3> x = {cell.lo[0] + (a + 0.5) * h / m,
                                             cell.lo[1] + (b + 0.5) * h / m,
                                             cell.lo[2] + (e + 0.5) * h / m};
            count += distance(x) < radius_;
          }
      inside = count / double(m * m * m);
    }
    physics::FlowState f;
    f.rho = rho_out_ + inside * (rho_in_ - rho_out_);
    f.p = pressure_;
    f.s.fill(1.0);
    model_.to_conserved(f, u);
  }

 private:
  double distance(const std::array<double, 3>& x) const {
    double r2 = 0;
    for (int d = 0; d < 3; ++d) r2 += (x[d] - center_[d]) * (x[d] - center_[d]);
    return std::sqrt(r2);
  }

  double radius_, rho_in_, rho_out_, pressure_;
  bool gaussian_;
  std::array<double, 3> center_{};
  physics::Model model_;
};

void validate_uniform_sphere(const Params& p, const mesh::Geometry& g) {
  if (!p.boolean("gravity.enabled"))
    throw Error(ErrorKind::kInput,
                "needs gravity.enabled = true (this run has gravity.enabled = false): the "
                "sphere is the test of the Poisson solve, whose potential is compared with the "
                "analytic one; without self-gravity it is gas at rest");
  const double r = p.real("problem.radius");
  const std::string what =
      "the sphere (problem.radius = " + format_number(r) + ", centred at the domain's centre)";
  const bool gaussian = p.string("problem.profile") == "gaussian";
  for (int d = 0; d < 3; ++d)
    if (gaussian ? !(10 * r <= g.xmax[d] - g.xmin[d]) : !(2 * r < g.xmax[d] - g.xmin[d]))
      throw Error(ErrorKind::kInput,
                  gaussian ? "the Gaussian sphere (problem.profile = \"gaussian\", sigma = "
                             "problem.radius = " +
                                 format_number(r) +
                                 ") needs 5 sigma from the domain's centre to every face, "
                                 "where its density has fallen to 4e-6 of the peak, and the "
                                 "domain " +
                                 domain_extent(g) + " is narrower along " + "xyz"[d]
                           : what + " does not fit in the domain " + domain_extent(g) + " along " +
                                 "xyz"[d]);
  if (!(p.real("problem.density") > p.real("problem.background")))
    throw Error(ErrorKind::kInput, "problem.density = " + format_number(p.real("problem.density")) +
                                       " must exceed problem.background = " +
                                       format_number(p.real("problem.background")));
  require_density_above_floor(
      p, p.real("problem.background"),
      "problem.background = " + format_number(p.real("problem.background")));
  require_pressure_above_floor(p, p.real("problem.pressure"),
                               "problem.pressure = " + format_number(p.real("problem.pressure")));
  if (r < (gaussian ? 1 : 2) * g.dx0 * std::pow(0.5, double(p.integer("amr.max_level"))))
    throw Error(ErrorKind::kInput,
                what + " is smaller than " + (gaussian ? "one cell" : "two cells") +
                    " of the finest level (" +
                    format_number(g.dx0 * std::pow(0.5, double(p.integer("amr.max_level")))) +
                    "): nothing of its shape is resolved");
}

std::vector<ParamSpec> sphere_params() {
  const Range positive{0, std::numeric_limits<double>::infinity(), true, false};
  return {
      {"problem",
       "radius",
       ParamType::kReal,
       0.25,
       "radius R of the sphere (sigma of the Gaussian profile)",
       positive,
       0,
       {}},
      {"problem", "density", ParamType::kReal, 1.0, "density inside the sphere", positive, 0, {}},
      {"problem",
       "background",
       ParamType::kReal,
       1e-6,
       "density outside the sphere",
       positive,
       0,
       {}},
      {"problem", "pressure", ParamType::kReal, 1e-6, "uniform pressure", positive, 0, {}},
      {"problem",
       "profile",
       ParamType::kString,
       std::string("uniform"),
       "density profile: \"uniform\" inside problem.radius, or \"gaussian\" with sigma = "
       "problem.radius (the smooth test of the solvers' convergence order)",
       {},
       0,
       {"uniform", "gaussian"}},
  };
}

const ProblemRegistrar kRegistrar{{
    "uniform_sphere",
    "Uniform-density sphere centred in the domain: the Poisson solver's test (analytic "
    "potential with isolated boundaries)",
    sphere_params,
    [](const Params& p) -> std::unique_ptr<Problem> { return std::make_unique<UniformSphere>(p); },
    validate_uniform_sphere,
    [](const Params&) { return 3; },  // the flow varies along all three axes
}};

}  // namespace

}  // namespace tessera::problems
