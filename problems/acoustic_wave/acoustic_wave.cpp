// Linear sound wave travelling along the box diagonal (GAMER's accuracy test, Schive et al.
// 2010 §4.1): rho = rho0 (1 + A sin(k.x - w t)), v = c A sin(.) k/|k|, p = p0 + c^2 rho0 A sin(.)
// with k = 2 pi (1/Lx, 1/Ly, 1/Lz), periodic in the box. After one period the exact
// solution is the initial state, so the L1 error measures the scheme's error alone.
#include <cmath>

#include "tessera/core/problem.hpp"

namespace tessera::problems {

namespace {

class AcousticWave final : public Problem {
 public:
  explicit AcousticWave(const Params& p)
      : rho0_(p.real("problem.rho0")),
        p0_(p.real("problem.p0")),
        amp_(p.real("problem.amplitude")),
        gamma_(p.real("hydro.gamma")),
        refine_lo_(p.real3("problem.refine_lo")),
        refine_hi_(p.real3("problem.refine_hi")) {
    const auto lo = p.real3("mesh.xmin"), hi = p.real3("mesh.xmax");
    double k2 = 0;
    for (int d = 0; d < 3; ++d) {
      k_[d] = 2 * M_PI / (hi[d] - lo[d]);
      k2 += k_[d] * k_[d];
    }
    kmag_ = std::sqrt(k2);
    c_ = std::sqrt(gamma_ * p0_ / rho0_);
  }

  kernels::Cons initial_state(const CellBox& cell) const override {
    return gauss_cell_average(cell, [this](std::array<double, 3> x) { return state(x, 0); });
  }

  std::optional<double> analytic_density(const CellBox& cell, double t) const override {
    return gauss_cell_average(cell, [&](std::array<double, 3> x) { return state(x, t); }).dens;
  }

  // A static refined region (problem.refine_lo/hi): cells whose centre lies inside.
  bool has_refine_criterion() const override { return true; }
  bool refine(const CellBox& cell, double, int) const override {
    const auto c = cell.center();
    for (int d = 0; d < 3; ++d)
      if (c[d] < refine_lo_[d] || c[d] > refine_hi_[d]) return false;
    return true;
  }

 private:
  kernels::Cons state(std::array<double, 3> x, double t) const {
    const double s = amp_ * std::sin(k_[0] * x[0] + k_[1] * x[1] + k_[2] * x[2] - c_ * kmag_ * t);
    kernels::Prim w;
    w.rho = Real(rho0_ * (1 + s));
    for (int d = 0; d < 3; ++d) w.v[d] = Real(c_ * s * k_[d] / kmag_);
    w.p = Real(p0_ + c_ * c_ * rho0_ * s);
    return kernels::prim_to_cons(w, Real(gamma_));
  }

  double rho0_, p0_, amp_, gamma_;
  std::array<double, 3> refine_lo_, refine_hi_;
  std::array<double, 3> k_{};
  double kmag_ = 0, c_ = 0;
};

std::vector<ParamSpec> acoustic_params() {
  const Range positive{0, std::numeric_limits<double>::infinity(), true, false};
  return {
      {"problem", "rho0", ParamType::kReal, 1.0, "background density", positive, 0, {}},
      {"problem",
       "p0",
       ParamType::kReal,
       0.6,
       "background pressure (c_s = 1 for gamma = 5/3)",
       positive,
       0,
       {}},
      {"problem",
       "amplitude",
       ParamType::kReal,
       1e-6,
       "relative density amplitude A",
       {0, 0.1, true, false},
       0,
       {}},
      {"problem",
       "refine_lo",
       ParamType::kReal3,
       std::array<double, 3>{0, 0, 0},
       "lower corner of a static refined region (with amr.max_level > 0)",
       {},
       0,
       {}},
      {"problem",
       "refine_hi",
       ParamType::kReal3,
       std::array<double, 3>{0, 0, 0},
       "upper corner of the static refined region (none unless above refine_lo)",
       {},
       0,
       {}},
  };
}

const ProblemRegistrar kRegistrar{{
    "acoustic_wave",
    "Small-amplitude sound wave along the box diagonal (periodic); exact linear solution",
    acoustic_params,
    [](const Params& p) -> std::unique_ptr<Problem> { return std::make_unique<AcousticWave>(p); },
}};

}  // namespace

}  // namespace tessera::problems
