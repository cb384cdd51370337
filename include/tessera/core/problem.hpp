// The problem interface: initial conditions (and analytic solutions) of a named test or
// science setup. Problems live in problems/<name>/ and register themselves by name.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/hydro_state.hpp"
#include "tessera/core/params.hpp"

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
  // Cell-averaged conserved initial state.
  virtual kernels::Cons initial_state(const CellBox& cell) const = 0;
  // Problem-defined refinement criterion, OR-ed with the [amr] criteria: whether a cell
  // of `level` at time t must be refined (e.g. a static region of interest).
  // A problem that overrides refine() says so here, so that flagging calls it only then.
  virtual bool has_refine_criterion() const { return false; }
  virtual bool refine(const CellBox& cell, double t, int level) const {
    (void)cell, (void)t, (void)level;
    return false;
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
};

void register_problem(ProblemInfo info);
// Throws tessera::Error(kInput) listing the known problems for an unknown name.
const ProblemInfo& find_problem(const std::string& name);
// Creates the problem `problem.name` selects; errors are prefixed with the problem name.
std::unique_ptr<Problem> create_problem(const Params& params);
std::vector<const ProblemInfo*> all_problems();  // sorted by name

// Defined at namespace scope in a problem's .cpp: `const ProblemRegistrar kReg{{...}};`
struct ProblemRegistrar {
  explicit ProblemRegistrar(ProblemInfo info) { register_problem(std::move(info)); }
};

// Average of a point function over a cell with 3-point Gauss-Legendre quadrature per
// dimension: exact for polynomials of degree 5, so smooth initial data are cell averages
// to well below the truncation error of a second-order scheme.
kernels::Cons gauss_cell_average(const CellBox& cell,
                                 const std::function<kernels::Cons(std::array<double, 3>)>& f);

}  // namespace tessera
