// Point masses (the multi-level Poisson test of seed 001, §4.5 and Fig. 15): fixed point
// masses problem.masses at problem.positions (x, y, z per mass) in a tenuous background at
// rest, each deposited with cloud-in-cell onto the finest level: a cube of the finest cell
// width h_f centred on the mass, so that a finest cell holds the mass times its overlap
// with the cube / h_f^3 and every coarser cell the average of what it covers. Cells within
// problem.refine_cells of their own width of a mass are refined, down to amr.max_level,
// so the masses lie on the finest level. With isolated boundaries the potential is
// -G sum_i M_i / |x - x_i| away from the clouds (the background's own is not included:
// with background << M / L^3 it is negligible). A test of the solver, not of the
// dynamics: the gas falls onto the masses once the run advances.
#include <cmath>
#include <limits>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/problem/problem.hpp"

namespace tessera::problems {

namespace {

struct Mass {
  double m;
  std::array<double, 3> x;
};

std::vector<Mass> read_masses(const Params& p) {
  const auto m = p.real_list("problem.masses");
  const auto x = p.real_list("problem.positions");
  std::vector<Mass> out;
  for (std::size_t i = 0; i < m.size() && 3 * i + 2 < x.size(); ++i)
    out.push_back({m[i], {x[3 * i], x[3 * i + 1], x[3 * i + 2]}});
  return out;
}

double finest_width(const Params& p, const mesh::Geometry& g) {
  return g.dx0 * std::pow(0.5, double(p.integer("amr.max_level")));
}

class PointMasses final : public Problem {
 public:
  PointMasses(const Params& p, double cloud)
      : masses_(read_masses(p)),
        cloud_(cloud),
        background_(p.real("problem.background")),
        pressure_(p.real("problem.pressure")),
        refine_cells_(p.real("problem.refine_cells")),
        model_(p) {}

  void initial_state(const CellBox& cell, Real* u) const override {
    double volume = 1;
    for (int d = 0; d < 3; ++d) volume *= cell.hi[d] - cell.lo[d];
    double rho = background_;
    for (const Mass& m : masses_) {
      double overlap = 1;
      for (int d = 0; d < 3; ++d)
        overlap *= std::max(0.0, std::min(cell.hi[d], m.x[d] + 0.5 * cloud_) -
                                     std::max(cell.lo[d], m.x[d] - 0.5 * cloud_));
      rho += m.m * overlap / (cloud_ * cloud_ * cloud_) / volume;
    }
    physics::FlowState f;
    f.rho = rho;
    f.p = pressure_;
    f.s.fill(1.0);
    model_.to_conserved(f, u);
  }

  bool has_refine_criterion() const override { return true; }
  bool refine(const CellBox& cell, double, int) const override {
    const auto c = cell.center();
    const double h = cell.hi[0] - cell.lo[0];
    for (const Mass& m : masses_) {
      double r2 = 0;
      for (int d = 0; d < 3; ++d) r2 += (c[d] - m.x[d]) * (c[d] - m.x[d]);
      if (r2 < refine_cells_ * refine_cells_ * h * h) return true;
    }
    return false;
  }

 private:
  std::vector<Mass> masses_;
  double cloud_, background_, pressure_, refine_cells_;
  physics::Model model_;
};

void validate_point_masses(const Params& p, const mesh::Geometry& g) {
  const auto m = p.real_list("problem.masses");
  const auto x = p.real_list("problem.positions");
  if (x.size() != 3 * m.size())
    throw Error(ErrorKind::kInput,
                strprintf("problem.positions has %zu numbers for %zu masses (problem.masses): "
                          "give x, y, z of each mass, %zu numbers",
                          x.size(), m.size(), 3 * m.size()));
  if (!p.boolean("gravity.enabled") || p.string("gravity.boundary") != "isolated")
    throw Error(ErrorKind::kInput,
                "[problem] point_masses tests the isolated Poisson solve against the "
                "free-space potential: set gravity.enabled = true and gravity.boundary = "
                "\"isolated\"");
  for (std::size_t i = 0; i < m.size(); ++i) {
    const std::array<double, 3> xi = {x[3 * i], x[3 * i + 1], x[3 * i + 2]};
    if (!(m[i] > 0))
      throw Error(ErrorKind::kInput, strprintf("problem.masses[%zu] = %s must be positive", i,
                                               format_number(m[i]).c_str()));
    // Two root cells of margin: the refined region around the mass stays inside.
    for (int d = 0; d < 3; ++d)
      if (!(xi[d] - 2 * g.dx0 >= g.xmin[d] && xi[d] + 2 * g.dx0 <= g.xmax[d]))
        throw Error(ErrorKind::kInput,
                    strprintf("mass %zu at problem.positions %s is within two root cells "
                              "(%s) of the boundary of the domain %s along %c: its refined "
                              "region would not fit",
                              i, format_point(xi).c_str(), format_number(2 * g.dx0).c_str(),
                              domain_extent(g).c_str(), "xyz"[d]));
  }
  require_density_above_floor(
      p, p.real("problem.background"),
      "problem.background = " + format_number(p.real("problem.background")));
  require_pressure_above_floor(p, p.real("problem.pressure"),
                               "problem.pressure = " + format_number(p.real("problem.pressure")));
}

std::vector<ParamSpec> point_masses_params() {
  const Range positive{0, std::numeric_limits<double>::infinity(), true, false};
  return {
      {"problem",
       "masses",
       ParamType::kRealList,
       std::vector<double>{1.0},
       "the point masses",
       positive,
       0,
       {}},
      {"problem",
       "positions",
       ParamType::kRealList,
       std::vector<double>{0.47, 0.53, 0.51},
       "x, y, z of each mass in turn",
       {},
       0,
       {}},
      {"problem", "background", ParamType::kReal, 1e-8, "background density", positive, 0, {}},
      {"problem", "pressure", ParamType::kReal, 1e-8, "uniform pressure", positive, 0, {}},
      {"problem",
       "refine_cells",
       ParamType::kReal,
       4.0,
       "cells within this many of their own width of a mass are refined",
       positive,
       0,
       {}},
  };
}

const ProblemRegistrar kRegistrar{{
    "point_masses",
    "Fixed point masses deposited with cloud-in-cell on the finest level, refined around "
    "them: the multi-level Poisson solve against the free-space potential",
    point_masses_params,
    [](const Params& p) -> std::unique_ptr<Problem> {
      return std::make_unique<PointMasses>(p, finest_width(p, mesh::geometry_from_params(p)));
    },
    validate_point_masses, [](const Params&) { return 3; },  // the flow varies along all three axes
}};

}  // namespace

}  // namespace tessera::problems
