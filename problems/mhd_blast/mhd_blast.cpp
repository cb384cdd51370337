// A blast wave in a strongly magnetised medium (Gardiner & Stone 2005, J. Comput. Phys. 205,
// 509, in 2D; Stone et al. 2008, ApJS 178, 137, and Stone & Gardiner 2009, New Astron. 14,
// 139, in 3D): uniform rho = 1, p = 0.1 with a sphere of radius 0.1 at p = 10, and the
// uniform field B = B0 (1, 1, 0) / sqrt 2 with B0 = 1. Athena's units absorb sqrt(4 pi)
// into B, so that the magnetic pressure is B^2/2, as here: B0 = 1 is the value of its input
// files, and the plasma beta outside is 2 p / B0^2 = 0.2. The blast expands along the field
// (across it the magnetic pressure confines it): fast and slow shocks, a low-beta flow where
// the pressure floor and the positivity of prolongation are tried, and, with refinement
// following the shocks, the conservation of mass, momentum, energy and magnetic flux through
// regrids and refluxing.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/problem/problem.hpp"

namespace tessera::problems {

namespace {

using Vec3 = std::array<double, 3>;

Vec3 field_of(const Params& p) {
  const Vec3 dir = p.real3("problem.b_direction");
  const double n = std::sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
  const double b0 = p.real("problem.b0");
  if (!(n > 0)) return {0, 0, 0};
  return {b0 * dir[0] / n, b0 * dir[1] / n, b0 * dir[2] / n};
}

class MhdBlast final : public Problem {
 public:
  explicit MhdBlast(const Params& p)
      : rho0_(p.real("problem.rho0")),
        p_in_(p.real("problem.p_in")),
        p_out_(p.real("problem.p_out")),
        r0_(p.real("problem.radius")),
        center_(p.real3("problem.center")),
        b_(field_of(p)),
        model_(p) {}

  // The over-pressure is thermal energy: a cell partly inside the sphere gets the
  // volume-weighted pressure, (f p_in + (1 - f) p_out), which conserves the injected energy.
  // Passive scalars, if any, mark the gas of the sphere (concentration f).
  void initial_state(const CellBox& cell, Real* u) const override {
    const double f = sphere_volume_fraction(cell, center_, r0_);
    physics::FlowState s;
    s.rho = rho0_;
    s.p = f * p_in_ + (1 - f) * p_out_;
    s.B = b_;
    s.s.fill(f);
    model_.to_conserved(s, u);
  }

