// The Orszag-Tang vortex (Orszag & Tang 1979, J. Fluid Mech. 90, 129), in the form of
// Ryu, Miniati, Jones & Frank 1998 (ApJ 509, 244) and Stone et al. 2008 (ApJS 178, 137):
// in the square x-y extent of a periodic box, with xi = (x - xmin) / L, eta =
// (y - ymin) / L,
//   rho = 25 / (36 pi), p = 5 / (12 pi), v = v0 (-sin 2 pi eta, sin 2 pi xi, 0),
//   B = B0 (-sin 2 pi eta, sin 4 pi xi, 0), B0 = 1/sqrt(4 pi), gamma = 5/3,
// uniform along z. The smooth vortex steepens into interacting MHD shocks; there is no
// exact solution, but the flow conserves mass, momentum, energy and magnetic flux, and it is
// symmetric under the rotation by 180 degrees about the box's axis: the state at (xi, eta)
// equals the state at (1 - xi, 1 - eta) with the x and y components of v and B negated
// (sin 2 pi (1 - s) = -sin 2 pi s and sin 4 pi (1 - s) = -sin 4 pi s give it at t = 0, and
// the MHD equations are invariant under rotations).
#include <cmath>
#include <limits>

#include "tessera/core/error.hpp"
#include "tessera/problem/problem.hpp"

namespace tessera::problems {

namespace {

class OrszagTang final : public Problem {
 public:
  explicit OrszagTang(const Params& p)
      : rho0_(p.real("problem.rho0")),
        p0_(p.real("problem.p0")),
        v0_(p.real("problem.v0")),
        b0_(p.real("problem.b0")),
        lo_(p.real3("mesh.xmin")),
        length_(p.real3("mesh.xmax")[0] - p.real3("mesh.xmin")[0]),
        model_(p) {}

  // Passive scalars, if any, have the concentration (1 - cos 2 pi xi) / 2 (1 on the line
  // xi = 1/2, 0 at xi = 0), which the rotation leaves as it is: they show the mixing.
  void initial_state(const CellBox& cell, Real* u) const override {
    gauss_cell_average(
        cell, model_,
        [this](std::array<double, 3> x) {
          const double xi = (x[0] - lo_[0]) / length_, eta = (x[1] - lo_[1]) / length_;
          const double sy = std::sin(2 * M_PI * eta);
          physics::FlowState f;
          f.rho = rho0_;
          f.p = p0_;
          f.v = {-v0_ * sy, v0_ * std::sin(2 * M_PI * xi), 0};
          f.B = {-b0_ * sy, b0_ * std::sin(4 * M_PI * xi), 0};
          f.s.fill(0.5 * (1 - std::cos(2 * M_PI * xi)));
          return f;
        },
        u);
  }

 private:
  double rho0_, p0_, v0_, b0_;
  std::array<double, 3> lo_;
  double length_;
  physics::Model model_;
};

// What makes the vortex meaningless (see ProblemInfo::validate).
void validate_orszag_tang(const Params& p, const mesh::Geometry& g) {
  if (!p.boolean("mhd.enabled"))
    throw Error(ErrorKind::kInput,
                "mhd.enabled = false: the Orszag-Tang vortex is a test of the MHD equations "
                "(without them its magnetic field is dropped); set mhd.enabled = true");
  require_periodic(p, g,
                   "the vortex is one period of sines along x and y, uniform along z, and its "
                   "flow is periodic in the box");
  const double lx = g.xmax[0] - g.xmin[0], ly = g.xmax[1] - g.xmin[1];
  if (lx != ly)
    throw Error(ErrorKind::kInput,
                "the x-y extent of the domain " + domain_extent(g) +
                    " is not square: the vortex's sines have one period along x and one along "
                    "y, and on a rectangle the vortex is stretched into another flow (set "
                    "mesh.xmax - mesh.xmin equal along x and y)");
  const double rho0 = p.real("problem.rho0"), p0 = p.real("problem.p0");
  const double v0 = p.real("problem.v0"), b0 = p.real("problem.b0");
  const std::string state = "problem.rho0 = " + format_number(rho0) +
                            ", problem.p0 = " + format_number(p0) +
                            ", problem.v0 = " + format_number(v0);
  if (v0 == 0 && b0 == 0)
    throw Error(ErrorKind::kInput,
                "problem.v0 = 0 and problem.b0 = 0: a uniform gas at rest, nothing evolves");
  require_density_above_floor(p, rho0, "problem.rho0 = " + format_number(rho0));
  require_pressure_above_floor(p, p0, "problem.p0 = " + format_number(p0));
  require_representable_state(p, rho0, {v0, v0, 0}, p0,
                              "the fastest point of the vortex (" + state + ")");
  // Below 32 cells across, the vortex's shocks (four of them cross the box by t = 0.5) are
  // no longer separated; the run is still a valid, if crude, test of conservation.
  if ((static_cast<long long>(g.root_cells[0]) << p.integer("amr.max_level")) < 32)
    problem_warning(p,
                    "fewer than 32 cells across the vortex at the finest level: its shocks "
                    "are not separated");
}

std::vector<ParamSpec> orszag_tang_params() {
  const Range positive{0, std::numeric_limits<double>::infinity(), true, false};
  const Range non_negative{0, std::numeric_limits<double>::infinity()};
  return {
      {"problem",
       "rho0",
       ParamType::kReal,
       25.0 / (36.0 * M_PI),
       "density 25 / (36 pi)",
       positive,
       0,
       {}},
      {"problem",
       "p0",
       ParamType::kReal,
       5.0 / (12.0 * M_PI),
       "pressure 5 / (12 pi)",
       positive,
       0,
       {}},
      {"problem", "v0", ParamType::kReal, 1.0, "velocity amplitude", non_negative, 0, {}},
      {"problem",
       "b0",
       ParamType::kReal,
       1.0 / std::sqrt(4.0 * M_PI),
       "field amplitude 1 / sqrt(4 pi) (magnetic pressure B^2/2)",
       non_negative,
       0,
       {}},
  };
}

const ProblemRegistrar kRegistrar{{
    "orszag_tang",
    "Orszag-Tang vortex: 2D MHD turbulence from smooth periodic data (periodic, thin in z)",
    orszag_tang_params,
    [](const Params& p) -> std::unique_ptr<Problem> { return std::make_unique<OrszagTang>(p); },
    validate_orszag_tang, [](const Params&) { return 2; },  // uniform along z
}};

}  // namespace

}  // namespace tessera::problems
