// The run's reports: the set-up lines of the log, the summaries at the end of a run and
// the one-line machine summary that scripts/bench reads.
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "tessera/core/log.hpp"
#include "tessera/evolve/simulation.hpp"

namespace tessera::evolve {

void Simulation::log_gravity_setup() const {
  if (!gravity_) return;
  log_line("gravity: %s", gravity_->describe().c_str());
  if (poisson_) {
    const auto& p = gravity_->sor_params();
    log_line(
        "gravity: refined levels: red-black SOR per patch group (omega %.3f, tolerance %.1e of "
        "the source, at most %d iterations), ghost layer interpolated from the coarser level "
        "in space (quadratic) and time",
        double(p.omega), double(p.tolerance), p.max_iterations);
    if (gravity_->source_field() >= 0)
      log_line(
          "gravity: potential correction: %lld FAS V-cycles over all levels per "
          "synchronisation, %lld Gauss-Seidel iterations per group and smoothing pass",
          static_cast<long long>(params_.integer("gravity.correction_cycles")),
          static_cast<long long>(params_.integer("gravity.smoothing_iterations")));
  }
}

std::string Simulation::machine_summary(const RunSummary& run) const {
  // One key=value line for scripts (scripts/bench); times in seconds.
  const exec::DeviceTimes d = executor_->device_times();
  std::string out = strprintf(
      "summary: backend=%s precision=%s cells=%lld steps=%ld updates_per_s=%.4e "
      "pipeline_updates_per_s=%.4e loop=%.3f loop_output=%.3f",
      executor_->name(), kPrecisionName, mesh_->num_leaf_cells(), run.steps,
      run.cell_updates_per_second, run.pipeline_updates_per_second, run.loop_seconds,
      run.output_seconds);
  for (int s = 0; s < static_cast<int>(Stage::kCount); ++s)
    out += strprintf(" %s=%.3f", stage_name(Stage(s)), timers_.seconds(Stage(s)));
  out += strprintf(" other=%.3f h2d=%.3f kernel=%.3f d2h=%.3f", timers_.other(), d.h2d, d.kernel,
                   d.d2h);
  const exec::PrepareStats& ps = pipeline_->prepare_stats();
  out += strprintf(
      " prep_groups_same=%lld prep_groups_cf=%lld prep_thread_same=%.3f "
      "prep_thread_cf=%.3f regrids=%d families_added=%lld families_removed=%lld fofc=%lld "
      "floors=%lld reflux_withheld=%lld fofc_rounds=%lld fofc_solves=%lld fofc_batches=%lld "
      "fofc_seconds=%.3f",
      ps.groups[0], ps.groups[1], ps.seconds[0], ps.seconds[1], regrid_count_,
      regrid_stats_.families_added, regrid_stats_.families_removed, corrected_, floored_,
      reflux_withheld_, fofc_summed_.rounds, fofc_summed_.solves, fofc_summed_.batches,
      fofc_summed_.seconds);
  if (poisson_)
    out += strprintf(
        " sor_solves=%lld sor_groups=%lld sor_iterations=%lld sor_unconverged=%lld "
        "sor_seconds=%.3f sor_kernel=%.3f",
        sor_summed_.solves, sor_summed_.groups, sor_summed_.iterations, sor_summed_.unconverged,
        sor_summed_.seconds,
        sor_summed_.timers.seconds(Stage::kSolve) + sor_summed_.timers.seconds(Stage::kIdle));
  return out;
}

void Simulation::log_prepare_summary() const {
  const exec::PrepareStats& ps = pipeline_->prepare_stats();
  const double cells = kernels::box_cells(pipeline_->ghost());
  const char* kinds[2] = {"same-level neighbours only", "with coarse-fine faces"};
  for (int k = 0; k < 2; ++k)
    if (ps.groups[k] > 0)
      log_line(
          "  prepare, %s: %lld groups, %.1f us per group, %.2f ns per prepared cell "
          "(thread time)",
          kinds[k], ps.groups[k], 1e6 * ps.seconds[k] / ps.groups[k],
          1e9 * ps.seconds[k] / (ps.groups[k] * cells));
}

void Simulation::log_device_summary(long long updates, const RunSummary& run) const {
  const exec::DeviceTimes d = executor_->device_times();
  const double prepare = timers_.seconds(Stage::kPrepare), close = timers_.seconds(Stage::kClose);
  const double wall =
      prepare + timers_.seconds(Stage::kSolve) + timers_.seconds(Stage::kIdle) + close;
  // Without overlap the pipeline would take the sum of its parts.
  const double serial = prepare + close + d.h2d + d.kernel + d.d2h;
  const double bytes_per_update = d.bytes_h2d / std::max<long long>(updates, 1);
  const double bandwidth = executor_->pinned_h2d_bandwidth();
  const double ceiling = bandwidth / std::max(bytes_per_update, 1e-30);
  const double achieved = updates / std::max(wall, 1e-12);
  if (resident_mode_) {
    // Nothing staged: the ceiling is the GPU's, not the host link's.
    log_line(
        "device %s, data resident on the GPU: gather and scatter kernels %.3f s, solver kernels "
        "%.3f s, results back %.3f s; pipeline wall %.3f s",
        exec::cuda_device_description().c_str(), d.gather, d.kernel, d.d2h, wall);
  } else {
    log_line(
        "device %s: h2d %.3f s (%.2f GB), kernel %.3f s, d2h %.3f s (%.2f GB); pipeline wall "
        "%.3f s vs %.3f s serial: overlap %.1f%%",
        exec::cuda_device_description().c_str(), d.h2d, d.bytes_h2d / 1e9, d.kernel, d.d2h,
        d.bytes_d2h / 1e9, wall, serial, 100 * (1 - wall / std::max(serial, 1e-12)));
    log_line(
        "transfer ceiling: %.1f bytes/cell-update host-to-device, pinned bandwidth %.2f GB/s "
        "-> %.3e cell-updates/s; the pipeline achieved %.3e (%.1f%% of the ceiling)",
        bytes_per_update, bandwidth / 1e9, ceiling, achieved, 100 * achieved / ceiling);
  }
  const double loop = std::max(run.loop_seconds - run.output_seconds, 1e-12);
  // Staged, a stream's kernels rarely overlap another's, so their summed time is the time
  // the GPU computes. Resident, the streams' kernels run concurrently (their sum exceeds
  // the wall time) and the GPU computes throughout the pipeline's wall time.
  const double busy = resident_mode_ ? wall : d.kernel;
  if (resident_mode_)
    log_line(
        "  GPU busy %.1f%% of the time loop (the pipeline's %.3f s of %.3f s; kernel time "
        "summed over the concurrent streams %.3f s)",
        100 * busy / loop, wall, loop, d.kernel);
  else
    log_line("  GPU kernels busy %.1f%% of the time loop (%.3f s of %.3f s)", 100 * busy / loop,
             d.kernel, loop);
  log_line(
      "summary-device: resident=%d overlap=%.1f ceiling=%.1f bandwidth_gbs=%.2f "
      "bytes_per_update=%.1f kernel_share=%.1f gather=%.3f",
      resident_mode_ ? 1 : 0, resident_mode_ ? 0.0 : 100 * (1 - wall / std::max(serial, 1e-12)),
      resident_mode_ ? 0.0 : 100 * achieved / ceiling, bandwidth / 1e9, bytes_per_update,
      100 * busy / loop, d.gather);
}

std::string Simulation::level_summary() const {
  std::string s;
  for (int level = 0; level < mesh_->num_levels(); ++level)
    s += strprintf("%s%zu", level ? "+" : "", mesh_->groups(level).size() * mesh::kFamilySize);
  return s;
}

void Simulation::log_run_summary(const RunSummary& summary, long long updates,
                                 double pipeline_wall) {
  const auto totals1 = conserved_totals();
  // The refined levels' solves of every rank (each counts its own groups).
  sor_summed_ = sor_stats_;
  sor_summed_.groups = comm_->sum(sor_stats_.groups);
  sor_summed_.iterations = comm_->sum(sor_stats_.iterations);
  sor_summed_.unconverged = comm_->sum(sor_stats_.unconverged);
  fofc_summed_ = {fofc_cost_.rounds, comm_->sum(fofc_cost_.solves), comm_->sum(fofc_cost_.batches),
                  comm_->max(fofc_cost_.seconds)};
  log_line(
      "%s: %ld steps, t = %.9g, %.3e cell-updates/s end to end (%lld cell updates in a time "
      "loop of %.3f s, less %.3f s of plot and checkpoint output; %s backend, %d threads)",
      summary.stop == StopReason::kFinished ? "finished" : "stopped", step_, time_,
      summary.cell_updates_per_second, updates, summary.loop_seconds, summary.output_seconds,
      executor_->name(), omp_get_max_threads());
  log_line(
      "  of which: pipeline (prepare to close) %.3f s, %.3e cell-updates/s alone; flag %.3f s, "
      "regrid %.3f s, reflux %.3f s",
      pipeline_wall, summary.pipeline_updates_per_second, timers_.seconds(Stage::kFlag),
      timers_.seconds(Stage::kRegrid), timers_.seconds(Stage::kReflux));
  log_prepare_summary();
  if (poisson_ && sor_summed_.groups > 0)
    log_line(
        "  gravity: %.3f s, of which refined-level SOR %.3f s: %lld solves, %lld patch groups "
        "(%.3e groups/s), %.1f iterations per group, %lld stopped at the iteration limit; "
        "prepare %.3f s, solve %.3f s, close %.3f s",
        timers_.seconds(Stage::kGravity), sor_summed_.seconds, sor_summed_.solves,
        sor_summed_.groups, sor_summed_.groups / std::max(sor_summed_.seconds, 1e-12),
        double(sor_summed_.iterations) / sor_summed_.groups, sor_summed_.unconverged,
        sor_summed_.timers.seconds(Stage::kPrepare),
        sor_summed_.timers.seconds(Stage::kSolve) + sor_summed_.timers.seconds(Stage::kIdle),
        sor_summed_.timers.seconds(Stage::kClose));
  if (gravity_ && comm_->size() > 1) {
    // The root solves on ranks, each part the slowest rank's.
    const auto& r = gravity_->root_times();
    const double read = comm_->max(r.read), to_slabs = comm_->max(r.to_slabs),
                 fft = comm_->max(r.fft), device = comm_->max(r.fft_device),
                 to_readers = comm_->max(r.to_readers), up = comm_->max(r.up);
    // The GPU's parts only on the GPU backend.
    const bool gpu = executor_->name() != std::string("cpu");
    if (comm_->max(r.on_gpus ? 1.0 : 0.0) > 0)
      log_line(
          "  gravity: %.3f s; root solves (%d) on %d ranks, density and potential GPU to GPU: "
          "density gathered %.3f s, sent to the slabs %.3f s, FFT %.3f s (on the GPUs %.3f s), "
          "potential sent to the ranks that read it %.3f s, written into the patches %.3f s "
          "(each the slowest rank's)",
          timers_.seconds(Stage::kGravity), gravity_->solves(), comm_->size(), read, to_slabs, fft,
          device, to_readers, up);
    else
      log_line(
          "  gravity: %.3f s; root solves (%d) on %d ranks: %ssent to the %s %.3f s, FFT %.3f s%s, "
          "potential sent to the ranks that read it %.3f s%s (each the slowest rank's)",
          timers_.seconds(Stage::kGravity), gravity_->solves(), comm_->size(),
          gpu ? strprintf("density read from the GPU %.3f s, ", read).c_str() : "",
          gravity_->slabs() ? "slabs" : "ranks", to_slabs, fft,
          gpu ? strprintf(" (on the GPUs %.3f s)", device).c_str() : "", to_readers,
          gpu ? strprintf(", up to the GPU %.3f s", up).c_str() : "");
  }
  if (refinement_.max_level > 0)
    log_line(
        "regrids: %d changed the mesh (%lld with their data made on the GPU); families added "
        "%lld, removed %lld, moved %lld",
        regrid_count_, regrid_stats_.device_regrids, regrid_stats_.families_added,
        regrid_stats_.families_removed, regrid_stats_.families_moved);
  if (comm_->size() > 1 && comm_->max(double(regrid_stats_.device_regrids)) > 0)
    log_line(
        "  of the regrid time on the GPUs: families sent and prolonged %.3f s, device tables "
        "made again %.3f s, halos made again %.3f s (each the slowest rank's)",
        comm_->max(regrid_stats_.device_data_seconds),
        comm_->max(regrid_stats_.device_tables_seconds),
        comm_->max(regrid_stats_.device_halo_seconds));
  std::string machine_ranks =
      strprintf(" ranks=%d device_setup=%.3f", comm_->size(), comm_->max(device_setup_seconds_));
  if (comm_->size() > 1) {
    // The balance of the ranks: a rank's exchange stage includes its wait for the slowest
    // rank before each exchange, so the spread of the time outside it is the imbalance.
    const double exchange = timers_.seconds(Stage::kExchange);
    const double outside = summary.loop_seconds - summary.output_seconds - exchange;
    const double lo = comm_->min(outside), hi = comm_->max(outside);
    const double xmax = comm_->max(exchange);
    log_line(
        "  ranks: time loop outside the exchanges %.3f s to %.3f s (the slowest rank %.1f%% "
        "above the fastest); in the exchanges %.3f s to %.3f s",
        lo, hi, lo > 0 ? 100.0 * (hi / lo - 1.0) : 0.0, comm_->min(exchange), xmax);
    const double host_bytes = double(comm_->sum(static_cast<long long>(buffer_bytes_)));
    machine_ranks += strprintf(" imbalance=%.4f exchange_max=%.3f exchange_gb=%.4f",
                               lo > 0 ? hi / lo - 1.0 : 0.0, xmax, host_bytes / 1e9);
    if (host_bytes > 0)
      log_line("  ranks: buffer patches exchanged through the host %.3f GB (all ranks)",
               host_bytes / 1e9);
    if (resident_mode_) {
      // Summed over the ranks (whole bytes: exact in any order).
      std::array<double, 4> b = halo_bytes_;
      for (const auto& halo : halos_)
        if (halo) {
          const std::vector<double> now = halo->bytes_sent();
          for (std::size_t r = 0; r < b.size() && r < now.size(); ++r) b[r] += now[r];
        }
      double sent[4];
      for (int r = 0; r < 4; ++r) sent[r] = double(comm_->sum(static_cast<long long>(b[r])));
      const double hidden = comm_->max(halo_times_.hidden),
                   exposed = comm_->max(halo_times_.exposed);
      log_line(
          "  ranks: device halo %.3f GB sent GPU to GPU, %.3f GB by CUDA-aware MPI, %.3f GB "
          "through the host; in flight behind the interior groups %.3f s, in start and finish "
          "%.3f s (the most of any rank): %.1f%% hidden",
          sent[int(exec::HaloRoute::kPeer)] / 1e9, sent[int(exec::HaloRoute::kMpi)] / 1e9,
          sent[int(exec::HaloRoute::kHost)] / 1e9, hidden, exposed,
          hidden + exposed > 0 ? 100.0 * hidden / (hidden + exposed) : 0.0);
      machine_ranks += strprintf(" halo_gb=%.4f halo_hidden=%.3f halo_exposed=%.3f",
                                 (sent[1] + sent[2] + sent[3]) / 1e9, hidden, exposed);
    }
    const long long interior = comm_->sum(overlap_groups_[0]), all = comm_->sum(overlap_groups_[1]);
    if (all > 0)
      log_line(
          "  ranks: %.1f%% of the hydro pass's patch groups were stepped while their level's "
          "messages travelled (their ghost zones read no other rank's patch)",
          100.0 * double(interior) / double(all));
  }
  if (refinement_.max_level > 0 && comm_->size() > 1)
    log_line(
        "  ranks: levels cut again %lld times (mpi.imbalance_tolerance = %g); %lld families "
        "changed rank",
        regrid_stats_.rebalances, params_.real("mpi.imbalance_tolerance"),
        regrid_stats_.families_migrated);
  std::string per_level;
  for (std::size_t l = 0; l < level_steps_.size(); ++l)
    per_level += strprintf("%s%ld", l ? "/" : "", level_steps_[l]);
  log_line("steps per level: %s; patches per level: %s", per_level.c_str(),
           level_summary().c_str());
  // Every run says how many cells needed repair (counted from t = 0, across restarts).
  log_line("repaired cells: %lld recomputed by first-order flux correction (fofc), %lld floored",
           corrected_, floored_);
  // What the correction cost this run: deep adaptive runs can spend much of their time in it.
  if (fofc_summed_.rounds > 0)
    log_line(
        "  fofc in this run: rounds %lld, group solves %lld, batches %lld, %.3f s "
        "(%.1f%% of the time loop, within prepare, solve and close)",
        fofc_summed_.rounds, fofc_summed_.solves, fofc_summed_.batches, fofc_summed_.seconds,
        summary.loop_seconds > 0 ? 100.0 * fofc_summed_.seconds / summary.loop_seconds : 0.0);
  // Only where it happened: each withheld correction costs conservation.
  if (reflux_withheld_ > 0)
    log_line(
        "refluxing: %lld corrections withheld, which would have left a cell unphysical (the "
        "conserved totals change by them)",
        reflux_withheld_);
  if (executor_->name() != std::string("cpu")) log_device_summary(updates, summary);
  log_total_changes(totals1);
  if (const auto err = density_l1_error())
    log_line("L1 density error vs analytic solution: %.6e", *err);
  log_line("timing breakdown:\n%s", timers_.breakdown().c_str());
  log_line("%s%s", machine_summary(summary).c_str(), machine_ranks.c_str());
}

}  // namespace tessera::evolve
