#include "tessera/problem/problem.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/params.hpp"

namespace tessera {

namespace {
constexpr int kMaxAveraged = 64;  // values per point of gauss_cell_average
}  // namespace

namespace {
std::map<std::string, ProblemInfo>& registry() {
  static std::map<std::string, ProblemInfo> r;
  return r;
}
}  // namespace

void register_problem(ProblemInfo info) {
  auto name = info.name;
  if (!registry().emplace(name, std::move(info)).second)
    throw Error(ErrorKind::kInternal, "problem '" + name + "' registered twice");
}

const ProblemInfo& find_problem(const std::string& name) {
  auto it = registry().find(name);
  if (it != registry().end()) return it->second;
  std::string known;
  for (const auto& [n, info] : registry()) known += (known.empty() ? "" : ", ") + n;
  throw Error(ErrorKind::kInput,
              "unknown problem '" + shorten_for_message(name) + "'; known problems: " + known);
}

double stable_cfl(const Params& params, int dimensions) {
  if (params.string("hydro.scheme") == "relaxing_tvd") return 1.0;
  return 1.0 / std::max(1, dimensions);
}

namespace {

// hydro.cfl against the scheme's limit for this problem's flow (a run past it blows up
// or creeps on with a collapsing time step: issue of a run that "finished" with its
// energy multiplied by 2500), unless hydro.cfl_unsafe says the user knows better.
void check_courant_number(const Params& params, const ProblemInfo& info) {
  const int d = info.flow_dimensions ? info.flow_dimensions(params) : 3;
  const double cfl = params.real("hydro.cfl"), limit = stable_cfl(params, d);
  if (cfl <= limit * (1 + 1e-12) || params.boolean("hydro.cfl_unsafe")) return;
  const bool split = params.string("hydro.scheme") == "relaxing_tvd";
  throw Error(
      ErrorKind::kInput,
      strprintf("hydro.cfl = %s is above %s, the stable limit of %s for this problem's "
                "%dD flow (%s); lower hydro.cfl, or set hydro.cfl_unsafe = true to run "
                "past the limit anyway",
                format_number(cfl).c_str(), d == 1 || split ? "1" : (d == 2 ? "1/2" : "1/3"),
                split ? "the relaxing-TVD scheme" : "the unsplit method of lines", d,
                split ? "each sweep updates one direction, stable up to a Courant "
                        "number of 1"
                      : "an unsplit update is stable while the Courant numbers of the "
                        "directions add up to at most 1, and each direction gets "
                        "hydro.cfl"));
}

}  // namespace

std::unique_ptr<Problem> create_problem(const Params& params) {
  const std::string& name = params.string("problem.name");
  const ProblemInfo& info = find_problem(name);
  // Outside the try: a geometry error is not the problem's.
  const mesh::Geometry geometry = mesh::geometry_from_params(params);
  try {
    if (info.validate) info.validate(params, geometry);
    check_courant_number(params, info);
    auto problem = info.create(params);
    static const char* kAxis = "xyz";
    if (!problem->has_boundary())
      for (int d = 0; d < 3; ++d)
        for (int side = 0; side < 2; ++side)
          if (geometry.boundary[d][side] == mesh::Boundary::kProblem)
            throw Error(ErrorKind::kInput,
                        std::string("mesh.bc_") + kAxis[d] + (side ? "hi" : "lo") +
                            " = \"problem\": this problem defines no boundary states; use "
                            "periodic, outflow or reflecting");
    return problem;
  } catch (const Error& e) {
    throw Error(e.kind(), "[problem] " + name + ": " + e.what());
  }
}

std::vector<const ProblemInfo*> all_problems() {
  std::vector<const ProblemInfo*> out;
  for (const auto& [n, info] : registry()) out.push_back(&info);
  return out;
}

void problem_warning(const Params& params, const std::string& text) {
  log_line("warning: [problem] %s: %s", params.string("problem.name").c_str(), text.c_str());
}

std::string format_number(double x) {
  return format_param_value(ParamValue(x));
}

std::string format_point(const std::array<double, 3>& x) {
  std::string out = "[";
  for (int d = 0; d < 3; ++d) out += (d ? ", " : "") + format_number(x[d]);
  return out + "]";
}

std::string domain_extent(const mesh::Geometry& g) {
  std::string out;
  for (int d = 0; d < 3; ++d)
    out += (d ? " x [" : "[") + format_number(g.xmin[d]) + ", " + format_number(g.xmax[d]) + "]";
  return out;
}

void require_in_domain(const mesh::Geometry& g, const std::array<double, 3>& x,
                       const std::string& what) {
  for (int d = 0; d < 3; ++d)
    if (!(x[d] >= g.xmin[d] && x[d] <= g.xmax[d]))
      throw Error(ErrorKind::kInput, what + " lies outside the domain " + domain_extent(g) +
                                         " (along " + "xyz"[d] +
                                         "); move it inside or change mesh.xmin/mesh.xmax");
}

void require_periodic(const Params& params, const mesh::Geometry& g, const std::string& why) {
  std::string bad;
  for (int d = 0; d < 3; ++d) {
    if (g.periodic(d)) continue;
    for (const char* side : {"lo", "hi"}) {
      const std::string key = std::string("mesh.bc_") + "xyz"[d] + side;
      bad += (bad.empty() ? "" : ", ") + key + " = \"" + params.string(key) + "\"";
    }
  }
  if (!bad.empty())
    throw Error(ErrorKind::kInput, "every boundary must be periodic (" + why + "), but " + bad +
                                       "; set them to \"periodic\"");
}

namespace {
// `quantity` names the floor key (hydro.<quantity>_floor) and the message.
void require_above_floor(const Params& params, const char* quantity, double value,
                         const std::string& what) {
  const std::string key = std::string("hydro.") + quantity + "_floor";
  const double floor = params.real(key);
  if (!(value >= floor))
    throw Error(ErrorKind::kInput, what + " is below " + key + " = " + format_number(floor) +
                                       ": the floor would replace the initial " + quantity +
                                       "; raise the " + quantity + " or lower the floor");
}
}  // namespace

void require_density_above_floor(const Params& params, double rho, const std::string& what) {
  require_above_floor(params, "density", rho, what);
}

void require_pressure_above_floor(const Params& params, double p, const std::string& what) {
  require_above_floor(params, "pressure", p, what);
}

void require_representable_state(const Params& params, double rho, const std::array<double, 3>& v,
                                 double p, const std::string& what) {
  using kernels::HydroAdiabatic;
  const char* precision = sizeof(Real) == sizeof(float) ? "single" : "double";
  if (params.string("hydro.eos") == "isothermal") {
    // No energy equation: only the momentum must be representable.
    for (int d = 0; d < 3; ++d)
      if (!std::isfinite(Real(rho) * Real(v[d])))
        throw Error(ErrorKind::kInput,
                    strprintf("%s: the momentum rho v is not finite in %s precision", what.c_str(),
                              precision));
    return;
  }
  const double gamma = params.real("hydro.gamma");
  HydroAdiabatic::Vars w;
  w[HydroAdiabatic::kRho] = Real(rho);
  for (int d = 0; d < 3; ++d) w[HydroAdiabatic::kVelX + d] = Real(v[d]);
  w[HydroAdiabatic::kPres] = Real(p);
  const HydroAdiabatic::Vars u = HydroAdiabatic::prim_to_cons(w, {Real(gamma), Real(0), Real(0)});
  const double internal = p / (gamma - 1);
  const double kinetic = 0.5 * rho * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  if (!kernels::is_finite(u) || !std::isfinite(internal + kinetic))
    throw Error(
        ErrorKind::kInput,
        strprintf("%s with hydro.gamma = %s: the conserved state (density %s, energy "
                  "p / (gamma - 1) + rho v^2 / 2 = %s + %s) is not finite in %s "
                  "precision",
                  what.c_str(), format_number(gamma).c_str(), format_number(rho).c_str(),
                  format_number(internal).c_str(), format_number(kinetic).c_str(), precision));
  // The pressure as the solver will see it.
  const double recovered =
      (Real(gamma) - Real(1)) * (u[HydroAdiabatic::kEngy] - HydroAdiabatic::kinetic_energy(u));
  if (!std::isfinite(recovered))
    throw Error(
        ErrorKind::kInput,
        strprintf("%s: the kinetic energy (rho v)^2 / (2 rho) the solver computes from "
                  "the conserved state (density %s, momentum %s) overflows in %s "
                  "precision",
                  what.c_str(), format_number(rho).c_str(),
                  format_point({double(u[1]), double(u[2]), double(u[3])}).c_str(), precision));
  if (!(std::fabs(recovered - p) <= 0.01 * p))
    throw Error(ErrorKind::kInput,
                strprintf("%s with hydro.gamma = %s: the kinetic energy rho v^2 / 2 = %s swamps "
                          "the internal energy p / (gamma - 1) = %s, so the pressure recovered "
                          "from the conserved state is %s instead of %s (round-off in %s "
                          "precision)",
                          what.c_str(), format_number(gamma).c_str(),
                          format_number(kinetic).c_str(), format_number(internal).c_str(),
                          format_number(recovered).c_str(), format_number(p).c_str(), precision));
}

void check_feature_resolution(const Params& params, const mesh::Geometry& g, double size,
                              const std::string& what, const std::string& quantity,
                              const std::function<double(double h)>& captured) {
  const int max_level = static_cast<int>(params.integer("amr.max_level"));
  auto held = [&](double h) { return size < 2 * h ? captured(h) : 1.0; };
  auto grid = [&](int level) {
    return level == 0 ? strprintf("root grid (cell width %s)", format_number(g.dx(0)).c_str())
                      : strprintf("finest level (amr.max_level = %d, cell width %s)", level,
                                  format_number(g.dx(level)).c_str());
  };
  const double fine = held(g.dx(max_level));
  if (!(std::fabs(fine - 1) <= 0.1))
    throw Error(ErrorKind::kInput,
                strprintf("%s is too small for the %s: the initial cell averages hold %.3g%% of "
                          "its %s, more than 10%% off, so the run would not start from the "
                          "setup asked for; make it larger or the cells smaller (mesh.nx, "
                          "amr.max_level)",
                          what.c_str(), grid(max_level).c_str(), 100 * fine, quantity.c_str()));
  const double root = max_level > 0 ? held(g.dx(0)) : fine;
  if (!(root >= 0.01))
    throw Error(ErrorKind::kInput,
                strprintf("%s is too small for the %s, from which refinement starts: the "
                          "initial cell averages hold %.3g%% of its %s, nothing for the "
                          "refinement criteria to find; make it larger or the root cells "
                          "smaller (mesh.nx)",
                          what.c_str(), grid(0).c_str(), 100 * root, quantity.c_str()));
  if (std::fabs(root - 1) > 0.1)
    problem_warning(params, strprintf("%s: the %s holds %.3g%% of its %s; the setup is right "
                                      "only where the refinement covers it",
                                      what.c_str(), grid(0).c_str(), 100 * root, quantity.c_str()));
  else if (size < g.dx(0))
    problem_warning(params, strprintf("%s is smaller than a cell of the %s: only the few cells "
                                      "it touches represent it",
                                      what.c_str(), grid(0).c_str()));
}

double sphere_volume_fraction(const CellBox& cell, const std::array<double, 3>& c, double r0) {
  double near = 0, far = 0;
  for (int d = 0; d < 3; ++d) {
    const double a = cell.lo[d] - c[d], b = cell.hi[d] - c[d];
    const double closest = (a > 0) ? a : (b < 0 ? b : 0.0);
    const double farthest = std::max(std::fabs(a), std::fabs(b));
    near += closest * closest;
    far += farthest * farthest;
  }
  if (near >= r0 * r0) return 0;
  if (far <= r0 * r0) return 1;
  constexpr int n = 16;
  int inside = 0;
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const int q[3] = {i, j, k};
        double r2 = 0;
        for (int d = 0; d < 3; ++d) {
          const double x = cell.lo[d] + (q[d] + 0.5) / n * (cell.hi[d] - cell.lo[d]);
          r2 += (x - c[d]) * (x - c[d]);
        }
        inside += r2 < r0 * r0;
      }
  return double(inside) / (n * n * n);
}

