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
#include "tessera/evolve/flux_register.hpp"
#include "tessera/evolve/pipeline.hpp"
#include "tessera/evolve/refinement.hpp"
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
  // Steps taken by each level so far.
  const std::vector<long>& level_steps() const { return level_steps_; }
  // Cell updates done so far (all patches of every level, each of its steps).
  long long cell_updates() const { return cell_updates_; }
  // Replaces the hierarchy by what the refinement criteria ask for now (done by run()
  // every amr.regrid_interval root steps); returns whether it changed.
  bool regrid();
  // Regrids that changed the hierarchy so far.
  int regrid_count() const { return regrid_count_; }
  // Checks the mesh invariants and restriction after every regrid (tests; always on in
  // debug builds). Throws tessera::Error(kInternal) on a violation.
  void set_verify_mesh(bool verify) { verify_mesh_ = verify; }
  // Volume integrals of the conserved variables (dens, mom x/y/z, engy) over the domain.
  std::array<double, 5> conserved_totals() const;
  // L1 norm (volume average) of density minus the problem's analytic solution.
  std::optional<double> density_l1_error() const;

 private:
  double root_dt() const;
  double level_max_speed(int level) const;
  void fill_from_problem(mesh::Mesh& m) const;
  void adopt_mesh(std::unique_ptr<mesh::Mesh> next);
  void advance(int level, double dt, double coarse_weight);
  void write_plot(int index);
  std::string level_summary() const;
  void log_device_summary(long long updates) const;
  std::string machine_summary(const RunSummary& run) const;

  Params params_;
  std::string problem_name_;
  std::unique_ptr<mesh::Mesh> mesh_;
  std::unique_ptr<Problem> problem_;
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<Pipeline> pipeline_;
  FluxRegisters registers_;
  RefinementParams refinement_;
  bool subcycle_ = true;
  SolveArgs args_{};
  std::vector<double> speeds_;  // last max signal speed per level
  std::vector<long> level_steps_;
  long long cell_updates_ = 0;
  int regrid_count_ = 0;
#ifdef NDEBUG
  bool verify_mesh_ = false;
#else
  bool verify_mesh_ = true;
#endif
  long long floored_ = 0;
  Timers timers_;
  double time_ = 0;
  long step_ = 0;
  bool initialized_ = false;
};

}  // namespace tessera::evolve
