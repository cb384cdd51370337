// Double Mach reflection (Woodward & Colella 1984, §IV c): a Mach 10 shock in air
// (gamma = 1.4) meets a 30-degree ramp. In the standard rotated frame the ramp is the lower
// boundary y = ymin for x >= x0 and the shock a line through (x0, ymin) at 60 degrees to it,
// moving along its normal into gas at rest (rho = 1.4, p = 1). The flow is two-dimensional:
// the grid is a thin slab in z (one patch group on the root level), periodic in z.
// Boundaries (mesh.bc_* = "problem", ProblemBoundary): inflow of the post-shock state on
// x = xmin and on y = ymin for x < x0, a reflecting wall on y = ymin for x >= x0, and on
// y = ymax the exact position of the undisturbed shock at the time of the step (post-shock
// gas behind it, pre-shock ahead); x = xmax is an outflow.
#include <cmath>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/problem/problem.hpp"

namespace tessera::problems {

namespace {

constexpr double kPi = 3.14159265358979323846;

// The shock and the two states it separates (Rankine-Hugoniot for a normal shock of Mach
// number M into gas at rest; M = 10, gamma = 1.4: rho 8, p 116.5, |v| 8.25).
struct ShockSetup {
  double gamma, mach, x0, ymin;
  double rho1, p1;                           // pre-shock, at rest
  double rho2, p2, speed2;                   // post-shock, speed along the shock normal
  double shock_speed;                        // of the shock along its normal
  static constexpr double kAngle = kPi / 3;  // shock to wall
  ShockSetup(const Params& p, const mesh::Geometry& g)
      : gamma(p.real("hydro.gamma")),
        mach(p.real("problem.mach")),
        x0(p.real("problem.x0")),
        ymin(g.xmin[1]),
        rho1(p.real("problem.rho")),
        p1(p.real("problem.p")) {
    const double m2 = mach * mach;
    rho2 = rho1 * (gamma + 1) * m2 / ((gamma - 1) * m2 + 2);
    p2 = p1 * (2 * gamma * m2 - (gamma - 1)) / (gamma + 1);
    shock_speed = mach * std::sqrt(gamma * p1 / rho1);
    speed2 = shock_speed * (1 - rho1 / rho2);
  }
  // x of the shock at height y and time t (the undisturbed, incident shock).
  double shock_x(double y, double t) const {
    return x0 + (y - ymin) / std::tan(kAngle) + shock_speed * t / std::sin(kAngle);
  }
  // Fraction of the cell's x-y area behind the shock at time t (16 x 16 sub-samples; the
  // flow does not depend on z).
  double behind(const CellBox& c, double t) const {
    constexpr int kSub = 16;
    const double hx = (c.hi[0] - c.lo[0]) / kSub, hy = (c.hi[1] - c.lo[1]) / kSub;
    int in = 0;
    for (int j = 0; j < kSub; ++j) {
      const double xs = shock_x(c.lo[1] + (j + 0.5) * hy, t);
      for (int i = 0; i < kSub; ++i) in += c.lo[0] + (i + 0.5) * hx < xs;
    }
    return in / double(kSub * kSub);
  }
  physics::FlowState post() const {
    physics::FlowState f;
    f.rho = rho2, f.p = p2;
    // The shock normal points along (sin 60, -cos 60): into the unshocked gas.
    f.v = {speed2 * std::sin(kAngle), -speed2 * std::cos(kAngle), 0};
    return f;
  }
  physics::FlowState pre() const {
    physics::FlowState f;
    f.rho = rho1, f.p = p1;
    return f;
  }
};

class DoubleMach final : public Problem {
 public:
  DoubleMach(const Params& p, const mesh::Geometry& g) : s_(p, g), model_(p) {
    model_.to_conserved(s_.post(), post_);
    model_.to_conserved(s_.pre(), pre_);
  }

  void initial_state(const CellBox& cell, Real* u) const override { mix(cell, 0.0, u); }

  bool has_boundary() const override { return true; }

  mesh::GhostFill boundary_state(const CellBox& cell, double t, int dim, int side,
                                 Real* u) const override {
    if (dim == 0 && side == 0) {  // inflow of the shocked gas
      copy(post_, u);
      return mesh::GhostFill::kState;
    }
    if (dim == 1 && side == 0) {  // ahead of the ramp: inflow; the ramp: a wall
      if (cell.center()[0] >= s_.x0) return mesh::GhostFill::kReflecting;
      copy(post_, u);
      return mesh::GhostFill::kState;
    }
    if (dim == 1 && side == 1) {  // the incident shock where it has reached
      mix(cell, t, u);
      return mesh::GhostFill::kState;
    }
    return mesh::GhostFill::kOutflow;
  }

 private:
  void copy(const Real* from, Real* u) const {
    for (int v = 0; v < model_.num_vars(); ++v) u[v] = from[v];
  }
  void mix(const CellBox& cell, double t, Real* u) const {
    const double f = s_.behind(cell, t);
    for (int v = 0; v < model_.num_vars(); ++v) u[v] = Real(f * post_[v] + (1 - f) * pre_[v]);
  }

