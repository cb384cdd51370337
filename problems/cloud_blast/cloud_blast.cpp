// Cloud disruption by a blast wave (Wang, Abel & Kaehler 2009 §6.3, seed 000): the
// Sedov-Taylor blast of problems/sedov (energy E as thermal energy in a sphere of radius
// r0, cold uniform medium rho0, p0) hits a uniform cloud of radius problem.cloud_radius,
// problem.cloud_density times denser than the medium and in pressure equilibrium with it,
// at problem.cloud_center. The deep-AMR stress test: the seed's run is a 64^3 root grid
// with six levels (effective 4096^3). A first passive scalar, if any, marks the cloud's gas
// (concentration 1 in the cloud), a second one the blast's ejecta.
#include <cmath>
#include <limits>

#include "tessera/core/error.hpp"
#include "tessera/problem/problem.hpp"

namespace tessera::problems {

namespace {

class CloudBlast final : public Problem {
 public:
  explicit CloudBlast(const Params& p)
      : energy_(p.real("problem.energy")),
        r0_(p.real("problem.radius")),
        rho0_(p.real("problem.rho0")),
        p0_(p.real("problem.p0")),
        gamma_(p.real("hydro.gamma")),
        center_(p.real3("problem.center")),
        cloud_center_(p.real3("problem.cloud_center")),
        cloud_radius_(p.real("problem.cloud_radius")),
        cloud_density_(p.real("problem.cloud_density")),
        model_(p) {}

  // Volume fractions of the cell in the injection sphere and in the cloud (which do not
  // overlap: validate_cloud_blast) set its energy and its density, so both converge to
  // the asked totals as the mesh resolves them.
  void initial_state(const CellBox& cell, Real* u) const override {
    using P = kernels::HydroAdiabatic;
    const double f = sphere_volume_fraction(cell, center_, r0_);
    const double fc = sphere_volume_fraction(cell, cloud_center_, cloud_radius_);
    const double e_in = energy_ / (4.0 / 3.0 * M_PI * r0_ * r0_ * r0_);
    const double rho = rho0_ * (1 + fc * (cloud_density_ - 1));
    u[P::kDens] = Real(rho);
    u[P::kMomX] = u[P::kMomY] = u[P::kMomZ] = 0;
    u[P::kEngy] = Real(p0_ / (gamma_ - 1) + f * e_in);
    const int n = model_.num_scalars();
    if (n > 0) u[model_.scalar_index(0)] = Real(rho0_ * cloud_density_ * fc);
    if (n > 1) u[model_.scalar_index(1)] = Real(rho0_ * f);
    for (int i = 2; i < n; ++i) u[model_.scalar_index(i)] = 0;
  }

