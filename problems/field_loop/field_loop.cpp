// Advection of a weak magnetic field loop (Gardiner & Stone 2005, J. Comput. Phys. 205, 509,
// §5.1): the field of the vector potential
//   A_z = A0 (R - r) for r < R, 0 outside,
// r the distance in the x-y plane from the loop's centre, is carried by a uniform flow
// (rho = 1, p = 1, v = (2, 1, 0) on [-1, 1] x [-0.5, 0.5], which brings the loop back to its
// start at t = 1). With A0 = 1e-3 the plasma beta is 2e6: the field is passive, and the exact
// solution is the loop moved by v t (|B| = A0 inside, 0 outside). The test is how much
// magnetic energy the scheme diffuses away and how much div B it makes at the loop's edge and
// centre, where the field's direction or magnitude jumps.
//
// The initial field is the curl of A_z sampled at the cell corners: the face-centred field
// Bx(i-1/2) = (A(i-1/2, j+1/2) - A(i-1/2, j-1/2)) / dy, By(j-1/2) = -(A(i+1/2, j-1/2) -
// A(i-1/2, j-1/2)) / dx has zero divergence in every cell exactly (the corner values cancel
// in pairs), and the cell-centred field is the mean of the two faces of each component. So
// the loop starts with no face divergence, its magnetic flux through every cell face is that
// of the sampled potential, and its edge (where |B| jumps) is not smeared by a quadrature of
// the discontinuous analytic field.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/problem/problem.hpp"

namespace tessera::problems {

namespace {

using Vec3 = std::array<double, 3>;

// The loop's geometry, shared by the problem and its validate hook.
struct Loop {
  double a0, radius;
  Vec3 center, velocity, lo, hi;

  explicit Loop(const Params& p)
      : a0(p.real("problem.amplitude")),
        radius(p.real("problem.radius")),
        center(p.real3("problem.center")),
        velocity(p.real3("problem.velocity")),
        lo(p.real3("mesh.xmin")),
        hi(p.real3("mesh.xmax")) {}

  // Distance in the x-y plane from (x, y) to the nearest periodic image of the centre at t.
  double distance(double x, double y, double t) const {
    double r2 = 0;
    const double q[2] = {x, y};
    for (int d = 0; d < 2; ++d) {
      const double len = hi[d] - lo[d];
      double dx = q[d] - center[d] - velocity[d] * t;
      dx -= len * std::round(dx / len);
      r2 += dx * dx;
    }
    return std::sqrt(r2);
  }

  double potential(double x, double y) const {
    const double r = distance(x, y, 0);
    return r < radius ? a0 * (radius - r) : 0.0;
  }

  // Cell-centred (Bx, By) of the cell [x0, x1] x [y0, y1]: the mean of the face fields of
  // the corner potential (see the file comment).
  std::array<double, 2> field(double x0, double x1, double y0, double y1) const {
    const double a00 = potential(x0, y0), a10 = potential(x1, y0);
    const double a01 = potential(x0, y1), a11 = potential(x1, y1);
    return {0.5 * ((a01 - a00) + (a11 - a10)) / (y1 - y0),
            -0.5 * ((a10 - a00) + (a11 - a01)) / (x1 - x0)};
  }
};

class FieldLoop final : public Problem {
 public:
  explicit FieldLoop(const Params& p)
      : loop_(p),
        rho0_(p.real("problem.rho0")),
        p0_(p.real("problem.p0")),
        margin_(p.real("problem.refine_margin")),
        model_(p) {}

  // Passive scalars, if any, mark the gas of the loop: concentration 1 in cells whose
  // centre lies inside it.
  void initial_state(const CellBox& cell, Real* u) const override {
    const auto b = loop_.field(cell.lo[0], cell.hi[0], cell.lo[1], cell.hi[1]);
    physics::FlowState f;
    f.rho = rho0_;
    f.p = p0_;
    f.v = loop_.velocity;
    f.B = {b[0], b[1], 0};
    const auto c = cell.center();
    f.s.fill(loop_.distance(c[0], c[1], 0) < loop_.radius ? 1.0 : 0.0);
    model_.to_conserved(f, u);
  }

  // The density stays uniform: the field's forces are of order 1/beta.
  std::optional<double> analytic_density(const CellBox&, double) const override { return rho0_; }

  // Refinement follows the loop: cells whose centre lies within radius + refine_margin of
  // the advected centre.
  bool has_refine_criterion() const override { return true; }
  bool refine(const CellBox& cell, double t, int) const override {
    const auto c = cell.center();
    return loop_.distance(c[0], c[1], t) < loop_.radius + margin_;
  }

