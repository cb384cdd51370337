// The problem interface: initial conditions (and analytic solutions) of a named test or
// science setup. Problems live in problems/<name>/ and register themselves by name.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/params.hpp"
#include "tessera/mesh/geometry.hpp"
#include "tessera/physics/model.hpp"

namespace tessera {

// A cell's extent [lo, hi) in physical coordinates.
struct CellBox {
  std::array<double, 3> lo{};
  std::array<double, 3> hi{};
  std::array<double, 3> center() const {
    return {0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), 0.5 * (lo[2] + hi[2])};
  }
  double volume() const { return (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]); }
  // The cubic cell of width h centred on c.
  static CellBox around(std::array<double, 3> c, double h) {
    return {{c[0] - 0.5 * h, c[1] - 0.5 * h, c[2] - 0.5 * h},
            {c[0] + 0.5 * h, c[1] + 0.5 * h, c[2] + 0.5 * h}};
  }
};

class Problem {
 public:
  virtual ~Problem() = default;
  // Cell-averaged conserved initial state u[v] of every variable of the run's equations
  // (physics::Model::num_vars()), made through the model (Model::to_conserved) so that a
  // problem describes a flow, not the variables of one physics.
  virtual void initial_state(const CellBox& cell, Real* u) const = 0;
  // Problem-defined refinement criterion, OR-ed with the [amr] criteria: whether a cell
  // of `level` at time t must be refined (e.g. a static region of interest).
  // A problem that overrides refine() says so here, so that flagging calls it only then.
  virtual bool has_refine_criterion() const { return false; }
  virtual bool refine(const CellBox& cell, double t, int level) const {
    (void)cell, (void)t, (void)level;
    return false;
  }
  // Problem-defined boundary conditions: a problem that overrides boundary_state() says so
  // here, and only then may a side of the domain have mesh.bc_<axis><lo|hi> = "problem".
  virtual bool has_boundary() const { return false; }
  // The ghost cell `cell` beyond side `side` (0 lower, 1 upper face) of dimension `dim` at
  // time t, on a side with mesh.bc_* = "problem": writes the cell's conserved state u[v]
  // (as initial_state does) and returns mesh::GhostFill::kState, or returns kOutflow /
  // kReflecting to have that standard condition in this cell (a wall over part of a face).
  // Called concurrently from several threads, for every ghost cell of every patch group
  // on such a side (along periodic dimensions the cell's image inside the domain), at the
  // time of the data being prepared (the start of a level's step).
  virtual mesh::GhostFill boundary_state(const CellBox& cell, double t, int dim, int side,
                                         Real* u) const {
    (void)cell, (void)t, (void)dim, (void)side, (void)u;
    return mesh::GhostFill::kOutflow;
  }
  // Cell-averaged density of the analytic solution at time t, where one is known.
  virtual std::optional<double> analytic_density(const CellBox& cell, double t) const {
    (void)cell, (void)t;
    return std::nullopt;
  }
};

struct ProblemInfo {
  std::string name;
  std::string description;                         // one line, for `tessera problems`
  std::function<std::vector<ParamSpec>()> params;  // the [problem] keys
  std::function<std::unique_ptr<Problem>(const Params&)> create;  // validated params
  // What the schema cannot see: settings that are each in range but together make the
  // problem meaningless (an interface outside the domain, periodic boundaries across a
  // shock tube, a state below the floors or one that overflows, a feature no level of the
  // mesh resolves, ...). Throws tessera::Error(kInput) whose message names the keys, their
  // values and the reason; settings that are legitimate but poorly resolved get a warning
  // (problem_warning) instead. Called by create_problem, before `create`, with parameters
  // the schema has validated and the domain they describe. Empty: nothing to check.
  std::function<void(const Params&, const mesh::Geometry&)> validate;
  // The number of axes along which the flow varies: 1 for a shock tube or a plane wave
  // along an axis, 2 for a flow in a plane, 3 when empty (a blast, a turbulent box). The
  // mesh is always 3D; this sets the unsplit schemes' stable Courant number (1 / d).
  std::function<int(const Params&)> flow_dimensions;
};

// The largest stable hydro.cfl of the run's scheme for a flow of `dimensions` axes: the
// unsplit method of lines (rk2, vl2; hydrodynamics and GLM-MHD) is stable while the
// Courant numbers of the directions add up to at most 1, and the time step gives each
// direction hydro.cfl: 1 / d. The dimensionally split relaxing TVD updates one direction
// per sweep: 1.
double stable_cfl(const Params& params, int dimensions);

