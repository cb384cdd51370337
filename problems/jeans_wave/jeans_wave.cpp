// Jeans wave (Schive et al. 2010 §4.4; Jeans 1902): a small density perturbation
// rho = rho0 (1 + A cos(k x)) of a uniform self-gravitating gas, k = 2 pi / L_x along x.
// Linear theory gives omega^2 = c_s^2 k^2 - 4 pi G rho0 (the Jeans length is
// lambda_J = c_s sqrt(pi / (G rho0))):
// - lambda > lambda_J (omega^2 < 0): the pure growing mode, delta = A cos(kx) e^{Gamma t},
//   v_x = -(Gamma / k) A sin(kx) e^{Gamma t}, Gamma = sqrt(4 pi G rho0 - c_s^2 k^2);
// - lambda < lambda_J: a standing wave from rest, delta = A cos(kx) cos(omega t).
// The pressure follows adiabatically, p = p0 + c_s^2 (rho - rho0) (isothermal gas: p = c^2 rho).
// With MHD, a field (problem.bx or problem.by): bx along k leaves the mode alone, by across it
// is compressed with the gas (delta B_y = B_y delta) and adds its pressure: c_s^2 becomes
// the fast speed squared c_s^2 + B_y^2 / rho0 in the dispersion relation (magnetic
// pressure B^2 / 2), which can stabilise a mode that would grow without it.
// The exact linear solution is the test's reference (analytic_density).
#include <cmath>
#include <numbers>

#include "tessera/core/error.hpp"
#include "tessera/problem/problem.hpp"

namespace tessera::problems {

namespace {

struct JeansMode {
  double rho0, p0, amp, c, k, four_pi_g_rho0, bx = 0, by = 0;
  // omega^2 of the linear dispersion relation (c^2 + B_y^2 / rho0: the fast speed).
  double omega2() const { return (c * c + by * by / rho0) * k * k - four_pi_g_rho0; }

  static JeansMode from(const Params& p) {
    const physics::Model model(p);
    JeansMode m;
    m.rho0 = p.real("problem.rho0");
    m.p0 = p.real("problem.p0");
    m.amp = p.real("problem.amplitude");
    m.c = model.has_energy() ? std::sqrt(p.real("hydro.gamma") * m.p0 / m.rho0)
                             : double(model.params().isothermal.sound_speed);
    const auto lo = p.real3("mesh.xmin"), hi = p.real3("mesh.xmax");
    m.k = 2 * std::numbers::pi / (hi[0] - lo[0]);
    m.four_pi_g_rho0 = 4 * std::numbers::pi * p.real("gravity.G") * m.rho0;
    m.bx = p.real("problem.bx");
    m.by = p.real("problem.by");
    return m;
  }

  // Relative density perturbation and velocity at x (offset from xmin) and t.
  void at(double x, double t, double& delta, double& v) const {
    const double w2 = omega2();
    if (w2 < 0) {
      const double gamma = std::sqrt(-w2), g = amp * std::exp(gamma * t);
      delta = g * std::cos(k * x);
      v = -(gamma / k) * g * std::sin(k * x);
    } else {
      const double omega = std::sqrt(w2);
      delta = amp * std::cos(k * x) * std::cos(omega * t);
      v = (omega / k) * amp * std::sin(k * x) * std::sin(omega * t);
    }
  }
};

class JeansWave final : public Problem {
 public:
  explicit JeansWave(const Params& p)
      : mode_(JeansMode::from(p)), x0_(p.real3("mesh.xmin")[0]), model_(p) {}

  void initial_state(const CellBox& cell, Real* u) const override {
    gauss_cell_average(
        cell, model_, [this](std::array<double, 3> x) { return state(x, 0); }, u);
  }

  std::optional<double> analytic_density(const CellBox& cell, double t) const override {
    return gauss_cell_average(cell, [&](std::array<double, 3> x) { return state(x, t).rho; });
  }