void gauss_cell_average(const CellBox& cell, int n,
                        const std::function<void(std::array<double, 3>, Real*)>& f, Real* out) {
  static const double kNode[3] = {-std::sqrt(0.6), 0.0, std::sqrt(0.6)};
  static const double kWeight[3] = {5.0 / 18, 8.0 / 18, 5.0 / 18};
  double acc[kMaxAveraged] = {};
  Real u[kMaxAveraged];
  if (n > kMaxAveraged)
    throw Error(ErrorKind::kInternal,
                strprintf("cell average of %d values (at most %d)", n, kMaxAveraged));
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 3; ++i) {
        const int q[3] = {i, j, k};
        std::array<double, 3> x{};
        for (int d = 0; d < 3; ++d)
          x[d] = 0.5 * (cell.lo[d] + cell.hi[d]) + 0.5 * (cell.hi[d] - cell.lo[d]) * kNode[q[d]];
        f(x, u);
        const double w = kWeight[i] * kWeight[j] * kWeight[k];
        for (int v = 0; v < n; ++v) acc[v] += w * u[v];
      }
  for (int v = 0; v < n; ++v) out[v] = Real(acc[v]);
}

double gauss_cell_average(const CellBox& cell,
                          const std::function<double(std::array<double, 3>)>& f) {
  Real out;
  gauss_cell_average(
      cell, 1, [&](std::array<double, 3> x, Real* u) { u[0] = Real(f(x)); }, &out);
  return out;
}

void gauss_cell_average(const CellBox& cell, const physics::Model& model,
                        const std::function<physics::FlowState(std::array<double, 3>)>& f,
                        Real* out) {
  gauss_cell_average(
      cell, model.num_vars(),
      [&](std::array<double, 3> x, Real* u) { model.to_conserved(f(x), u); }, out);
}

}  // namespace tessera
