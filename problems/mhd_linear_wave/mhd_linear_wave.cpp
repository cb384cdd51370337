// Linear MHD waves (Gardiner & Stone 2008, J. Comput. Phys. 227, 4123; Stone et al. 2008,
// ApJS 178, 137): one eigenmode of ideal MHD (fast, Alfven, slow or entropy)
// of amplitude A about the uniform state rho = 1, p = 1/gamma, B = (1, sqrt 2, 1/2) in the
// frame of the wave (normal, transverse 1, transverse 2), travelling along
// k = 2 pi (m_x / L_x, m_y / L_y, m_z / L_z) through a periodic box:
//   W(x, t) = W0 + A r sin(k.x - |k| (v_flow + c) t),
// r the primitive right eigenvector of the wave and c its speed relative to the flow
// (problems/mhd_linear_wave/mhd_eigenmodes.hpp). The default m = (1, 1, 0) puts k on the
// diagonal of the x-y face, oblique to the grid and to the field (which has components along
// all three axes), so that a box thin in z holds it: n x n x 16 cells (16, one patch group,
// the fewest along an axis) give n / sqrt 2 cells per wavelength, the cheapest periodic box
// for a given resolution of an oblique wave; along the cube's diagonal, as Athena++'s 3D test
// does, N cells per wavelength take (sqrt 3 N)^3 cells instead of 2 N^2 x 16. After a whole
// number of periods the exact solution is the initial state, so the error measures the
// scheme alone.
#include <cmath>
#include <limits>

#include "problems/mhd_linear_wave/mhd_eigenmodes.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/problem/problem.hpp"

namespace tessera::problems {

namespace {

using Vec3 = std::array<double, 3>;

Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

double norm(const Vec3& a) {
  return std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
}

// The wave's geometry and eigenmode, shared by the problem and its validate hook.
struct WaveSetup {
  Vec3 k{};          // wave vector
  double kmag = 0;   // |k| = 2 pi / wavelength
  Vec3 e[3]{};       // wave frame: e[0] = k / |k|, e[1], e[2] transverse
  MhdBackground bg;  // in the wave frame
  MhdWave wave = MhdWave::kFast;
  double speed = 0;  // v_flow + c: the phase speed along k
  double amplitude = 0;

  double wavelength() const { return 2 * M_PI / kmag; }
  double period() const { return wavelength() / std::fabs(speed); }

  explicit WaveSetup(const Params& p) {
    const auto lo = p.real3("mesh.xmin"), hi = p.real3("mesh.xmax");
    const auto m = p.int3("problem.wavenumbers");
    for (int d = 0; d < 3; ++d) k[d] = 2 * M_PI * double(m[d]) / (hi[d] - lo[d]);
    kmag = norm(k);
    if (kmag > 0) {
      for (int d = 0; d < 3; ++d) e[0][d] = k[d] / kmag;
      // e[1] = z x e[0] normalised (in the x-y plane), or x when k is along z; then
      // e[2] = e[0] x e[1]: for k in the x-y plane the second transverse axis is z.
      Vec3 t = cross({0, 0, 1}, e[0]);
      const double tn = norm(t);
      e[1] = tn > 1e-12 ? Vec3{t[0] / tn, t[1] / tn, t[2] / tn} : Vec3{1, 0, 0};
      e[2] = cross(e[0], e[1]);
    }
    bg.rho = p.real("problem.rho0");
    bg.p = p.real("problem.p0");
    bg.gamma = p.real("hydro.gamma");
    bg.vn = p.real("problem.vflow");
    bg.B = p.real3("problem.b0");
    wave = parse_mhd_wave(p.string("problem.wave"));
    amplitude = p.real("problem.amplitude");
    const MhdSpeeds s = mhd_speeds(bg);
    const double c = wave == MhdWave::kFast     ? s.cf
                     : wave == MhdWave::kAlfven ? s.ca
                     : wave == MhdWave::kSlow   ? s.cs
                                                : 0.0;
    speed = bg.vn + c;
  }

  // The flow at x and time t, in box coordinates.
  physics::FlowState state(const MhdEigenmode& mode, const Vec3& x, double t) const {
    const double s =
        amplitude * std::sin(k[0] * x[0] + k[1] * x[1] + k[2] * x[2] - kmag * speed * t);
    const auto& r = mode.primitive;
    const double vw[3] = {bg.vn + s * r[1], s * r[2], s * r[3]};
    const double bw[3] = {bg.B[0], bg.B[1] + s * r[5], bg.B[2] + s * r[6]};
    physics::FlowState f;
    f.rho = bg.rho + s * r[0];
    f.p = bg.p + s * r[4];
    for (int d = 0; d < 3; ++d) {
      f.v[d] = vw[0] * e[0][d] + vw[1] * e[1][d] + vw[2] * e[2][d];
      f.B[d] = bw[0] * e[0][d] + bw[1] * e[1][d] + bw[2] * e[2][d];
    }
    f.s.fill(1.0);
    return f;
  }
};

class MhdLinearWave final : public Problem {
 public:
  explicit MhdLinearWave(const Params& p)
      : setup_(p), mode_(mhd_eigenmode(setup_.bg, setup_.wave)), model_(p) {}