  ShockSetup s_;
  physics::Model model_;
  Real post_[kernels::kMaxVars] = {}, pre_[kernels::kMaxVars] = {};
};

// What makes the set-up something else than the double Mach reflection.
void validate_double_mach(const Params& p, const mesh::Geometry& g) {
  if (p.string("hydro.eos") != "adiabatic")
    throw Error(ErrorKind::kInput,
                "hydro.eos = \"" + p.string("hydro.eos") +
                    "\": the shock's post-shock state is that of an ideal adiabatic gas "
                    "(Rankine-Hugoniot with hydro.gamma); set hydro.eos = \"adiabatic\"");
  const char* kSide[3][2] = {{"bc_xlo", "bc_xhi"}, {"bc_ylo", "bc_yhi"}, {"bc_zlo", "bc_zhi"}};
  const std::pair<int, int> needed[] = {{0, 0}, {1, 0}, {1, 1}};
  for (const auto& [d, side] : needed)
    if (g.boundary[d][side] != mesh::Boundary::kProblem)
      throw Error(ErrorKind::kInput,
                  std::string("mesh.") + kSide[d][side] + " = \"" +
                      mesh::boundary_name(g.boundary[d][side]) +
                      "\": the double Mach reflection takes the inflow (x = xmin), the ramp "
                      "(y = ymin) and the moving shock (y = ymax) from the problem; set "
                      "mesh.bc_xlo, mesh.bc_ylo and mesh.bc_yhi to \"problem\"");
  if (g.periodic(0))
    throw Error(ErrorKind::kInput,
                "mesh.bc_xhi is periodic: the shocked gas leaves through x = xmax; set it to "
                "\"outflow\"");
  const double x0 = p.real("problem.x0");
  if (!(x0 > g.xmin[0] && x0 < g.xmax[0]))
    throw Error(ErrorKind::kInput, "problem.x0 = " + format_number(x0) +
                                       " is not inside the domain's x extent [" +
                                       format_number(g.xmin[0]) + ", " + format_number(g.xmax[0]) +
                                       "]: the ramp must start inside it");
  const ShockSetup s(p, g);
  // The shock crosses the top boundary inside the domain at t = 0, else the domain holds
  // no undisturbed shock to reflect.
  const double top = s.shock_x(g.xmax[1], 0);
  if (!(top < g.xmax[0]))
    throw Error(ErrorKind::kInput,
                strprintf("the shock through (problem.x0 = %s, y = %s) at 60 degrees reaches "
                          "y = %s at x = %s, beyond the domain's x = %s: lower x0 or the "
                          "domain's height, or lengthen it",
                          format_number(x0).c_str(), format_number(g.xmin[1]).c_str(),
                          format_number(g.xmax[1]).c_str(), format_number(top).c_str(),
                          format_number(g.xmax[0]).c_str()));
  const std::string pre =
      "problem.rho = " + format_number(s.rho1) + ", problem.p = " + format_number(s.p1);
  require_density_above_floor(p, s.rho1, "problem.rho = " + format_number(s.rho1));
  require_pressure_above_floor(p, s.p1, "problem.p = " + format_number(s.p1));
  require_representable_state(p, s.rho1, {0, 0, 0}, s.p1, pre);
  const auto v = s.post().v;
  require_representable_state(p, s.rho2, v, s.p2,
                              "the post-shock state of problem.mach = " + format_number(s.mach) +
                                  " (rho " + format_number(s.rho2) + ", p " + format_number(s.p2) +
                                  ")");
}

std::vector<ParamSpec> double_mach_params() {
  auto real = [](const char* key, double def, Range r, const char* help) {
    return ParamSpec{"problem", key, ParamType::kReal, def, help, r, 0, {}};
  };
  const double inf = std::numeric_limits<double>::infinity();
  return {
      real("mach", 10.0, {1, inf, true, false},
           "Mach number of the incident shock (> 1) into the gas at rest"),
      real("x0", 1.0 / 6.0, {}, "where the ramp (the reflecting part of y = ymin) begins"),
      real("rho", 1.4, {0, inf, true, false}, "density of the gas at rest ahead of the shock"),
      real("p", 1.0, {0, inf, true, false}, "pressure of the gas at rest ahead of the shock"),
  };
}

const ProblemRegistrar kRegistrar{{
    "double_mach",
    "Double Mach reflection of a Mach 10 shock off a 30-degree ramp (Woodward & Colella "
    "1984), thin-z slab; problem-defined inflow, wall and moving-shock boundaries",
    double_mach_params,
    [](const Params& p) -> std::unique_ptr<Problem> {
      return std::make_unique<DoubleMach>(p, mesh::geometry_from_params(p));
    },
    validate_double_mach, [](const Params&) { return 2; },  // uniform along z
}};

}  // namespace

}  // namespace tessera::problems