void register_problem(ProblemInfo info);
// Throws tessera::Error(kInput) listing the known problems for an unknown name.
const ProblemInfo& find_problem(const std::string& name);
// Creates the problem `problem.name` selects, after its validate hook accepted the
// parameters (used by `tessera check`, `tessera run` and `tessera analytic` alike); errors
// are prefixed with the problem name.
std::unique_ptr<Problem> create_problem(const Params& params);
std::vector<const ProblemInfo*> all_problems();  // sorted by name

// Defined at namespace scope in a problem's .cpp: `const ProblemRegistrar kReg{{...}};`
struct ProblemRegistrar {
  explicit ProblemRegistrar(ProblemInfo info) { register_problem(std::move(info)); }
};

// Helpers of the validate hooks. Each check throws tessera::Error(kInput); `what` names the
// keys and values the checked quantity comes from (e.g. "problem.rho_r = 0.125").

// Logs "warning: [problem] <name>: <text>".
void problem_warning(const Params& params, const std::string& text);
// A number as the parameter files write it (shortest round-trip form).
std::string format_number(double x);
// "[x, y, z]", each as format_number writes it.
std::string format_point(const std::array<double, 3>& x);
// "[xmin, xmax] x [ymin, ymax] x [zmin, zmax]".
std::string domain_extent(const mesh::Geometry& g);
// The point lies in the closed domain [mesh.xmin, mesh.xmax]; the message gives the extent.
void require_in_domain(const mesh::Geometry& g, const std::array<double, 3>& x,
                       const std::string& what);
// Every boundary is periodic (the problem's solution is periodic in the box).
void require_periodic(const Params& params, const mesh::Geometry& g, const std::string& why);
// A density (pressure) the problem sets is at least hydro.density_floor
// (hydro.pressure_floor): below it the floors would replace the initial state at once.
void require_density_above_floor(const Params& params, double rho, const std::string& what);
void require_pressure_above_floor(const Params& params, double p, const std::string& what);
// The conserved form of the primitive state (rho, v, p), in the precision of the build, is
// finite, and the pressure the solver recovers from it, (gamma - 1) (E - rho v^2 / 2), is p
// to 1%: a kinetic energy that swamps the internal energy leaves a pressure made of
// round-off.
void require_representable_state(const Params& params, double rho, const std::array<double, 3>& v,
                                 double p, const std::string& what);
// A localized feature of size `size` (a blast's injection sphere, a blob), described by
// `what`. `captured(h)` is the fraction of the feature's integral (its `quantity`: energy,
// excess mass) that the initial cell averages of a grid of cell width h hold, which sub-cell
// features get wrong; it is called only for h > size / 2 (larger features are held to far
// better than 1%), so it may sum over the few cells the feature touches. Rejects the
// feature when the finest level (amr.max_level) still gets its integral more than 10% wrong,
// or when the root grid, from which refinement starts, holds less than 1% of it (nothing
// there for the refinement criteria to find); warns when it is smaller than a root cell or,
// with refinement, the root grid alone gets it more than 10% wrong.
void check_feature_resolution(const Params& params, const mesh::Geometry& g, double size,
                              const std::string& what, const std::string& quantity,
                              const std::function<double(double h)>& captured);

// Fraction of the cell inside the sphere of radius r about c: exact for cells wholly
// inside or outside, else the fraction of 16^3 sub-sample points inside (a deposit of a
// quantity in the sphere converges to its total as the sphere is resolved).
double sphere_volume_fraction(const CellBox& cell, const std::array<double, 3>& c, double r);

// Average of a point function over a cell with 3-point Gauss-Legendre quadrature per
// dimension: exact for polynomials of degree 5, so smooth initial data are cell averages
// to well below the truncation error of a second-order scheme. f(x, u) writes the n
// values of point x; their averages go to out[0..n).
void gauss_cell_average(const CellBox& cell, int n,
                        const std::function<void(std::array<double, 3>, Real*)>& f, Real* out);
// The same for one value.
double gauss_cell_average(const CellBox& cell,
                          const std::function<double(std::array<double, 3>)>& f);
// The cell average of a flow described point by point, as the model's conserved variables.
void gauss_cell_average(const CellBox& cell, const physics::Model& model,
                        const std::function<physics::FlowState(std::array<double, 3>)>& f,
                        Real* out);

}  // namespace tessera
