// Simulation::run: the time loop (steps, regrids, the gravity solves at synchronisation,
// outputs, checkpoints, log lines, wall-time and signal stops) and its closing summary.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/parallel.hpp"
#include "tessera/evolve/schema.hpp"
#include "tessera/evolve/simulation.hpp"

namespace tessera::evolve {

namespace {

// A duration for the log's estimate: "42s", "3m12s", "1h02m", "2d03h".
std::string format_duration(double seconds) {
  const long long s = std::llround(std::max(0.0, std::min(seconds, 1e12)));
  if (s < 60) return strprintf("%llds", s);
  if (s < 3600) return strprintf("%lldm%02llds", s / 60, s % 60);
  if (s < 86400) return strprintf("%lldh%02lldm", s / 3600, (s % 3600) / 60);
  return strprintf("%lldd%02lldh", s / 86400, (s % 86400) / 3600);
}

}  // namespace

RunSummary Simulation::run(const RunControl& control) {
  if (!initialized_) initialize();
  check_output_dir_ = control.check_output_dir;
  const double t_end = params_.real("run.t_end");
  const long max_steps = static_cast<long>(params_.integer("run.max_steps"));
  const long log_every = static_cast<long>(params_.integer("run.log_interval"));
  const double log_seconds = params_.real("run.log_seconds");
  bool logged_step = false;
  const long regrid_every = static_cast<long>(params_.integer("amr.regrid_interval"));
  const double out_dt = params_.real("output.dt");
  const double ck_dt = params_.real("output.checkpoint_dt");
  const long ck_every = static_cast<long>(params_.integer("output.checkpoint_interval"));
  const bool checkpointing = ck_dt > 0 || ck_every > 0;
  const double wall_limit = parse_wall_time(params_.string("run.wall_time")).value_or(0);
  const double inf = std::numeric_limits<double>::infinity();
  log_line("patches per level: %s (%lld leaf cells)", level_summary().c_str(),
           mesh_->num_leaf_cells());
  parallel::forward_rank_messages(*comm_);  // the set-up's, from every rank

  if (comm_->rank() == 0) remove_stale_temporaries();
  if (resident_mode_) {
    // The first copy to the GPU belongs to the set-up, like the initial conditions.
    ScopedTimer t(timers_, Stage::kInit);
    ensure_device();
  }
  const bool history = params_.boolean("output.enabled") && params_.boolean("output.history");
  const long history_every = static_cast<long>(params_.integer("output.history_interval"));
  const double history_dt = params_.real("output.history_dt");
  if (history && !history_opened_) {
    history_opened_ = true;
    parallel::agreed(*comm_, [&] {
      if (comm_->rank() == 0)
        history_ = std::make_unique<io::HistoryFile>(
            io::history_file_name(params_.string("output.dir"), problem_name_), history_columns(),
            run_id_, problem_name_, restarted_ ? step_ : -1);
    });
    if (!restarted_) write_history_row(0.0);
  }
  next_history_ = history_dt > 0 ? (std::floor(time_ / history_dt) + 1) * history_dt : inf;
  RunSummary summary;
  if (!restarted_) {
    totals0_ = conserved_totals();
    write_plot(plot_index_++);
    last_plot_step_ = step_;
    next_plot_ = out_dt > 0 && params_.boolean("output.enabled") ? out_dt : inf;
    next_checkpoint_ = ck_dt > 0 ? ck_dt : inf;
  }
  watch_totals();
  const double wall0 = timers_.total();
  const double output0 = timers_.seconds(Stage::kOutput);
  const long long updates0 = cell_updates_;
  // The log line's rate covers the steps since the previous log line, end to end: all of
  // the loop's wall time except plot and checkpoint writing.
  double log_wall = wall0, log_output = output0, totals_wall = wall0;
  long long log_updates = updates0;
  // The repairs since the previous step line: with lines by wall time, the steps between
  // two lines are counted too, so no floored cell goes unreported until the run's end.
  long long log_floored = floored_, log_corrected = corrected_, log_withheld = reflux_withheld_;
  const double time0 = time_;
  const long step0 = step_;
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - control.start).count();
  };
  double slowest_step = 0;  // over the last steps, for the wall-time budget
  double last_dt = 0;       // of the last step taken

  try {
    while (time_ < t_end && step_ < max_steps) {
      if (wall_limit > 0) {
        // Stop while a step and a checkpoint still fit: the next step is assumed as slow as
        // the slowest recent one, and the checkpoint as slow as the last (or 100 MB/s).
        const double rate = checkpoint_rate_ > 0 ? checkpoint_rate_ : 100e6;
        const double need = 1.25 * slowest_step + 1.5 * checkpoint_bytes() / rate + 1.0;
        if (agree(elapsed() + need > wall_limit)) {
          summary.stop = StopReason::kWallTime;
          log_line(
              "stopping before the wall-time limit %s: %.1f s elapsed, a step and a "
              "checkpoint need about %.1f s",
              params_.string("run.wall_time").c_str(), elapsed(), need);
          break;
        }
      }
      int limiting = 0;
      double dt = root_dt(&limiting);
      watch_.time_step(step_ + 1, dt, limiting);
      // GLM-MHD: ch is the largest fast speed of the step (the speed the time step comes
      // from), so that the psi waves are as fast as stability allows on every level.
      if (model_.has_magnetic_field())
        hydro_->set_glm(*std::max_element(speeds_.begin(), speeds_.end()), model_.glm_alpha());
      const double target = std::min(t_end, next_plot_);
      const bool hits_target = time_ + dt >= target;
      if (hits_target) dt = target - time_;
      const double w0 = timers_.total();
      advance(0, time_, dt, 1.0, 1.0);
      last_dt = dt;
      time_ = hits_target ? target : time_ + dt;
      ++step_;
      const bool regridded = refinement_.max_level > 0 && step_ % regrid_every == 0 && regrid();
      if (gravity_ && mesh_->num_levels() > 1) {
        // Refluxing and restriction changed the coarse levels' density after their solves:
        // the root potential is solved again (a restart solves the same), and after a regrid
        // every refined level's, for the new patches (their prolonged potential is a guess).
        solve_gravity(regridded);
        // Each rank counts its own groups' solves.
        const long long unconverged = comm_->sum(sor_stats_.unconverged);
        if (unconverged > sor_unconverged_logged_) {
          log_line(
              "warning: step %ld: %lld patch-group SOR solves stopped at "
              "gravity.sor_max_iterations = %lld before reaching gravity.sor_tolerance",
              step_, unconverged - sor_unconverged_logged_,
              static_cast<long long>(params_.integer("gravity.sor_max_iterations")));
          sor_unconverged_logged_ = unconverged;
        }
      }
      const double w1 = timers_.total();
      slowest_step = std::max(0.9 * slowest_step, w1 - w0);
      const bool finishing = time_ >= t_end || step_ >= max_steps;
      // Step lines every log_every steps, or by wall time (log_seconds) when that is 0, the
      // first and the last step always; totals with each of them when the interval is in
      // steps, else about every minute (six step lines).
      // Decisions from wall-clock times are agreed between the ranks: the totals line is a
      // collective.
      bool totals_logged = false;
      const bool due = log_every > 0 ? step_ % log_every == 0
                                     : agree(!logged_step || w1 - log_wall >= log_seconds);
      if (due || finishing) {
        const double out = timers_.seconds(Stage::kOutput);
        const double busy = (w1 - log_wall) - (out - log_output);
        std::string repairs;
        if (corrected_ > log_corrected)
          repairs += strprintf("  fofc %lld", corrected_ - log_corrected);
        if (floored_ > log_floored) repairs += strprintf("  floors %lld", floored_ - log_floored);
        if (reflux_withheld_ > log_withheld)
          repairs += strprintf("  reflux withheld %lld", reflux_withheld_ - log_withheld);
        log_corrected = corrected_, log_floored = floored_, log_withheld = reflux_withheld_;
        // The time left, at the pace of the loop so far (outputs included): to t_end, or to
        // max_steps if the run reaches that first.
        std::string eta;
        if (!finishing) {
          const double spent = w1 - wall0;
          double left = std::numeric_limits<double>::infinity();
          if (time_ > time0) left = spent * (t_end - time_) / (time_ - time0);
          if (step_ > step0)
            left = std::min(left, spent * double(max_steps - step_) / double(step_ - step0));
          if (std::isfinite(left)) eta = "  eta " + format_duration(left);
        }
        log_line(
            "step %7ld  t %.6e / %.4g (%.1f%%)  dt %.4e  cells %lld  %.3e cell-updates/s  "
            "patches %s%s%s",
            step_, time_, t_end, 100 * time_ / t_end, dt, mesh_->num_leaf_cells(),
            (cell_updates_ - log_updates) / std::max(busy, 1e-12), level_summary().c_str(),
            repairs.c_str(), eta.c_str());
        log_updates = cell_updates_;
        if (log_every > 0 || finishing || !logged_step ||
            agree(w1 - totals_wall >= 6 * log_seconds)) {
          log_totals_line();
          totals_wall = w1;
          totals_logged = true;
        }
        logged_step = true;
        log_wall = w1;
        log_output = out;
        parallel::forward_rank_messages(*comm_);
      }
      // History rows: by steps, by simulated time, or with the totals lines; the last step's
      // always.
      if (history && (finishing || (history_every > 0 && step_ % history_every == 0) ||
                      (history_dt > 0 && time_ >= next_history_) ||
                      (history_every == 0 && history_dt == 0 && totals_logged)))
        write_history_row(dt);
      while (history_dt > 0 && next_history_ <= time_) next_history_ += history_dt;
      if (time_ >= next_plot_ || (finishing && last_plot_step_ != step_)) {
        write_plot(plot_index_++);
        last_plot_step_ = step_;
        while (next_plot_ <= time_) next_plot_ += out_dt;
      }
      // Checkpoints never shorten a step, so they leave the solution unchanged.
      const bool due_time = time_ >= next_checkpoint_;
      while (next_checkpoint_ <= time_) next_checkpoint_ += ck_dt;
      if (due_time || (ck_every > 0 && step_ % ck_every == 0) || (finishing && checkpointing))
        summary.checkpoint = write_checkpoint();
      // A signal during the last step changes nothing: the run has finished.
      if (!finishing) {
        const int local = control.stop_signal ? control.stop_signal() : 0;
        if (const int sig = comm_->size() == 1 ? local : static_cast<int>(comm_->max(local))) {
          summary.stop = StopReason::kSignal;
          log_line("received signal %d (%s): stopping after step %ld", sig, strsignal(sig), step_);
          break;
        }
      }
    }
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kNumerical) write_failure_plot(e);
    throw;
  }
  // A run stopped early (wall time, signal) records its last step as a finished one does.
  if (history && summary.stop != StopReason::kFinished && last_history_step_ != step_)
    write_history_row(last_dt);
  summary.loop_seconds = timers_.total() - wall0;
  summary.output_seconds = timers_.seconds(Stage::kOutput) - output0;
  if (summary.stop != StopReason::kFinished) {
    if (last_checkpoint_step_ != step_) summary.checkpoint = write_checkpoint();
    if (summary.checkpoint.empty())
      summary.checkpoint =
          io::checkpoint_file_name(params_.string("output.dir"), problem_name_, step_);
    log_line(
        "checkpoint %s holds step %ld, t = %.9g; continue with: tessera run <file> "
        "--restart latest",
        summary.checkpoint.c_str(), step_, time_);
  } else if (last_plot_step_ != step_) {
    write_plot(plot_index_++);
    last_plot_step_ = step_;
  }

  summary.steps = step_;
  summary.time = time_;
  summary.wall_seconds = timers_.total() - wall0;
  const long long updates = cell_updates_ - updates0;
  const double pipeline_wall = timers_.seconds(Stage::kPrepare) + timers_.seconds(Stage::kSolve) +
                               timers_.seconds(Stage::kIdle) + timers_.seconds(Stage::kClose);
  summary.cell_updates_per_second =
      updates / std::max(summary.loop_seconds - summary.output_seconds, 1e-12);
  summary.pipeline_updates_per_second = updates / std::max(pipeline_wall, 1e-12);
  summary.plot_files = params_.boolean("output.enabled") ? plot_index_ : 0;

  log_run_summary(summary, updates, pipeline_wall);
  if (params_.boolean("output.enabled") && params_.boolean("output.history"))
    parallel::agreed(*comm_, [&] {
      if (comm_->rank() == 0) write_summary_json(summary);
    });
  return summary;
}

}  // namespace tessera::evolve
