// Simulation's checkpoints: writing them (and keeping checkpoint_keep), restarting from
// one, removing temporaries an interrupted write left behind, and the diagnostic plot
// file of a numerical failure. The time loop that calls these is in simulation.cpp.
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/version.hpp"
#include "tessera/evolve/schema.hpp"
#include "tessera/evolve/simulation.hpp"
#include "tessera/io/output_dir.hpp"
#include "tessera/io/plot_output.hpp"
#include "tessera/mesh/geometry.hpp"
#include "tessera/parallel/mpi.hpp"

namespace tessera::evolve {

void Simulation::restart(const io::CheckpointReader& checkpoint) {
  ScopedTimer t(timers_, Stage::kInit);
  const auto t0 = std::chrono::steady_clock::now();
  // Every rank reads the checkpoint's structure, then the data of the families it holds
  // (every byte is read and checked, a slab at a time): a damaged file stops all of them
  // with one error.
  io::CheckpointState st;
  std::unique_ptr<mesh::Mesh> m;
  const bool ranks = comm_->size() > 1;
  parallel::agreed(*comm_, [&] {
    const std::lock_guard<std::mutex> lock(io::hdf5_mutex());
    st = checkpoint.state();
    m = checkpoint.read_mesh(mesh::geometry_from_params(params_), fields_, !ranks);
    if (verify_mesh_) m->check_invariants();
  });
  free_device();  // before the old mesh's pool goes (it may be page-locked)
  mesh_ = std::move(m);
  install_problem_boundary(*mesh_);
  if (ranks) {
    hold_new_store();
    parallel::agreed(*comm_, [&] {
      const std::lock_guard<std::mutex> lock(io::hdf5_mutex());
      checkpoint.read_data(*mesh_);
    });
  } else {
    repartition();
  }
  registers_.build(*mesh_, partition_, comm_->rank());  // empty: checkpoints fall between steps
  speeds_ = st.level_max_speed;
  level_steps_.assign(st.level_steps.begin(), st.level_steps.end());
  while (static_cast<int>(level_steps_.size()) > mesh_->num_levels() && level_steps_.back() == 0)
    level_steps_.pop_back();
  time_ = st.time;
  step_ = static_cast<long>(st.step);
  plot_index_ = static_cast<int>(st.plot_index);
  next_plot_ = st.next_plot_time;
  last_plot_step_ = static_cast<long>(st.last_plot_step);
  next_checkpoint_ = st.next_checkpoint_time;
  cell_updates_ = st.cell_updates;
  regrid_count_ = static_cast<int>(st.regrid_count);
  floored_ = st.floored;
  corrected_ = st.corrected;
  reflux_withheld_ = st.reflux_withheld;
  if (static_cast<int>(st.initial_totals.size()) != mesh_->nvar())
    throw Error(ErrorKind::kIo,
                strprintf("cannot read checkpoint '%s': it holds %zu initial totals for %d fields",
                          checkpoint.path().c_str(), st.initial_totals.size(), mesh_->nvar()));
  totals0_ = st.initial_totals;
  run_id_ = checkpoint.header().run_id;
  last_checkpoint_step_ = step_;
  // The root kicks need the potential's ghost layer, which the checkpoint does not hold:
  // solved again from the density (and the potential correction's source, a checkpointed
  // field), which gives the checkpoint's phi bit for bit (the FFT solve is deterministic
  // for a given grid and thread count, and a step with refined levels ends with this same
  // solve). The refined levels' potentials are the checkpoint's: the correction cycle is
  // not run again (its SOR solves would start from other first guesses).
  if (gravity_) {
    ScopedTimer t(timers_, Stage::kGravity);
    gravity_->solve(*mesh_);
  }
  log_gravity_setup();

  // A changed output cadence restarts its schedule from the current time; an unchanged one
  // continues exactly where the interrupted run was.
  const Params stored =
      load_params_from_string(checkpoint.header().parameters,
                              "checkpoint '" + checkpoint.path() + "'", {}, parameter_schema());
  const double inf = std::numeric_limits<double>::infinity();
  const double out_dt = params_.real("output.dt");
  if (out_dt != stored.real("output.dt") ||
      params_.boolean("output.enabled") != stored.boolean("output.enabled"))
    next_plot_ = out_dt > 0 && params_.boolean("output.enabled")
                     ? (std::floor(time_ / out_dt) + 1) * out_dt
                     : inf;
  const double ck_dt = params_.real("output.checkpoint_dt");
  if (ck_dt != stored.real("output.checkpoint_dt"))
    next_checkpoint_ = ck_dt > 0 ? (std::floor(time_ / ck_dt) + 1) * ck_dt : inf;

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double mb = checkpoint_bytes() / 1e6;
  log_line(
      "restarted from %s: step %ld, t = %.9g (written by Tessera %s); read %.1f MB in %.2f s "
      "(%.0f MB/s)",
      checkpoint.path().c_str(), step_, time_, checkpoint.header().code_version.c_str(), mb,
      seconds, mb / std::max(seconds, 1e-9));
  initialized_ = true;
  restarted_ = true;
}

std::size_t Simulation::checkpoint_bytes() const {
  return mesh_->num_patches() * mesh_->patch_reals() * sizeof(Real);
}

std::string Simulation::write_checkpoint() {
  ScopedTimer t(timers_, Stage::kOutput);
  guard_output_dir();
  const std::string dir = params_.string("output.dir");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(ErrorKind::kIo, "output.dir '" + dir + "': cannot create: " + ec.message());
  const std::string path = io::checkpoint_file_name(dir, problem_name_, step_);
  io::CheckpointHeader header;
  header.code_version = version_string();
  header.problem = problem_name_;
  header.run_id = run_id_;
  header.parameters = params_.to_toml();
  io::CheckpointState st;
  st.time = time_;
  st.step = step_;
  st.level_steps.assign(level_steps_.begin(), level_steps_.end());
  st.level_steps.resize(mesh::kMaxLevels, 0);
  st.level_max_speed.assign(speeds_.begin(), speeds_.begin() + mesh_->num_levels());
  st.plot_index = plot_index_;
  st.next_plot_time = next_plot_;
  st.last_plot_step = last_plot_step_;
  st.next_checkpoint_time = next_checkpoint_;
  st.cell_updates = cell_updates_;
  st.regrid_count = regrid_count_;
  st.floored = floored_;
  st.corrected = corrected_;
  st.reflux_withheld = reflux_withheld_;
  st.initial_totals = totals0_;
  // The file holds each level as one slab in canonical order, the order a mesh rebuilt
  // from the stored octree has. Flux registers are empty here but name patches by slot.
  // Every rank reorders its pool the same way (the partition follows the slots).
  sync_host();
  if (!mesh_->is_canonical()) {
    // Reorders the patches of both time levels: the device copy is rebuilt from the host.
    if (device_current_)
      for (int slot = 0; slot < 2; ++slot)
        if (mesh_->host_stale(slot)) resident_->download(*mesh_, slot);
    free_device();
    mesh_->canonicalize();
    repartition(true, true);  // the same families: the same cuts, nothing moves
    registers_.build(*mesh_, partition_, comm_->rank());
  }
  // Several ranks: all write their own patches into the file together, or rank 0 writes
  // what every rank gathered to it; all of them stop with the error if the write fails.
  if (const auto c = collective_output())
    write_checkpoint_file(path, header, st, &*c);
  else
    run_on_root([&] { write_checkpoint_file(path, header, st); });
  last_checkpoint_step_ = step_;
  if (comm_->rank() == 0) prune_checkpoints(path);
  return path;
}

void Simulation::write_checkpoint_file(const std::string& path, const io::CheckpointHeader& header,
                                       const io::CheckpointState& st, const io::Collective* c) {
  const auto t0 = std::chrono::steady_clock::now();
  io::write_checkpoint(path, *mesh_, header, st, c);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::error_code ec;
  const double bytes = static_cast<double>(std::filesystem::file_size(path, ec));
  checkpoint_rate_ = bytes / std::max(seconds, 1e-9);
  const std::string ranks =
      c != nullptr ? strprintf(", %d ranks together", comm_->size()) : std::string();
  log_line("wrote checkpoint %s (%.1f MB in %.2f s, %.0f MB/s%s)", path.c_str(), bytes / 1e6,
           seconds, bytes / 1e6 / std::max(seconds, 1e-9), ranks.c_str());
}

void Simulation::prune_checkpoints(const std::string& newest) const {
  // Only checkpoints older than the one just written go, and only those of this run family
  // (same RunId): files of a later step (from an abandoned continuation), of another run,
  // or that cannot be read are left for the user to judge.
  const auto all = io::list_checkpoints(params_.string("output.dir"), problem_name_);
  const auto it = std::find(all.begin(), all.end(), newest);
  if (it == all.end()) return;
  std::vector<std::string> own;
  for (auto f = all.begin(); f != it; ++f)
    if (io::checkpoint_run_id(*f) == run_id_) own.push_back(*f);
  const long keep = static_cast<long>(params_.integer("output.checkpoint_keep"));
  const long older = static_cast<long>(own.size());
  for (long i = 0; i < older - (keep - 1); ++i) {
    std::error_code ec;
    if (std::filesystem::remove(own[i], ec)) log_line("removed old checkpoint %s", own[i].c_str());
  }
}

void Simulation::remove_stale_temporaries() const {
  // A killed write leaves "<checkpoint or plot file>.tmp.<pid>" behind; it is never read,
  // and is removed here unless the process that owns it still runs.
  namespace fs = std::filesystem;
  const std::string prefix = problem_name_ + ".";
  std::error_code ec;
  for (fs::directory_iterator it(params_.string("output.dir"), ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const std::size_t tmp = name.rfind(".tmp.");
    if (name.compare(0, prefix.size(), prefix) != 0 || tmp == std::string::npos) continue;
    const std::string digits = name.substr(tmp + 5);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const long pid = std::strtol(digits.c_str(), nullptr, 10);
    if (pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM)) continue;
    std::error_code rm;
    if (fs::remove(it->path(), rm))
      log_line("removed %s, left by an interrupted write", it->path().c_str());
  }
}

void Simulation::write_failure_plot(const Error& failure) {
  // Best effort: the original error is what matters, a second one is only logged.
  // Several ranks gather their patches on rank 0, a collective: only when the error was
  // agreed through MPI (every rank is here; the failed pass wrote only the next time
  // level, so each rank's current one is the state at the start of the step, as on one
  // rank). Virtual ranks (threads) write none.
  if (comm_->size() > 1 && parallel::agreed_error_rank(failure) < 0) return;
  try {
    const std::string path = write_plot_on_root([&](const std::string& dir) {
      return strprintf("%s/%s.failure.%08ld.athdf", dir.c_str(), problem_name_.c_str(), step_ + 1);
    });
    log_line(
        "wrote diagnostic plot file %s: the state at the start of the failed step (the last "
        "checkpoint is untouched)",
        path.c_str());
  } catch (const std::exception& e) {
    log_line("could not write the diagnostic plot file: %s", e.what());
  }
}

}  // namespace tessera::evolve
