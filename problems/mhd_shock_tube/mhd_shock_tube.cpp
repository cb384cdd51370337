// MHD shock tube (a Riemann problem of ideal MHD) along x, y or z: two uniform states
// separated by a plane at x0, with a uniform normal field bx. Presets: Brio & Wu 1988
// (brio_wu.toml) and Ryu & Jones 1995, test 2a (rj2a.toml).
//
// The states are given in the frame of the tube: (u, v, w) and (bx, by, bz) are the
// components along the tube and along the two transverse axes in cyclic order, so that for
// direction = "y", (u, v, w) -> (vy, vz, vx) and (bx, by, bz) -> (By, Bz, Bx). The cyclic
// order keeps the frame right-handed: the same data along x, y and z are the same flow
// rotated, and the solver's cyclic rotation makes the three runs the same arithmetic.
// Units of B: magnetic pressure B^2/2 (physics::FlowState); fields quoted in units where
// it is B^2/(8 pi) (Ryu & Jones 1995) are divided by sqrt(4 pi).
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/physics_mhd.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/problem/problem.hpp"

namespace tessera::problems {

namespace {

// One side of the tube, in the frame of the tube (normal component first).
struct TubeState {
  double rho, p;
  std::array<double, 3> v;  // u, v, w
  std::array<double, 3> b;  // bx (shared by both sides), by, bz
};

TubeState tube_state(const Params& p, char side) {
  auto key = [&](const char* name) { return p.real(strprintf("problem.%s_%c", name, side)); };
  return {key("rho"),
          key("p"),
          {key("u"), key("v"), key("w")},
          {p.real("problem.bx"), key("by"), key("bz")}};
}

int tube_axis(const Params& p) {
  return p.string("problem.direction")[0] - 'x';
}

// The flow state of a tube-frame state along axis `dir`: component c of the tube frame is
// the axis (dir + c) mod 3.
physics::FlowState flow_state(const TubeState& s, int dir, double scalar) {
  physics::FlowState f;
  f.rho = s.rho;
  f.p = s.p;
  for (int c = 0; c < 3; ++c) {
    f.v[(dir + c) % 3] = s.v[c];
    f.B[(dir + c) % 3] = s.b[c];
  }
  f.s.fill(scalar);
  return f;
}

class MhdShockTube final : public Problem {
 public:
  explicit MhdShockTube(const Params& p)
      : left_(tube_state(p, 'l')),
        right_(tube_state(p, 'r')),
        x0_(p.real("problem.x0")),
        dir_(tube_axis(p)),
        model_(p) {}

  // Passive scalars mark the left gas (concentration 1) and follow the contact.
  void initial_state(const CellBox& cell, Real* u) const override {
    // Exact cell average: the volume fraction of each state along the normal (every
    // conserved variable, B included, is linear in the fraction).
    const double lo = cell.lo[dir_], hi = cell.hi[dir_];
    const double fl = std::clamp((x0_ - lo) / (hi - lo), 0.0, 1.0);
    Real l[kernels::kMaxVars], r[kernels::kMaxVars];
    model_.to_conserved(flow_state(left_, dir_, 1), l);
    model_.to_conserved(flow_state(right_, dir_, 0), r);
    for (int v = 0; v < model_.num_vars(); ++v) u[v] = Real(fl * l[v] + (1 - fl) * r[v]);
  }

