// Sedov-Taylor point explosion in 3D (Sedov 1959; Wang, Abel & Kaehler 2009 §6.2): energy E
// deposited uniformly as thermal energy in a sphere of radius r0 in a cold uniform medium. At late
// times the shock radius is xi0 (E t^2 / rho0)^(1/5) (sedov_solution.hpp).
// With problem.period the blast repeats on a lattice along the chosen periodic axes: a
// domain of N periods holds N identical blasts, the same work per period (weak scaling of
// an adaptive run over ranks).
#include <algorithm>
#include <cmath>

#include "problems/sedov/sedov_solution.hpp"
#include "tessera/core/error.hpp"
#include "tessera/problem/problem.hpp"

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
        period_(p.real3("problem.period")),
        solution_(gamma_, energy_, rho0_),
        model_(p) {}

  // The energy is thermal energy, so it is set on the conserved variables directly (the
  // problem requires adiabatic gas). Passive scalars, if any, mark the ejecta: the gas of
  // the injection sphere has concentration 1.
  void initial_state(const CellBox& cell, Real* u) const override {
    using P = kernels::HydroAdiabatic;
    const double f = sphere_volume_fraction(cell, nearest_center(cell.center()), r0_);
    const double e_in = energy_ / (4.0 / 3.0 * M_PI * r0_ * r0_ * r0_);
    u[P::kDens] = Real(rho0_);
    u[P::kMomX] = u[P::kMomY] = u[P::kMomZ] = 0;
    u[P::kEngy] = Real(p0_ / (gamma_ - 1) + f * e_in);
    for (int i = 0; i < model_.num_scalars(); ++i) u[model_.scalar_index(i)] = Real(rho0_ * f);
  }

  std::optional<double> analytic_density(const CellBox& cell, double t) const override {
    if (t <= 0) return std::nullopt;
    const auto c = cell.center();
    const auto o = nearest_center(c);
    double r2 = 0;
    for (int d = 0; d < 3; ++d) r2 += (c[d] - o[d]) * (c[d] - o[d]);
    return solution_.sample(std::sqrt(r2), t).rho;
  }

 private:
  // The lattice's blast nearest to x (the centre itself without a period): validation keeps
  // the spheres at least 2 r0 apart, so a cell meets one sphere at most.
  std::array<double, 3> nearest_center(const std::array<double, 3>& x) const {
    std::array<double, 3> c = center_;
    for (int d = 0; d < 3; ++d)
      if (period_[d] > 0) c[d] += period_[d] * std::round((x[d] - c[d]) / period_[d]);
    return c;
  }

  double energy_, r0_, rho0_, p0_, gamma_;
  std::array<double, 3> center_, period_;
  SedovSolution solution_;
  physics::Model model_;
};

