// Sedov-Taylor point explosion in 3D (Sedov 1959; Wang, Abel & Kaehler 2009 §6.2): energy E
// deposited uniformly as thermal energy in a sphere of radius r0 in a cold uniform medium. At late
// times the shock radius is xi0 (E t^2 / rho0)^(1/5) (sedov_solution.hpp).
#include <cmath>

#include "problems/sedov/sedov_solution.hpp"
#include "tessera/core/problem.hpp"

namespace tessera::problems {

namespace {

class Sedov final : public Problem {
 public:
  explicit Sedov(const Params& p)
      : energy_(p.real("problem.energy")),
        r0_(p.real("problem.radius")),
        rho0_(p.real("problem.rho0")),
        p0_(p.real("problem.p0")),
        gamma_(p.real("hydro.gamma")),
        center_(p.real3("problem.center")),
        solution_(gamma_, energy_, rho0_) {}

  kernels::Cons initial_state(const CellBox& cell) const override {
    // Fraction of the cell inside the sphere, by subsampling the cells the sphere's
    // surface crosses, so the deposited energy converges to E as the sphere is resolved.
    const double f = volume_fraction(cell);
    const double e_in = energy_ / (4.0 / 3.0 * M_PI * r0_ * r0_ * r0_);
    kernels::Cons u;
    u.dens = Real(rho0_);
    u.mom[0] = u.mom[1] = u.mom[2] = 0;
    u.engy = Real(p0_ / (gamma_ - 1) + f * e_in);
    return u;
  }

  std::optional<double> analytic_density(const CellBox& cell, double t) const override {
    if (t <= 0) return std::nullopt;
    const auto c = cell.center();
    double r2 = 0;
    for (int d = 0; d < 3; ++d) r2 += (c[d] - center_[d]) * (c[d] - center_[d]);
    return solution_.sample(std::sqrt(r2), t).rho;
  }

 private:
  double volume_fraction(const CellBox& cell) const {
    double near = 0, far = 0;
    for (int d = 0; d < 3; ++d) {
      const double a = cell.lo[d] - center_[d], b = cell.hi[d] - center_[d];
      const double closest = (a > 0) ? a : (b < 0 ? b : 0.0);
      const double farthest = std::max(std::fabs(a), std::fabs(b));
      near += closest * closest;
      far += farthest * farthest;
    }
    if (near >= r0_ * r0_) return 0;
    if (far <= r0_ * r0_) return 1;
    constexpr int n = 16;
    int inside = 0;
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
          const int q[3] = {i, j, k};
          double r2 = 0;
          for (int d = 0; d < 3; ++d) {
            const double x = cell.lo[d] + (q[d] + 0.5) / n * (cell.hi[d] - cell.lo[d]);
            r2 += (x - center_[d]) * (x - center_[d]);
          }
          inside += r2 < r0_ * r0_;
        }
    return double(inside) / (n * n * n);
  }

  double energy_, r0_, rho0_, p0_, gamma_;
  std::array<double, 3> center_;
  SedovSolution solution_;
};

std::vector<ParamSpec> sedov_params() {
  const Range positive{0, std::numeric_limits<double>::infinity(), true, false};
  return {
      {"problem", "energy", ParamType::kReal, 1.0, "blast energy E", positive, 0, {}},
      {"problem",
       "radius",
       ParamType::kReal,
       0.04,
       "radius r0 of the sphere the energy is deposited in (a few cells)",
       positive,
       0,
       {}},
      {"problem", "rho0", ParamType::kReal, 1.0, "ambient density", positive, 0, {}},
      {"problem", "p0", ParamType::kReal, 1e-5, "ambient pressure", positive, 0, {}},
      {"problem",
       "center",
       ParamType::kReal3,
       std::array<double, 3>{0, 0, 0},
       "centre of the explosion",
       {},
       0,
       {}},
  };
}

const ProblemRegistrar kRegistrar{{
    "sedov",
    "Sedov-Taylor point explosion in 3D; self-similar solution as reference",
    sedov_params,
    [](const Params& p) -> std::unique_ptr<Problem> { return std::make_unique<Sedov>(p); },
}};

}  // namespace

}  // namespace tessera::problems