 private:
  Loop loop_;
  double rho0_, p0_, margin_;
  physics::Model model_;
};

// What makes the advected loop meaningless (see ProblemInfo::validate).
void validate_field_loop(const Params& p, const mesh::Geometry& g) {
  if (!p.boolean("mhd.enabled"))
    throw Error(ErrorKind::kInput,
                "mhd.enabled = false: the field loop is a magnetic field, which hydrodynamics "
                "drops (the run would advect a uniform gas); set mhd.enabled = true");
  require_periodic(p, g,
                   "the loop is advected through a periodic box: its exact solution is the "
                   "nearest periodic image of the moved loop");
  const Loop loop(p);
  const std::string c_text = "problem.center = " + format_point(loop.center);
  require_in_domain(g, loop.center, "the loop centre " + c_text);
  const std::string r_text = "problem.radius = " + format_number(loop.radius);
  // A loop wider than the box overlaps its periodic images: the potential of the nearest
  // image then jumps halfway between them, a current sheet that is not part of the problem.
  for (int d = 0; d < 2; ++d)
    if (2 * loop.radius > g.xmax[d] - g.xmin[d])
      throw Error(ErrorKind::kInput,
                  "the loop's diameter 2 " + r_text + " exceeds the domain's " + "xy"[d] +
                      " extent " + format_number(g.xmax[d] - g.xmin[d]) + " (" + domain_extent(g) +
                      "): the loop would overlap its periodic images; make it smaller or the "
                      "domain larger");
  const double rho0 = p.real("problem.rho0"), p0 = p.real("problem.p0");
  const double a0 = loop.a0;
  require_density_above_floor(p, rho0, "problem.rho0 = " + format_number(rho0));
  require_pressure_above_floor(p, p0, "problem.p0 = " + format_number(p0));
  const std::string flow = "problem.rho0 = " + format_number(rho0) +
                           ", problem.velocity = " + format_point(loop.velocity) +
                           ", problem.p0 = " + format_number(p0);
  require_representable_state(p, rho0, loop.velocity, p0, flow);
  // The magnetic energy A0^2 / 2 must not swamp the thermal one in the energy variable
  // (the pressure would be recovered from round-off) ...
  const double thermal = p0 / (p.real("hydro.gamma") - 1);
  if (!(0.5 * a0 * a0 < 1e6 * thermal))
    throw Error(ErrorKind::kInput, "problem.amplitude = " + format_number(a0) +
                                       " with problem.p0 = " + format_number(p0) +
                                       ": the magnetic energy A0^2/2 swamps the thermal energy, "
                                       "and the pressure the solver recovers is round-off");
  // ... and a strong field is no longer advected passively: the loop's tension and the
  // current at its edge move the gas, and the moved loop is no longer the solution.
  const double beta = 2 * p0 / (a0 * a0);
  if (beta < 100)
    problem_warning(p, "plasma beta 2 p0 / A0^2 = " + format_number(beta) +
                           " (problem.amplitude = " + format_number(a0) +
                           "): the field is not weak, and the loop is not advected unchanged");
  // A loop narrower than a few cells has a corner-sampled field that is mostly its edge and
  // centre: its magnetic energy (the test's measure) is then wrong from the start. captured(h)
  // is the magnetic energy of the initial cell-centred field over the exact A0^2 pi R^2 / 2,
  // on the grid of width h the mesh has (cells aligned with mesh.xmin).
  auto captured = [&](double h) {
    long lo[2], hi[2];
    for (int d = 0; d < 2; ++d) {
      lo[d] = static_cast<long>(std::floor((loop.center[d] - loop.radius - g.xmin[d]) / h)) - 1;
      hi[d] = static_cast<long>(std::ceil((loop.center[d] + loop.radius - g.xmin[d]) / h)) + 1;
    }
    double energy = 0;
    for (long j = lo[1]; j < hi[1]; ++j)
      for (long i = lo[0]; i < hi[0]; ++i) {
        const double x0 = g.xmin[0] + i * h, y0 = g.xmin[1] + j * h;
        const auto b = loop.field(x0, x0 + h, y0, y0 + h);
        energy += (b[0] * b[0] + b[1] * b[1]) * h * h;
      }
    return energy / (a0 * a0 * M_PI * loop.radius * loop.radius);
  };
  check_feature_resolution(p, g, loop.radius, "the loop's radius " + r_text, "magnetic energy",
                           captured);
}

std::vector<ParamSpec> field_loop_params() {
  const Range positive{0, std::numeric_limits<double>::infinity(), true, false};
  return {
      {"problem",
       "amplitude",
       ParamType::kReal,
       1e-3,
       "A0 of A_z = A0 (R - r): the field strength |B| inside the loop",
       positive,
       0,
       {}},
      {"problem", "radius", ParamType::kReal, 0.3, "loop radius R", positive, 0, {}},
      {"problem", "rho0", ParamType::kReal, 1.0, "uniform density", positive, 0, {}},
      {"problem", "p0", ParamType::kReal, 1.0, "uniform pressure", positive, 0, {}},
      {"problem",
       "velocity",
       ParamType::kReal3,
       std::array<double, 3>{2.0, 1.0, 0.0},
       "advection velocity",
       {},
       0,
       {}},
      {"problem",
       "center",
       ParamType::kReal3,
       std::array<double, 3>{0, 0, 0},
       "initial centre of the loop (its z is ignored: the loop is a tube along z)",
       {},
       0,
       {}},
      {"problem",
       "refine_margin",
       ParamType::kReal,
       0.1,
       "with amr.max_level > 0: refine within radius + refine_margin of the moving centre",
       {0, std::numeric_limits<double>::infinity()},
       0,
       {}},
  };
}

const ProblemRegistrar kRegistrar{{
    "field_loop",
    "Weak magnetic field loop advected through a periodic box; exact solution",
    field_loop_params,
    [](const Params& p) -> std::unique_ptr<Problem> { return std::make_unique<FieldLoop>(p); },
    validate_field_loop,
    // The loop lies in the x-y plane; a flow along z makes the update three-dimensional.
    [](const Params& p) { return p.real3("problem.velocity")[2] == 0 ? 2 : 3; },
}};

}  // namespace

}  // namespace tessera::problems