 private:
  TubeState left_, right_;
  double x0_;
  int dir_;
  physics::Model model_;
};

// The magnetic counterpart of require_representable_state: B^2/2 finite in the build's
// precision, and the pressure the solver recovers from E, (gamma - 1)(E - rho v^2/2 - B^2/2)
// (physics_mhd.hpp, cons_to_prim), within 1% of p. A field whose energy swamps the internal
// energy (plasma beta below ~1e-13 in double precision) leaves a pressure made of round-off.
void require_representable_field(const Params& p, const TubeState& s, char side) {
  using kernels::MhdGlm;
  const double gamma = p.real("hydro.gamma");
  const char* precision = sizeof(Real) == sizeof(float) ? "single" : "double";
  const std::string what =
      strprintf("problem.bx = %s, problem.by_%c = %s, problem.bz_%c = %s, problem.p_%c = %s",
                format_number(s.b[0]).c_str(), side, format_number(s.b[1]).c_str(), side,
                format_number(s.b[2]).c_str(), side, format_number(s.p).c_str());
  MhdGlm::Vars w{};
  w[MhdGlm::kRho] = Real(s.rho);
  for (int c = 0; c < 3; ++c) {
    w[MhdGlm::kVelX + c] = Real(s.v[c]);
    w[MhdGlm::kBx + c] = Real(s.b[c]);
  }
  w[MhdGlm::kPres] = Real(s.p);
  const MhdGlm::Params prm{Real(gamma), Real(0), Real(0), Real(1), Real(1)};
  const MhdGlm::Vars u = MhdGlm::prim_to_cons(w, prm);
  const double magnetic = 0.5 * (s.b[0] * s.b[0] + s.b[1] * s.b[1] + s.b[2] * s.b[2]);
  if (!kernels::is_finite(u) || !std::isfinite(magnetic))
    throw Error(ErrorKind::kInput,
                strprintf("%s: the magnetic energy B^2/2 = %s, or the total energy with it, is "
                          "not finite in %s precision",
                          what.c_str(), format_number(magnetic).c_str(), precision));
  const double recovered = (Real(gamma) - Real(1)) * (u[MhdGlm::kEngy] - MhdGlm::kinetic_energy(u) -
                                                      MhdGlm::magnetic_energy(u));
  if (!(std::fabs(recovered - s.p) <= 0.01 * s.p))
    throw Error(ErrorKind::kInput,
                strprintf("%s: the magnetic energy B^2/2 = %s swamps the internal energy "
                          "p / (gamma - 1) = %s: the pressure the solver recovers from the "
                          "total energy is %s, not %s (round-off of %s precision); raise the "
                          "pressure or weaken the field",
                          what.c_str(), format_number(magnetic).c_str(),
                          format_number(s.p / (gamma - 1)).c_str(),
                          format_number(recovered).c_str(), format_number(s.p).c_str(), precision));
}

// What makes an MHD shock tube meaningless (see ProblemInfo::validate).
void validate_mhd_shock_tube(const Params& p, const mesh::Geometry& g) {
  // Without the field the run would be Sod's problem with the transverse velocities, and
  // the presets' names would promise what the run is not.
  if (!p.boolean("mhd.enabled"))
    throw Error(ErrorKind::kInput,
                "mhd.enabled = false: the MHD shock tube needs the magnetic field (problem.bx, "
                "by_l/bz_l, by_r/bz_r would be ignored); set mhd.enabled = true (for a "
                "hydrodynamic shock tube use problem.name = \"sod\")");
  const std::string axis = p.string("problem.direction");
  const int dir = tube_axis(p);
  // As for Sod: periodic ends join the two states a second time at the boundary.
  if (g.periodic(dir))
    throw Error(ErrorKind::kInput,
                "problem.direction = \"" + axis + "\" but mesh.bc_" + axis + "lo and mesh.bc_" +
                    axis +
                    "hi are periodic: the tube's ends would meet the other state "
                    "and start a second Riemann problem; set them to \"outflow\" (or "
                    "\"reflecting\")");
  const double x0 = p.real("problem.x0");
  if (!(x0 > g.xmin[dir] && x0 < g.xmax[dir]))
    throw Error(ErrorKind::kInput,
                "problem.x0 = " + format_number(x0) + " is not inside the tube, which spans [" +
                    format_number(g.xmin[dir]) + ", " + format_number(g.xmax[dir]) + "] along " +
                    axis + " (domain " + domain_extent(g) +
                    "): the domain would hold one state only; put x0 inside or change "
                    "mesh.xmin/mesh.xmax along " +
                    axis);
  // Non-positive densities and pressures are outside the schema's ranges; these are the
  // floors and the precision of the build.
  for (char side : {'l', 'r'}) {
    const TubeState s = tube_state(p, side);
    const std::string rho = strprintf("problem.rho_%c = %s", side, format_number(s.rho).c_str());
    const std::string pr = strprintf("problem.p_%c = %s", side, format_number(s.p).c_str());
    require_density_above_floor(p, s.rho, rho);
    require_pressure_above_floor(p, s.p, pr);
    std::array<double, 3> v{};
    for (int c = 0; c < 3; ++c) v[(dir + c) % 3] = s.v[c];
    require_representable_state(
        p, s.rho, v, s.p,
        strprintf("%s, problem.u_%c/v_%c/w_%c = %s/%s/%s, %s", rho.c_str(), side, side, side,
                  format_number(s.v[0]).c_str(), format_number(s.v[1]).c_str(),
                  format_number(s.v[2]).c_str(), pr.c_str()));
    require_representable_field(p, s, side);
  }
}

std::vector<ParamSpec> mhd_shock_tube_params() {
  const Range positive{0, std::numeric_limits<double>::infinity(), true, false};
  auto real = [](const char* key, double def, Range r, const char* help) {
    return ParamSpec{"problem", key, ParamType::kReal, def, help, r, 0, {}};
  };
  // Defaults: Brio & Wu 1988.
  return {
      real("rho_l", 1.0, positive, "density left of x0"),
      real("p_l", 1.0, positive, "gas pressure left of x0"),
      real("u_l", 0.0, {}, "velocity along the tube left of x0"),
      real("v_l", 0.0, {}, "first transverse velocity left of x0 (direction y: vz)"),
      real("w_l", 0.0, {}, "second transverse velocity left of x0 (direction y: vx)"),
      real("by_l", 1.0, {}, "first transverse field left of x0 (direction y: Bz)"),
      real("bz_l", 0.0, {}, "second transverse field left of x0 (direction y: Bx)"),
      real("rho_r", 0.125, positive, "density right of x0"),
      real("p_r", 0.1, positive, "gas pressure right of x0"),
      real("u_r", 0.0, {}, "velocity along the tube right of x0"),
      real("v_r", 0.0, {}, "first transverse velocity right of x0"),
      real("w_r", 0.0, {}, "second transverse velocity right of x0"),
      real("by_r", -1.0, {}, "first transverse field right of x0"),
      real("bz_r", 0.0, {}, "second transverse field right of x0"),
      real("bx", 0.75, {}, "field along the tube, both sides (units: magnetic pressure B^2/2)"),
      real("x0", 0.5, {}, "position of the initial discontinuity along `direction`"),
      {"problem",
       "direction",
       ParamType::kString,
       std::string("x"),
       "axis of the tube; the transverse components follow in cyclic order (y: v, w -> vz, vx)",
       {},
       0,
       {"x", "y", "z"}},
  };
}

const ProblemRegistrar kRegistrar{{
    "mhd_shock_tube",
    "MHD Riemann problem along x, y or z (presets: Brio & Wu 1988, Ryu & Jones 1995 2a)",
    mhd_shock_tube_params,
    [](const Params& p) -> std::unique_ptr<Problem> { return std::make_unique<MhdShockTube>(p); },
    validate_mhd_shock_tube, [](const Params&) { return 1; },  // along problem.direction
}};

}  // namespace

}  // namespace tessera::problems
