// Linear sound wave travelling along the box diagonal (GAMER's accuracy test, Schive et al.
// 2010 §4.1): rho = rho0 (1 + A sin(k.x - w t)), v = c A sin(.) k/|k|, p = p0 + c^2 rho0 A sin(.)
// with k = 2 pi (1/Lx, 1/Ly, 1/Lz), periodic in the box. After one period the exact
// solution is the initial state, so the L1 error measures the scheme's error alone.
#include <algorithm>
#include <cmath>

#include "tessera/core/error.hpp"
#include "tessera/problem/problem.hpp"

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
        refine_hi_(p.real3("problem.refine_hi")),
        model_(p) {
    const auto lo = p.real3("mesh.xmin"), hi = p.real3("mesh.xmax");
    double k2 = 0;
    for (int d = 0; d < 3; ++d) {
      k_[d] = 2 * M_PI / (hi[d] - lo[d]);
      k2 += k_[d] * k_[d];
    }
    kmag_ = std::sqrt(k2);
    // Isothermal gas: c is hydro.iso_sound_speed and the pressure follows the density.
    c_ = model_.has_energy() ? std::sqrt(gamma_ * p0_ / rho0_)
                             : double(model_.params().isothermal.sound_speed);
  }

  // Passive scalars, if any, have the uniform concentration 1, which they must keep.
  void initial_state(const CellBox& cell, Real* u) const override {
    gauss_cell_average(
        cell, model_, [this](std::array<double, 3> x) { return state(x, 0); }, u);
  }

  std::optional<double> analytic_density(const CellBox& cell, double t) const override {
    return gauss_cell_average(cell, [&](std::array<double, 3> x) { return state(x, t).rho; });
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
  physics::FlowState state(std::array<double, 3> x, double t) const {
    const double s = amp_ * std::sin(k_[0] * x[0] + k_[1] * x[1] + k_[2] * x[2] - c_ * kmag_ * t);
    physics::FlowState f;
    f.rho = double(Real(rho0_ * (1 + s)));
    for (int d = 0; d < 3; ++d) f.v[d] = double(Real(c_ * s * k_[d] / kmag_));
    f.p = double(Real(p0_ + c_ * c_ * rho0_ * s));
    f.s.fill(1.0);
    return f;
  }

  double rho0_, p0_, amp_, gamma_;
  std::array<double, 3> refine_lo_, refine_hi_;
  std::array<double, 3> k_{};
  double kmag_ = 0, c_ = 0;
  physics::Model model_;
};

// What makes the sound wave meaningless (see ProblemInfo::validate).
void validate_acoustic_wave(const Params& p, const mesh::Geometry& g) {
  // The wavelengths are the box lengths: only a periodic box holds the wave (any other
  // boundary reflects or distorts it, and the exact solution ignores that).
  require_periodic(p, g,
                   "the wave's wavelengths along x, y and z are the box lengths and its exact "
                   "solution is periodic in the box");
  const double rho0 = p.real("problem.rho0"), p0 = p.real("problem.p0");
  const double amp = p.real("problem.amplitude"), gamma = p.real("hydro.gamma");
  const std::string keys =
      "problem.rho0 = " + format_number(rho0) + ", problem.p0 = " + format_number(p0) +
      ", problem.amplitude = " + format_number(amp) + ", hydro.gamma = " + format_number(gamma);
  // The extremes of the wave: rho0 (1 -+ A), p0 (1 -+ gamma A) (c^2 rho0 = gamma p0), and
  // |v| = c A; below zero the "linear" wave has a negative pressure.
  require_density_above_floor(
      p, rho0 * (1 - amp),
      "the density minimum rho0 (1 - A) = " + format_number(rho0 * (1 - amp)) + " (" + keys + ")");
  require_pressure_above_floor(p, p0 * (1 - gamma * amp),
                               "the pressure minimum p0 (1 - gamma A) = " +
                                   format_number(p0 * (1 - gamma * amp)) + " (" + keys + ")");
  // An amplitude within round-off of the background leaves no wave at all.
  if (Real(rho0 * (1 + amp)) == Real(rho0) || Real(p0 * (1 + gamma * amp)) == Real(p0))
    throw Error(ErrorKind::kInput,
                "problem.amplitude = " + format_number(amp) +
                    " is below the round-off of the background state (" + keys +
                    "): the crest's density or pressure equals the background's in " +
                    (sizeof(Real) == sizeof(float) ? "single" : "double") + " precision");
  const double c = std::sqrt(gamma * p0 / rho0);
  for (const double s : {-amp, amp})
    require_representable_state(
        p, rho0 * (1 + s), {c * s, 0, 0}, p0 * (1 + gamma * s),
        "the wave's " + std::string(s > 0 ? "crest" : "trough") + " (" + keys + ")");
  // The static refined region: given when refine_hi differs from refine_lo (both default to
  // 0, no region). refine() tests cell centres and refinement starts on the root grid, so a
  // region holding no root cell centre refines nothing.
  const auto lo = p.real3("problem.refine_lo"), hi = p.real3("problem.refine_hi");
  if (lo == hi) return;
  const std::string region = "the refined region problem.refine_lo = " + format_point(lo) +
                             ", problem.refine_hi = " + format_point(hi);
  for (int d = 0; d < 3; ++d)
    if (!(hi[d] > lo[d]))
      throw Error(ErrorKind::kInput, region + " is empty along " + "xyz"[d] +
                                         ": refine_hi must exceed refine_lo along every axis");
  bool holds_centre = true;
  for (int d = 0; d < 3; ++d) {
    // The first root cell centre at or above lo[d], if any lies in the domain.
    const double i = std::max(0.0, std::ceil((lo[d] - g.xmin[d]) / g.dx0 - 0.5));
    const double centre = g.xmin[d] + (i + 0.5) * g.dx0;
    holds_centre = holds_centre && i < g.root_cells[d] && centre <= hi[d];
  }
  const int max_level = static_cast<int>(p.integer("amr.max_level"));
  if (!holds_centre && max_level > 0)
    throw Error(ErrorKind::kInput,
                region + " holds no root cell centre (root cell width " + format_number(g.dx0) +
                    ", domain " + domain_extent(g) +
                    "): nothing would be refined; enlarge it or move it into the domain");
  if (max_level == 0) problem_warning(p, region + " has no effect with amr.max_level = 0");
}

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
    validate_acoustic_wave,
    [](const Params&) { return 3; },  // the flow varies along all three axes
}};

}  // namespace

}  // namespace tessera::problems
