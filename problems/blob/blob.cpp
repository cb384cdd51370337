// A Gaussian density blob in pressure equilibrium, advected through a periodic box:
// rho = rho0 (1 + A exp(-|x - c - v t|^2 / w^2)) (nearest periodic image), uniform
// pressure and velocity. The exact solution is the advected profile. Refinement follows
// the blob, so the hierarchy changes every few steps: the test of AMR conservation.
#include <cmath>

#include "tessera/core/problem.hpp"

namespace tessera::problems {

namespace {

class Blob final : public Problem {
 public:
  explicit Blob(const Params& p)
      : rho0_(p.real("problem.rho0")),
        amp_(p.real("problem.amplitude")),
        width_(p.real("problem.width")),
        pressure_(p.real("problem.pressure")),
        gamma_(p.real("hydro.gamma")),
        center_(p.real3("problem.center")),
        velocity_(p.real3("problem.velocity")),
        lo_(p.real3("mesh.xmin")),
        hi_(p.real3("mesh.xmax")) {}

  kernels::Cons initial_state(const CellBox& cell) const override {
    return gauss_cell_average(cell, [this](std::array<double, 3> x) {
      kernels::Prim w{Real(density(x, 0)), {}, Real(pressure_)};
      for (int d = 0; d < 3; ++d) w.v[d] = Real(velocity_[d]);
      return kernels::prim_to_cons(w, Real(gamma_));
    });
  }

  std::optional<double> analytic_density(const CellBox& cell, double t) const override {
    return gauss_cell_average(cell,
                              [&](std::array<double, 3> x) {
                                return kernels::Cons{Real(density(x, t)), {0, 0, 0}, 0};
                              })
        .dens;
  }

 private:
  double density(std::array<double, 3> x, double t) const {
    double r2 = 0;
    for (int d = 0; d < 3; ++d) {
      const double len = hi_[d] - lo_[d];
      double dx = x[d] - center_[d] - velocity_[d] * t;
      dx -= len * std::round(dx / len);  // nearest periodic image
      r2 += dx * dx;
    }
    return rho0_ * (1 + amp_ * std::exp(-r2 / (width_ * width_)));
  }

  double rho0_, amp_, width_, pressure_, gamma_;
  std::array<double, 3> center_, velocity_, lo_, hi_;
};

std::vector<ParamSpec> blob_params() {
  const Range positive{0, std::numeric_limits<double>::infinity(), true, false};
  return {
      {"problem", "rho0", ParamType::kReal, 1.0, "background density", positive, 0, {}},
      {"problem",
       "amplitude",
       ParamType::kReal,
       2.0,
       "relative density excess A at the centre",
       {0, std::numeric_limits<double>::infinity()},
       0,
       {}},
      {"problem", "width", ParamType::kReal, 0.1, "Gaussian width w", positive, 0, {}},
      {"problem", "pressure", ParamType::kReal, 1.0, "uniform pressure", positive, 0, {}},
      {"problem",
       "center",
       ParamType::kReal3,
       std::array<double, 3>{0.5, 0.5, 0.5},
       "initial centre",
       {},
       0,
       {}},
      {"problem",
       "velocity",
       ParamType::kReal3,
       std::array<double, 3>{1.0, 0.5, 0.25},
       "advection velocity",
       {},
       0,
       {}},
  };
}

const ProblemRegistrar kRegistrar{{
    "blob",
    "Gaussian density blob advected through a periodic box; exact solution",
    blob_params,
    [](const Params& p) -> std::unique_ptr<Problem> { return std::make_unique<Blob>(p); },
}};

}  // namespace

}  // namespace tessera::problems