  // Passive scalars, if any, have the uniform concentration 1, which they must keep.
  void initial_state(const CellBox& cell, Real* u) const override {
    gauss_cell_average(
        cell, model_, [this](std::array<double, 3> x) { return setup_.state(mode_, x, 0); }, u);
  }

  // The travelling wave at time t (exact for the linearised equations).
  std::optional<double> analytic_density(const CellBox& cell, double t) const override {
    return gauss_cell_average(
        cell, [&](std::array<double, 3> x) { return setup_.state(mode_, x, t).rho; });
  }

 private:
  WaveSetup setup_;
  MhdEigenmode mode_;
  physics::Model model_;
};

// What makes the linear wave meaningless (see ProblemInfo::validate).
void validate_mhd_linear_wave(const Params& p, const mesh::Geometry& g) {
  if (!p.boolean("mhd.enabled"))
    throw Error(ErrorKind::kInput,
                "mhd.enabled = false: the MHD linear waves are eigenmodes of the MHD "
                "equations (hydrodynamics would drop the magnetic field and turn the wave into "
                "a mixture of sound and shear waves); set mhd.enabled = true");
  require_periodic(p, g,
                   "the wave's wavelengths along x, y and z are the box lengths divided by "
                   "problem.wavenumbers and its exact solution is periodic in the box");
  const auto m = p.int3("problem.wavenumbers");
  const std::string m_text = "problem.wavenumbers = [" + std::to_string(m[0]) + ", " +
                             std::to_string(m[1]) + ", " + std::to_string(m[2]) + "]";
  if (m[0] == 0 && m[1] == 0 && m[2] == 0)
    throw Error(ErrorKind::kInput, m_text + " gives no wave vector: at least one must be positive");
  const WaveSetup w(p);
  // Cells per wavelength along k on the root grid, which holds the whole wave. Below 4 the
  // sampled sine is no longer a wave the scheme can carry (at 2, the Nyquist limit, its
  // crests fall between cells); below 16 the error of a second-order scheme after a period
  // is no longer small.
  const double cells = w.wavelength() / g.dx0;
  if (cells < 4)
    throw Error(ErrorKind::kInput,
                m_text + " on a root grid of cell width " + format_number(g.dx0) + " leaves " +
                    format_number(cells) +
                    " cells per wavelength (at least 4 are needed to represent the wave): "
                    "lower the wave numbers or raise mesh.nx");
  if (cells < 16)
    problem_warning(p, m_text + ": only " + format_number(cells) +
                           " cells per wavelength; the wave decays within a period");

  const auto b0 = p.real3("problem.b0");
  const double rho0 = p.real("problem.rho0"), p0 = p.real("problem.p0");
  const double amp = p.real("problem.amplitude"), vflow = p.real("problem.vflow");
  const std::string bg_text = "problem.rho0 = " + format_number(rho0) +
                              ", problem.p0 = " + format_number(p0) +
                              ", problem.b0 = " + format_point(b0);
  // The eigenvectors need a field both along k (else the Alfven and slow waves do not
  // propagate: c_a = c_s = 0) and across it (else the transverse direction of the Alfven
  // wave and the split of fast and slow waves are undefined where they coincide).
  if (b0[0] == 0 || std::hypot(b0[1], b0[2]) == 0)
    throw Error(ErrorKind::kInput,
                "problem.b0 = " + format_point(b0) +
                    " (normal, transverse 1, transverse 2 in the wave frame): the field must have "
                    "a component along the wave vector and one across it, else the MHD waves "
                    "are degenerate (Alfven and slow waves at rest, or coinciding with the fast "
                    "wave)");
  require_density_above_floor(p, rho0, "problem.rho0 = " + format_number(rho0));
  require_pressure_above_floor(p, p0, "problem.p0 = " + format_number(p0));
  const MhdEigenmode mode = mhd_eigenmode(w.bg, w.wave);
  const auto& r = mode.primitive;
  const std::string wave_text = "problem.wave = \"" + p.string("problem.wave") + "\"";
  const std::string amp_text = "problem.amplitude = " + format_number(amp);
  require_density_above_floor(
      p, rho0 - amp * std::fabs(r[0]),
      "the density minimum of the " + wave_text + " with " + amp_text + " (" + bg_text + ")");
  require_pressure_above_floor(
      p, p0 - amp * std::fabs(r[4]),
      "the pressure minimum of the " + wave_text + " with " + amp_text + " (" + bg_text + ")");
  // An amplitude within round-off of the background leaves no wave: some perturbation of
  // the density, pressure or field must change it in the build's precision, measured
  // against the background's scale (|B| for the field components; the velocity, whose
  // background may be zero, has no scale of its own).
  const double bmag = std::sqrt(b0[0] * b0[0] + b0[1] * b0[1] + b0[2] * b0[2]);
  const double scale[7] = {rho0, 0, 0, 0, p0, bmag, bmag};
  bool visible = false;
  for (int v : {0, 4, 5, 6})
    visible = visible || (r[v] != 0 && Real(scale[v] + amp * std::fabs(r[v])) != Real(scale[v]));
  if (!visible)
    throw Error(ErrorKind::kInput,
                amp_text + " is below the round-off of the background state (" + bg_text +
                    "): the perturbed state equals the background in " +
                    (sizeof(Real) == sizeof(float) ? "single" : "double") + " precision");
  require_representable_state(p, rho0, {vflow, 0, 0}, p0,
                              bg_text + ", problem.vflow = " + format_number(vflow));
  // A wave that does not move has no period, and the initial state is no test of the
  // scheme after "one period".
  if (w.speed == 0)
    throw Error(ErrorKind::kInput,
                wave_text + " with problem.vflow = " + format_number(vflow) + " (" + bg_text +
                    ") does not move (v_flow + c = 0), so it has no period: " +
                    (w.wave == MhdWave::kEntropy
                         ? "the entropy wave moves with the flow; give problem.vflow != 0"
                         : "change problem.vflow"));
  // The run ends after problem.periods periods, where the exact solution is the initial
  // state: run.t_end must say so (the problem cannot set it).
  const double periods = p.real("problem.periods"), t_end = p.real("run.t_end");
  const double expected = periods * w.period();
  if (!(std::fabs(t_end - expected) <= 1e-9 * expected))
    throw Error(
        ErrorKind::kInput,
        strprintf("run.t_end = %.17g, but problem.periods = %s periods of the %s wave "
                  "(wavelength %.17g, speed %.17g with problem.vflow = %s) take %.17g: "
                  "set run.t_end = %.17g, so that the exact solution at the end is the "
                  "initial state",
                  t_end, format_number(periods).c_str(), mhd_wave_name(w.wave), w.wavelength(),
                  std::fabs(w.speed), format_number(vflow).c_str(), expected, expected));
}

std::vector<ParamSpec> linear_wave_params() {
  const Range positive{0, std::numeric_limits<double>::infinity(), true, false};
  return {
      {"problem",
       "wave",
       ParamType::kString,
       std::string("fast"),
       "the eigenmode: fast, alfven, slow (magnetosonic) or entropy (moves with problem.vflow)",
       {},
       0,
       {"fast", "alfven", "slow", "entropy"}},
      {"problem",
       "amplitude",
       ParamType::kReal,
       1e-6,
       "amplitude A of the eigenvector (Roe & Balsara normalisation)",
       {0, 0.1, true, false},
       0,
       {}},
      {"problem",
       "periods",
       ParamType::kReal,
       1.0,
       "wave periods to run; run.t_end must be periods * wavelength / |v_flow + c|",
       positive,
       0,
       {}},
      {"problem",
       "wavenumbers",
       ParamType::kInt3,
       std::array<std::int64_t, 3>{1, 1, 0},
       "wavelengths per box length along x, y, z: k_d = 2 pi m_d / L_d",
       {0, 1024},
       0,
       {}},
      {"problem", "rho0", ParamType::kReal, 1.0, "background density", positive, 0, {}},
      {"problem",
       "p0",
       ParamType::kReal,
       0.6,
       "background pressure (1/gamma: sound speed 1)",
       positive,
       0,
       {}},
      {"problem",
       "b0",
       ParamType::kReal3,
       std::array<double, 3>{1.0, std::sqrt(2.0), 0.5},
       "background field in the wave frame: along k, across k in the x-y plane (along x when k is "
       "along z), along k x that",
       {},
       0,
       {}},
      {"problem",
       "vflow",
       ParamType::kReal,
       0.0,
       "background flow speed along k (the entropy wave needs one)",
       {},
       0,
       {}},
  };
}

const ProblemRegistrar kRegistrar{{
    "mhd_linear_wave",
    "Linear MHD wave (fast, Alfven, slow, entropy) oblique to the grid (periodic); exact "
    "solution",
    linear_wave_params,
    [](const Params& p) -> std::unique_ptr<Problem> { return std::make_unique<MhdLinearWave>(p); },
    validate_mhd_linear_wave,
    // The wave varies along the axes its wave vector has components on.
    [](const Params& p) {
      const auto m = p.int3("problem.wavenumbers");
      return int(m[0] != 0) + int(m[1] != 0) + int(m[2] != 0);
    },
}};

}  // namespace

}  // namespace tessera::problems