 private:
  physics::FlowState state(std::array<double, 3> x, double t) const {
    double delta = 0, v = 0;
    mode_.at(x[0] - x0_, t, delta, v);
    physics::FlowState f;
    f.rho = mode_.rho0 * (1 + delta);
    f.v = {v, 0, 0};
    f.p = mode_.p0 + mode_.c * mode_.c * mode_.rho0 * delta;
    f.B = {mode_.bx, mode_.by * (1 + delta), 0};
    f.s.fill(1.0);
    return f;
  }

  JeansMode mode_;
  double x0_;
  physics::Model model_;
};

void validate_jeans_wave(const Params& p, const mesh::Geometry& g) {
  if (!p.boolean("gravity.enabled") || p.string("gravity.boundary") != "periodic")
    throw Error(ErrorKind::kInput,
                "needs gravity.enabled = true and gravity.boundary = \"periodic\" (this run "
                "has gravity.enabled = " +
                    std::string(p.boolean("gravity.enabled") ? "true" : "false") +
                    ", gravity.boundary = \"" + p.string("gravity.boundary") +
                    "\"): a Jeans mode is the linear wave of a periodic self-gravitating gas");
  require_periodic(p, g, "the mode's wavelength is the box length along x");
  if ((p.real("problem.bx") != 0 || p.real("problem.by") != 0) && !p.boolean("mhd.enabled"))
    throw Error(ErrorKind::kInput, "problem.bx = " + format_number(p.real("problem.bx")) +
                                       ", problem.by = " + format_number(p.real("problem.by")) +
                                       ": a magnetic field needs mhd.enabled = true");
  if (p.real("problem.bx") != 0 && p.real("problem.by") != 0)
    throw Error(ErrorKind::kInput,
                "problem.bx = " + format_number(p.real("problem.bx")) +
                    " and problem.by = " + format_number(p.real("problem.by")) +
                    ": an oblique field couples the fast and slow modes, and the reference "
                    "(c_s^2 + B_y^2 / rho0 in the Jeans relation) holds with one of them only");
  const JeansMode m = JeansMode::from(p);
  const std::string keys =
      "problem.rho0 = " + format_number(m.rho0) + ", problem.amplitude = " + format_number(m.amp);
  require_density_above_floor(p, m.rho0 * (1 - 2 * m.amp),
                              "the density minimum rho0 (1 - A) (" + keys + ")");
  if (Real(m.rho0 * (1 + m.amp)) == Real(m.rho0))
    throw Error(ErrorKind::kInput, "problem.amplitude = " + format_number(m.amp) +
                                       " is below the round-off of the background density (" +
                                       keys + ")");
  if (m.amp > 0.01)
    problem_warning(p, "problem.amplitude = " + format_number(m.amp) +
                           " is not small: the linear solution (the reference) holds to "
                           "O(A) only, and a growing mode leaves the linear regime sooner");
}

std::vector<ParamSpec> jeans_params() {
  const Range positive{0, std::numeric_limits<double>::infinity(), true, false};
  return {
      {"problem", "rho0", ParamType::kReal, 1.0, "background density", positive, 0, {}},
      {"problem",
       "p0",
       ParamType::kReal,
       0.6,
       "background pressure (c_s = 1 for gamma = 5/3; isothermal gas: unused)",
       positive,
       0,
       {}},
      {"problem",
       "amplitude",
       ParamType::kReal,
       1e-6,
       "relative density amplitude A at t = 0",
       {0, 0.5, true, false},
       0,
       {}},
      {"problem",
       "bx",
       ParamType::kReal,
       0.0,
       "magnetic field along k (MHD only; does not change the mode)",
       {},
       0,
       {}},
      {"problem",
       "by",
       ParamType::kReal,
       0.0,
       "magnetic field across k (MHD only; its pressure stiffens the mode: c_s^2 + B_y^2 / "
       "rho0)",
       {},
       0,
       {}},
  };
}

const ProblemRegistrar kRegistrar{{
    "jeans_wave",
    "Jeans mode of a periodic self-gravitating gas along x: growth (wavelength above the "
    "Jeans length) or oscillation, against linear theory",
    jeans_params,
    [](const Params& p) -> std::unique_ptr<Problem> { return std::make_unique<JeansWave>(p); },
    validate_jeans_wave, [](const Params&) { return 1; },  // along x
}};

}  // namespace

}  // namespace tessera::problems
