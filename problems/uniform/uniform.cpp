// A uniform state moving at constant velocity: the exact solution is the initial state.
// Used for tests of boundaries and conservation, and for benchmarks.
#include <algorithm>

#include "tessera/core/error.hpp"
#include "tessera/problem/problem.hpp"

namespace tessera::problems {

namespace {

class Uniform final : public Problem {
 public:
  // Passive scalars, if any, have concentration 1.
  explicit Uniform(const Params& p) : rho_(p.real("problem.rho")), model_(p) {
    physics::FlowState f;
    f.rho = rho_, f.v = p.real3("problem.velocity"), f.p = p.real("problem.pressure");
    f.s.fill(1.0);
    model_.to_conserved(f, state_);
  }
  void initial_state(const CellBox&, Real* u) const override {
    std::copy(state_, state_ + model_.num_vars(), u);
  }
  std::optional<double> analytic_density(const CellBox&, double) const override { return rho_; }

 private:
  double rho_;
  physics::Model model_;
  Real state_[kernels::kMaxVars];
};

// What makes the uniform flow meaningless (see ProblemInfo::validate).
void validate_uniform(const Params& p, const mesh::Geometry& g) {
  const double rho = p.real("problem.rho"), pressure = p.real("problem.pressure");
  const auto v = p.real3("problem.velocity");
  const std::string rho_text = "problem.rho = " + format_number(rho);
  const std::string p_text = "problem.pressure = " + format_number(pressure);
  const std::string v_text = "problem.velocity = " + format_point(v);
  require_density_above_floor(p, rho, rho_text);
  require_pressure_above_floor(p, pressure, p_text);
  require_representable_state(p, rho, v, pressure, rho_text + ", " + v_text + ", " + p_text);
  // A wall across the flow stops it: the flow is then not uniform, which the problem (and
  // its exact solution, the initial state) claims. Periodic and outflow faces keep it.
  for (int d = 0; d < 3; ++d)
    for (int side = 0; side < 2; ++side) {
      const std::string key = std::string("mesh.bc_") + "xyz"[d] + (side ? "hi" : "lo");
      if (v[d] != 0 && g.boundary[d][side] == mesh::Boundary::kReflecting)
        throw Error(ErrorKind::kInput,
                    v_text + " crosses the reflecting boundary " + key + " (velocity " +
                        format_number(v[d]) + " along " + "xyz"[d] +
                        "): the wall stops the flow, which then is not uniform; set that "
                        "component to 0 or the boundary to \"outflow\" or \"periodic\"");
    }
}

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
    "uniform", "Uniform state at constant velocity (tests and benchmarks)", uniform_params,
    [](const Params& p) -> std::unique_ptr<Problem> { return std::make_unique<Uniform>(p); },
    validate_uniform, [](const Params&) { return 3; },  // the flow varies along all three axes
}};

}  // namespace

}  // namespace tessera::problems
