// A whole run: parameters -> mesh + problem -> time loop with outputs and log.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>

#include "tessera/core/params.hpp"
#include "tessera/core/problem.hpp"
#include "tessera/core/timers.hpp"
#include "tessera/evolve/executor.hpp"
#include "tessera/evolve/pipeline.hpp"
#include "tessera/mesh/mesh.hpp"

namespace tessera::evolve {

struct RunSummary {
  long steps = 0;
  double time = 0;
  double wall_seconds = 0;
  double cell_updates_per_second = 0;
  int plot_files = 0;
};

class Simulation {
 public:
  explicit Simulation(Params params);
  ~Simulation();

  // Sets the initial conditions (called by run() when not done yet).
  void initialize();
  // Steps to run.t_end (or run.max_steps), writing plot files and the log.
  RunSummary run();

  const Params& params() const { return params_; }
  const mesh::Mesh& mesh() const { return *mesh_; }
  const Problem& problem() const { return *problem_; }
  double time() const { return time_; }
  long step() const { return step_; }
  // Volume integrals of the conserved variables (dens, mom x/y/z, engy) over the domain.
  std::array<double, 5> conserved_totals() const;
  // L1 norm (volume average) of density minus the problem's analytic solution.
  std::optional<double> density_l1_error() const;

 private:
  double stable_dt(double max_speed) const;
  double initial_max_speed() const;
  void write_plot(int index);

  Params params_;
  std::string problem_name_;
  std::unique_ptr<mesh::Mesh> mesh_;
  std::unique_ptr<Problem> problem_;
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<Pipeline> pipeline_;
  SolveArgs args_{};
  Timers timers_;
  double time_ = 0;
  long step_ = 0;
  bool initialized_ = false;
};

}  // namespace tessera::evolve