 private:
  double rho0_, p_in_, p_out_, r0_;
  Vec3 center_, b_;
  physics::Model model_;
};

// What makes the magnetised blast meaningless (see ProblemInfo::validate).
void validate_mhd_blast(const Params& p, const mesh::Geometry& g) {
  if (!p.boolean("mhd.enabled"))
    throw Error(ErrorKind::kInput,
                "mhd.enabled = false: the magnetised blast is shaped by its field, which "
                "hydrodynamics drops (the run would be a spherical hydrodynamic blast); set "
                "mhd.enabled = true");
  const Vec3 c = p.real3("problem.center");
  const double r0 = p.real("problem.radius");
  require_in_domain(g, c, "the blast centre problem.center = " + format_point(c));
  const std::string sphere = "the over-pressured sphere (problem.center = " + format_point(c) +
                             ", problem.radius = " + format_number(r0) + ")";
  // The pressure is set in the part of the sphere inside the domain, not wrapped around
  // periodic faces: a sphere crossing a face would be cut.
  for (int d = 0; d < 3; ++d)
    for (int side = 0; side < 2; ++side) {
      const double face = side ? g.xmax[d] : g.xmin[d];
      if (std::fabs(c[d] - face) >= r0) continue;
      throw Error(ErrorKind::kInput,
                  sphere + " crosses the " + (side ? "upper " : "lower ") + "xyz"[d] + " face at " +
                      format_number(face) +
                      ": the part beyond it would be missing (the sphere is not wrapped around "
                      "periodic boundaries); keep the centre at least problem.radius from every "
                      "face");
    }
  const double rho0 = p.real("problem.rho0"), p_in = p.real("problem.p_in");
  const double p_out = p.real("problem.p_out");
  const std::string pressures =
      "problem.p_in = " + format_number(p_in) + ", problem.p_out = " + format_number(p_out);
  if (!(p_in > p_out))
    throw Error(ErrorKind::kInput,
                pressures +
                    ": the sphere is not over-pressured, so there is no blast; make "
                    "p_in larger than p_out");
  require_density_above_floor(p, rho0, "problem.rho0 = " + format_number(rho0));
  require_pressure_above_floor(p, p_out, "problem.p_out = " + format_number(p_out));
  require_representable_state(p, rho0, {0, 0, 0}, p_in,
                              "problem.rho0 = " + format_number(rho0) + ", " + pressures);
  const Vec3 dir = p.real3("problem.b_direction");
  const double b0 = p.real("problem.b0");
  if (b0 > 0 && !(std::hypot(dir[0], dir[1], dir[2]) > 0))
    throw Error(ErrorKind::kInput, "problem.b_direction = " + format_point(dir) +
                                       " has no direction: give a non-zero vector (it is "
                                       "normalised)");
  // The magnetic energy must not swamp the thermal one outside (the pressure the solver
  // recovers from E - rho v^2/2 - B^2/2 would be round-off): beta above 1e-6.
  const double beta = 2 * p_out / (b0 * b0);
  if (!(beta > 1e-6))
    throw Error(ErrorKind::kInput, "problem.b0 = " + format_number(b0) +
                                       " with problem.p_out = " + format_number(p_out) +
                                       ": plasma beta 2 p_out / B0^2 = " + format_number(beta) +
                                       " leaves the pressure to round-off in the total energy");
  // The sphere must be resolved well enough to hold its energy (as for the Sedov blast).
  const double whole = 4.0 / 3.0 * M_PI * r0 * r0 * r0;
  auto captured = [&](double h) {
    std::array<long, 3> lo{}, hi{};
    for (int d = 0; d < 3; ++d) {
      lo[d] = static_cast<long>(std::floor((c[d] - r0 - g.xmin[d]) / h));
      hi[d] = static_cast<long>(std::ceil((c[d] + r0 - g.xmin[d]) / h));
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
  check_feature_resolution(p, g, r0, "the sphere's radius problem.radius = " + format_number(r0),
                           "over-pressure energy", captured);
}

std::vector<ParamSpec> mhd_blast_params() {
  const Range positive{0, std::numeric_limits<double>::infinity(), true, false};
  return {
      {"problem", "rho0", ParamType::kReal, 1.0, "uniform density", positive, 0, {}},
      {"problem", "p_in", ParamType::kReal, 10.0, "pressure inside the sphere", positive, 0, {}},
      {"problem", "p_out", ParamType::kReal, 0.1, "ambient pressure", positive, 0, {}},
      {"problem",
       "radius",
       ParamType::kReal,
       0.1,
       "radius of the over-pressured sphere",
       positive,
       0,
       {}},
      {"problem",
       "center",
       ParamType::kReal3,
       std::array<double, 3>{0, 0, 0},
       "centre of the sphere",
       {},
       0,
       {}},
      {"problem",
       "b0",
       ParamType::kReal,
       1.0,
       "field strength |B| (magnetic pressure B^2/2; beta = 2 p_out / b0^2)",
       {0, std::numeric_limits<double>::infinity()},
       0,
       {}},
      {"problem",
       "b_direction",
       ParamType::kReal3,
       std::array<double, 3>{1, 1, 0},
       "direction of the uniform field (normalised)",
       {},
       0,
       {}},
  };
}

const ProblemRegistrar kRegistrar{{
    "mhd_blast", "Blast wave in a strongly magnetised medium (beta = 0.2), 3D", mhd_blast_params,
    [](const Params& p) -> std::unique_ptr<Problem> { return std::make_unique<MhdBlast>(p); },
    validate_mhd_blast, [](const Params&) { return 3; },  // the flow varies along all three axes
}};

}  // namespace

}  // namespace tessera::problems