// What makes a Sedov blast meaningless (see ProblemInfo::validate).
void validate_sedov(const Params& p, const mesh::Geometry& g) {
  const double energy = p.real("problem.energy"), r0 = p.real("problem.radius");
  const double rho0 = p.real("problem.rho0"), p0 = p.real("problem.p0");
  const double gamma = p.real("hydro.gamma");
  const auto c = p.real3("problem.center");
  if (p.string("hydro.eos") != "adiabatic")
    throw Error(ErrorKind::kInput,
                "hydro.eos = \"" + p.string("hydro.eos") +
                    "\": the Sedov blast is driven by thermal energy, which only adiabatic gas "
                    "has (use hydro.eos = \"adiabatic\")");
  const std::string sphere = "the injection sphere (problem.center = " + format_point(c) +
                             ", problem.radius = " + format_number(r0) + ")";
  require_in_domain(g, c, "the blast centre problem.center = " + format_point(c));
  const auto period = p.real3("problem.period");
  for (int d = 0; d < 3; ++d) {
    if (period[d] == 0) continue;
    const std::string key = std::string("problem.period = ") + format_point(period);
    const char axis = "xyz"[d];
    if (period[d] < 0)
      throw Error(ErrorKind::kInput, key + ": a period is positive (0: the blast is not repeated)");
    if (!g.periodic(d))
      throw Error(ErrorKind::kInput,
                  key + " repeats the blast along " + axis +
                      ", whose boundaries are not periodic (mesh.bc_" + axis + "lo = \"" +
                      p.string(std::string("mesh.bc_") + axis + "lo") +
                      "\"): a lattice of blasts is a periodic flow; make them periodic");
    const double length = g.xmax[d] - g.xmin[d], n = length / period[d];
    if (n < 1 - 1e-9 || std::fabs(n - std::round(n)) > 1e-9 * n)
      throw Error(ErrorKind::kInput,
                  key + ": the domain's " + axis + " extent " + format_number(length) +
                      " is not a whole number of periods, so the blasts beside the periodic " +
                      axis + " faces would not be copies of each other");
    if (period[d] < 4 * r0)
      throw Error(ErrorKind::kInput,
                  key + ": the injection spheres (problem.radius = " + format_number(r0) +
                      ") would lie closer than two diameters apart along " + axis +
                      " (a period of at least 4 problem.radius)");
  }
  // The energy goes into the part of the sphere inside the domain. Past an outflow face it
  // is lost, and the deposit is not wrapped around periodic ones: the blast would have less
  // energy than problem.energy. Only a sphere centred on a reflecting face is a whole
  // blast, of which the domain holds a half (a quarter, an octant at a corner).
  int halvings = 0;
  for (int d = 0; d < 3; ++d)
    for (int side = 0; side < 2; ++side) {
      const double face = side ? g.xmax[d] : g.xmin[d];
      const double dist = std::fabs(c[d] - face);
      if (dist >= r0 || period[d] > 0) continue;  // a lattice wraps around its faces
      const double tol = 1e-12 * (g.xmax[d] - g.xmin[d]);
      if (dist <= tol && g.boundary[d][side] == mesh::Boundary::kReflecting) {
        ++halvings;
        continue;
      }
      const std::string key = std::string("mesh.bc_") + "xyz"[d] + (side ? "hi" : "lo");
      throw Error(ErrorKind::kInput,
                  sphere + " crosses the " + (side ? "upper " : "lower ") + "xyz"[d] + " face at " +
                      format_number(face) + " (" + key + " = \"" + p.string(key) +
                      "\"): the energy beyond it would be " +
                      (g.periodic(d) ? "deposited nowhere (the deposit is not wrapped around "
                                       "periodic boundaries)"
                                     : "lost") +
                      ", so the blast would have less than problem.energy; keep the centre "
                      "at least problem.radius from the face, or, to model a half (quarter, "
                      "octant) of the blast, put it on the face and make the face reflecting");
    }
  const std::string ambient =
      "problem.rho0 = " + format_number(rho0) + ", problem.p0 = " + format_number(p0);
  require_density_above_floor(p, rho0, "problem.rho0 = " + format_number(rho0));
  require_pressure_above_floor(p, p0, "problem.p0 = " + format_number(p0));
  require_representable_state(p, rho0, {0, 0, 0}, p0, ambient);
  const double e_in = energy / (4.0 / 3.0 * M_PI * r0 * r0 * r0);
  require_representable_state(
      p, rho0, {0, 0, 0}, p0 + (gamma - 1) * e_in,
      "the pressure inside the injection sphere, p0 + (gamma - 1) E / (4/3 pi r0^3) with "
      "problem.energy = " +
          format_number(energy) + ", problem.radius = " + format_number(r0) + ", " + ambient);
  // The reference solution: its errors name no key.
  try {
    static_cast<void>(SedovSolution(gamma, energy, rho0));
  } catch (const Error& e) {
    throw Error(ErrorKind::kInput, "hydro.gamma = " + format_number(gamma) +
                                       ", problem.energy = " + format_number(energy) +
                                       ", problem.rho0 = " + format_number(rho0) + ": " + e.what() +
                                       "; the reference solution cannot be computed");
  }
  // A sphere smaller than a cell is the point explosion the self-similar solution assumes
  // (many codes deposit E in a single cell): it only warns, as the early flow then depends
  // on the grid and the late one does not. Meaningless is a sphere that the sub-sampled
  // volume fractions miss (r0 below about 0.15 cells): the deposit then differs from E by
  // more than 10%, up to nothing at all; that is what check_feature_resolution rejects.
  const double whole = (4.0 / 3.0 * M_PI * r0 * r0 * r0) / double(1 << halvings);
  auto captured = [&](double h) {
    std::array<long, 3> lo{}, hi{};
    for (int d = 0; d < 3; ++d) {
      const long n = std::lround((g.xmax[d] - g.xmin[d]) / h);
      lo[d] = std::max(0L, static_cast<long>(std::floor((c[d] - r0 - g.xmin[d]) / h)));
      hi[d] = std::min(n, static_cast<long>(std::ceil((c[d] + r0 - g.xmin[d]) / h)));
    }
    double inside = 0;
    for (long k = lo[2]; k < hi[2]; ++k)
      for (long j = lo[1]; j < hi[1]; ++j)
        for (long i = lo[0]; i < hi[0]; ++i) {
          const long q[3] = {i, j, k};
          CellBox cell;
          for (int d = 0; d < 3; ++d) {
            cell.lo[d] = g.xmin[d] + q[d] * h;
            cell.hi[d] = cell.lo[d] + h;
          }
          inside += sphere_volume_fraction(cell, c, r0) * h * h * h;
        }
    return inside / whole;
  };
  check_feature_resolution(p, g, r0,
                           "the injection sphere's radius problem.radius = " + format_number(r0),
                           "energy", captured);
}

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
      {"problem",
       "period",
       ParamType::kReal3,
       std::array<double, 3>{0, 0, 0},
       "the blast repeated every period along each axis (0: once); a repeated axis is "
       "periodic and a whole number of periods long (a lattice of blasts: the same work "
       "per period, for weak scaling)",
       {},
       0,
       {}},
  };
}

const ProblemRegistrar kRegistrar{{
    "sedov", "Sedov-Taylor point explosion in 3D; self-similar solution as reference", sedov_params,
    [](const Params& p) -> std::unique_ptr<Problem> { return std::make_unique<Sedov>(p); },
    validate_sedov, [](const Params&) { return 3; },  // the flow varies along all three axes
}};

}  // namespace

}  // namespace tessera::problems