 private:
  double energy_, r0_, rho0_, p0_, gamma_;
  std::array<double, 3> center_, cloud_center_;
  double cloud_radius_, cloud_density_;
  physics::Model model_;
};

// What makes the set-up meaningless (ProblemInfo::validate).
void validate_cloud_blast(const Params& p, const mesh::Geometry& g) {
  if (p.string("hydro.eos") != "adiabatic")
    throw Error(ErrorKind::kInput,
                "hydro.eos = \"" + p.string("hydro.eos") +
                    "\": the blast is driven by thermal energy, which only adiabatic gas has "
                    "(use hydro.eos = \"adiabatic\")");
  const auto c = p.real3("problem.center"), cc = p.real3("problem.cloud_center");
  const double r0 = p.real("problem.radius"), rc = p.real("problem.cloud_radius");
  const double rho0 = p.real("problem.rho0"), p0 = p.real("problem.p0");
  const double ratio = p.real("problem.cloud_density"), energy = p.real("problem.energy");
  const std::string sphere = "the injection sphere (problem.center = " + format_point(c) +
                             ", problem.radius = " + format_number(r0) + ")";
  const std::string cloud = "the cloud (problem.cloud_center = " + format_point(cc) +
                            ", problem.cloud_radius = " + format_number(rc) + ")";
  require_in_domain(g, c, "the blast centre problem.center = " + format_point(c));
  require_in_domain(g, cc, "the cloud centre problem.cloud_center = " + format_point(cc));
  // Both spheres whole inside the domain: a part beyond a face would be lost (outflow)
  // or not wrapped (periodic), and the blast or the cloud would not be the one asked for.
  auto require_inside = [&](const std::array<double, 3>& x, double r, const std::string& what) {
    for (int d = 0; d < 3; ++d)
      if (x[d] - r < g.xmin[d] || x[d] + r > g.xmax[d])
        throw Error(ErrorKind::kInput, what + " reaches beyond the domain along " +
                                           std::string(1, "xyz"[d]) + " (" + domain_extent(g) +
                                           "); keep it inside");
  };
  require_inside(c, r0, sphere);
  require_inside(cc, rc, cloud);
  double dist = 0;
  for (int d = 0; d < 3; ++d) dist += (c[d] - cc[d]) * (c[d] - cc[d]);
  dist = std::sqrt(dist);
  if (dist <= r0 + rc)
    throw Error(ErrorKind::kInput, sphere + " and " + cloud + " overlap (their centres are " +
                                       format_number(dist) +
                                       " apart): the blast must start outside the cloud");
  require_density_above_floor(p, rho0, "problem.rho0 = " + format_number(rho0));
  require_pressure_above_floor(p, p0, "problem.p0 = " + format_number(p0));
  require_representable_state(p, rho0 * ratio, {0, 0, 0}, p0,
                              "the cloud, density problem.rho0 * problem.cloud_density = " +
                                  format_number(rho0 * ratio) + " at pressure problem.p0");
  const double e_in = energy / (4.0 / 3.0 * M_PI * r0 * r0 * r0);
  require_representable_state(p, rho0, {0, 0, 0}, p0 + (p.real("hydro.gamma") - 1) * e_in,
                              "the pressure inside the injection sphere");
  // A cloud narrower than a cell of the finest level is not resolved anywhere.
  const double finest = g.dx(static_cast<int>(p.integer("amr.max_level")));
  if (rc < finest)
    problem_warning(p, cloud + " is narrower than a cell of the finest level (" +
                           format_number(finest) + "): raise amr.max_level to resolve it");
}

std::vector<ParamSpec> cloud_blast_params() {
  const double inf = std::numeric_limits<double>::infinity();
  const Range positive{0, inf, true, false};
  return {
      {"problem", "energy", ParamType::kReal, 1.0, "blast energy E (thermal)", positive, 0, {}},
      {"problem",
       "radius",
       ParamType::kReal,
       0.04,
       "radius r0 of the injection sphere",
       positive,
       0,
       {}},
      {"problem", "rho0", ParamType::kReal, 1.0, "density of the medium", positive, 0, {}},
      {"problem",
       "p0",
       ParamType::kReal,
       1e-5,
       "pressure of the medium and the cloud",
       positive,
       0,
       {}},
      {"problem",
       "center",
       ParamType::kReal3,
       std::array<double, 3>{0.0, 0.0, 0.0},
       "blast centre",
       {},
       0,
       {}},
      {"problem",
       "cloud_center",
       ParamType::kReal3,
       std::array<double, 3>{0.15, 0.0, 0.0},
       "cloud centre (the seed's cloud is 0.15 from the blast)",
       {},
       0,
       {}},
      {"problem", "cloud_radius", ParamType::kReal, 0.01, "cloud radius", positive, 0, {}},
      {"problem",
       "cloud_density",
       ParamType::kReal,
       10.0,
       "cloud density over the medium's (pressure equilibrium)",
       positive,
       0,
       {}},
  };
}

const ProblemRegistrar kRegistrar{{
    "cloud_blast",
    "Sedov-Taylor blast hitting a dense cloud (Wang, Abel & Kaehler 2009 §6.3): the deep-AMR "
    "stress test",
    cloud_blast_params,
    [](const Params& p) -> std::unique_ptr<Problem> { return std::make_unique<CloudBlast>(p); },
    validate_cloud_blast, [](const Params&) { return 3; },  // the flow varies along all three axes
}};

}  // namespace

}  // namespace tessera::problems
