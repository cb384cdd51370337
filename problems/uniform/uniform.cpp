// A uniform state moving at constant velocity: the exact solution is the initial state.
// Used for tests of boundaries and conservation, and for benchmarks.
#include "tessera/core/problem.hpp"

namespace tessera::problems {

namespace {

class Uniform final : public Problem {
 public:
  explicit Uniform(const Params& p) : rho_(p.real("problem.rho")) {
    const auto v = p.real3("problem.velocity");
    state_ = kernels::prim_to_cons(
        {Real(rho_), {Real(v[0]), Real(v[1]), Real(v[2])}, Real(p.real("problem.pressure"))},
        Real(p.real("hydro.gamma")));
  }
  kernels::Cons initial_state(const CellBox&) const override { return state_; }
  std::optional<double> analytic_density(const CellBox&, double) const override { return rho_; }

 private:
  double rho_;
  kernels::Cons state_;
};

std::vector<ParamSpec> uniform_params() {
  const Range positive{0, std::numeric_limits<double>::infinity(), true, false};
  return {
      {"problem", "rho", ParamType::kReal, 1.0, "density", positive, 0, {}},
      {"problem", "pressure", ParamType::kReal, 1.0, "pressure", positive, 0, {}},
      {"problem",
       "velocity",
       ParamType::kReal3,
       std::array<double, 3>{0, 0, 0},
       "velocity",
       {},
       0,
       {}},
  };
}

const ProblemRegistrar kRegistrar{{
    "uniform",
    "Uniform state at constant velocity (tests and benchmarks)",
    uniform_params,
    [](const Params& p) -> std::unique_ptr<Problem> { return std::make_unique<Uniform>(p); },
}};

}  // namespace

}  // namespace tessera::problems
