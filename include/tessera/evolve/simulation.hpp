// A whole run: parameters -> mesh + problem -> time loop with outputs and log.
#pragma once

#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/params.hpp"
#include "tessera/core/timers.hpp"
#include "tessera/evolve/diagnostics.hpp"
#include "tessera/evolve/gravity_pass.hpp"
#include "tessera/evolve/hydro_pass.hpp"
#include "tessera/evolve/memory.hpp"
#include "tessera/evolve/refinement.hpp"
#include "tessera/evolve/run_watch.hpp"
#include "tessera/exec/executor.hpp"
#include "tessera/exec/flux_register.hpp"
#include "tessera/exec/pipeline.hpp"
#include "tessera/io/checkpoint.hpp"
#include "tessera/io/history.hpp"
#include "tessera/io/plot_output.hpp"
#include "tessera/mesh/mesh.hpp"
#include "tessera/parallel/comm.hpp"
#include "tessera/parallel/partition.hpp"
#include "tessera/physics/model.hpp"
#include "tessera/problem/problem.hpp"

namespace tessera::evolve {

// Why run() returned. Exit codes of `tessera run` (docs/user_guide.md, "Exit codes").
enum class StopReason {
  kFinished = 0,   // t_end or max_steps reached
  kWallTime = 10,  // run.wall_time would have been exceeded: checkpoint written
  kSignal = 11,    // SIGTERM, SIGUSR1 or a first SIGINT: checkpoint written
};

// What the job around a run provides: when it started (run.wall_time counts from there)
// and a poll for a stop request (a caught signal's number, or 0).
struct RunControl {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::function<int()> stop_signal;
  // Called on rank 0 before each plot file and checkpoint (io::OutputDirLock::check);
  // its error is agreed by every rank.
  std::function<void()> check_output_dir;
};

struct RunSummary {
  StopReason stop = StopReason::kFinished;
  std::string checkpoint;  // the last checkpoint written ("" when none)
  long steps = 0;
  double time = 0;
  double wall_seconds = 0;
  // End to end: cell updates over the wall time of the time loop (flag, regrid, reflux,
  // time step and log included), less the plot-file and checkpoint writing in it.
  double cell_updates_per_second = 0;
  double loop_seconds = 0;    // the time loop, output included
  double output_seconds = 0;  // plot files and checkpoints written inside the loop
  // The prepare-solve-close pipeline alone (a sub-stage rate, never the headline).
  double pipeline_updates_per_second = 0;
  int plot_files = 0;
};

// The fields of a run of `params`, as its mesh, checkpoints and plot files hold them: the
// one place where a run's field registry is made.
mesh::FieldRegistry run_fields(const Params& params);

class Simulation {
 public:
  // `comm`: the ranks of the run (docs/architecture.md, "Ranks"). Every rank holds the
  // whole mesh structure and steps the groups of its partition, after receiving the buffer
  // patches its groups read; the reductions of the time step and the diagnostics go
  // through comm, and rank 0 writes the outputs and the log. More than one rank runs
  // runs without self-gravity, adaptive ones included (run() refuses the others).
  explicit Simulation(Params params, parallel::Comm& comm = parallel::serial_comm());
  ~Simulation();

  // Sets the initial conditions (called by run() when not done yet).
  void initialize();
  // Continues from a checkpoint instead: mesh, data and loop state. The parameters given
  // to the constructor must be restart_params() of it.
  void restart(const io::CheckpointReader& checkpoint);
  // Steps to run.t_end (or run.max_steps), writing plot files, checkpoints and the log;
  // returns early, after writing a checkpoint, on a stop request or at the wall-time limit.
  // On a numerical failure it writes a diagnostic plot file and rethrows.
  RunSummary run(const RunControl& control = {});
  // Writes a checkpoint of the current state now; returns its path.
  std::string write_checkpoint();

  const Params& params() const { return params_; }
  const physics::Model& model() const { return model_; }
  // The run family's identity (io::new_run_id for a fresh run, the checkpoint's on restart),
  // stored in every checkpoint; old checkpoints are pruned only within the family.
  const std::string& run_id() const { return run_id_; }
  // The mesh, its host copy up to date (copied back from the GPU first when the run keeps
  // its data there).
  const mesh::Mesh& mesh() const {
    sync_host();
    return *mesh_;
  }
  // Which rank owns each patch group (rebuilt with the mesh and at every regrid).
  const parallel::Partition& partition() const { return partition_; }
  // Self-gravity's state (null without gravity.enabled).
  const gravity::SelfGravity* gravity() const { return gravity_.get(); }
  parallel::Comm& comm() const { return *comm_; }
  // Whether the patch data stay on the GPU between steps (gpu.resident).
  bool device_resident() const { return resident_mode_; }
  // How many ranks of the run share this rank's GPU, itself included (GPU runs).
  int gpu_sharers() const { return gpu_sharers_; }
  const Problem& problem() const { return *problem_; }
  double time() const { return time_; }
  long step() const { return step_; }
  // Cells whose state the floors changed, over the run's steps (the step lines' "floors").
  long long floored() const { return floored_; }
  long long corrected() const { return corrected_; }
  long long reflux_withheld() const { return reflux_withheld_; }
  // Steps taken by each level so far.
  const std::vector<long>& level_steps() const { return level_steps_; }
  // Cell updates done so far (all patches of every level, each of its steps).
  long long cell_updates() const { return cell_updates_; }
  // Replaces the hierarchy by what the refinement criteria ask for now (done by run()
  // every amr.regrid_interval root steps); returns whether it changed.
  bool regrid();
  // Regrids that changed the hierarchy so far.
  int regrid_count() const { return regrid_count_; }
  // Families added, removed and moved (to fill holes) by all regrids so far.
  struct RegridStats {
    long long families_added = 0, families_removed = 0, families_moved = 0;
    // Several ranks: levels cut again at regrids (mpi.imbalance_tolerance), and families
    // that stayed but changed rank.
    long long rebalances = 0, families_migrated = 0;
    // Regrids of device-resident levels whose moves and new families were made on the GPU.
    long long device_regrids = 0;
    // Several ranks, those regrids' parts (this rank's seconds): the families sent between
    // the GPUs and the new ones prolonged, the device tables and registers made again, and
    // the halos made again (a collective; CUDA IPC handles opened within a host).
    double device_data_seconds = 0, device_tables_seconds = 0, device_halo_seconds = 0;
  };
  const RegridStats& regrid_stats() const { return regrid_stats_; }
  // Several ranks, adaptive self-gravity: the finer groups' potential-correction terms this
  // rank sent to the ranks that assemble a coarser level's source, from the host and from
  // the GPU (a group counted once per rank it went to).
  struct TermsSent {
    long long host = 0, device = 0;
  };
  TermsSent correction_terms_sent() const;
  // Checks the mesh invariants and restriction after every regrid (tests; always on in
  // debug builds). Throws tessera::Error(kInternal) on a violation.
  void set_verify_mesh(bool verify) { verify_mesh_ = verify; }
  // Several ranks (tests): before each exchange of a level's buffer patches, and at a
  // regrid before families move, the copies of other ranks' patches that this rank holds
  // are filled with NaN, so that data no exchange delivered cannot pass for current.
  void set_poison_foreign_patches(bool poison) { poison_foreign_ = poison; }
  // Device-resident adaptive runs (tests): without spare room in the pool, so that every
  // regrid that adds families makes the device copy larger (DeviceMesh::grow).
  void set_device_pool_room(bool spare) { device_pool_room_ = spare; }
  // The fields of the run (mesh::Mesh holds them in this order).
  const mesh::FieldRegistry& fields() const { return fields_; }
  // Volume integrals of the conserved variables over the domain, one per field in pool
  // order (for hydrodynamics: dens, mom x/y/z, engy, then the scalars' densities).
  std::vector<double> conserved_totals() const;
  // conserved_totals() at t = 0 (of the run that started from the initial conditions).
  const std::vector<double>& initial_totals() const { return totals0_; }
  // L1 norm (volume average) of density minus the problem's analytic solution.
  std::optional<double> density_l1_error() const;
  // GLM-MHD: div B's statistics over the leaf cells of every rank (the log's "divB:" line;
  // several ranks refresh their buffer patches first, which a face stencil reads).
  DivergenceStats divergence() const;
  // Self-gravity: the potential energy (1/2) int rho phi dV of the current state (the log's
  // "gravity:" line); nullopt without gravity.
  std::optional<double> potential_energy() const;

 private:
  // The root level's time step; `level`: the level that set it.
  double root_dt(int* level = nullptr) const;
  // What RunWatch checks of the totals line (after totals0_ is known).
  void watch_totals();
  double patch_max_speed(int patch) const;
  // The level's largest signal speed (over this rank's groups, then every rank's);
  // interfaces: also the Riemann problems between neighbouring cells
  // (physics::Model::interface_signal_speed), for the first step from initial conditions.
  double level_max_speed(int level, bool interfaces = false) const;
  double patch_interface_speed(int patch) const;
  void verify_mesh(const char* when) const;
  void fill_from_problem(mesh::Mesh& m) const;
  // Gives the mesh the problem's boundary states when a side is problem-defined.
  void install_problem_boundary(mesh::Mesh& m) const;
  void adopt_mesh(std::unique_ptr<mesh::Mesh> next);
  // Ranks (simulation_ranks.cpp): the partition, this rank's groups and its exchange lists,
  // rebuilt with the mesh; the buffer patches a level step reads; every patch gathered on
  // rank 0 before it writes an output; the settings several ranks cannot run yet.
  // trim: the store keeps only what wanted_families() names (a regrid trims after its
  // moves, which read what a rank held before). follow: the partition keeps the current
  // one's cuts where the balance allows (Partition::following; a regrid, a reordering of
  // the pool), else every level is cut afresh (a new or restarted mesh).
  void repartition(bool trim = true, bool follow = false);
  // Its two halves: the partition and each level's exchange lists; and (several ranks)
  // the store's room for wanted_families().
  void partition_levels(bool follow);
  void hold_wanted(bool trim);
  // Several ranks, a mesh built without data (initial conditions, restart): a fresh
  // partition, and room, zeroed, for every family this rank needs.
  void hold_new_store();
  // The families this rank's store holds between regrids and outputs: its own, the buffer
  // copies its exchange plans receive, and its families' parents (the restriction's
  // targets); [family].
  std::vector<char> wanted_families() const;
  // compact: the pool is packed when much of it is unused (not while a device copy mirrors
  // its positions).
  void trim_store(bool compact = true);
  // Const: it refreshes buffer copies of other ranks' patches, not this rank's state.
  void exchange_buffers(int level) const;
  // The same in two halves: packed and sent (the messages then travel while the interior
  // groups are stepped), and received and unpacked.
  std::unique_ptr<parallel::PendingExchange> start_buffers(int level) const;
  void finish_buffers(int level, parallel::PendingExchange& pending) const;
  // Both time levels of each patch, from one rank to another (this rank's part of a list
  // every rank derives alike).
  struct PatchMove {
    int patch, from, to;
  };
  // dev: the data read from and written to the device copy (a regrid on the device).
  void move_patches(const std::vector<PatchMove>& moves, exec::DeviceMesh* dev = nullptr) const;
  std::vector<double> pack_device(exec::DeviceMesh& dev, const std::vector<int>& patches) const;
  void unpack_device(exec::DeviceMesh& dev, const std::vector<int>& patches,
                     const std::vector<double>& buf, int from) const;
  // Both time levels of the families of `level` for which foreign(first patch) holds set
  // to NaN (set_poison_foreign_patches).
  void poison_families(int level, const std::function<bool(int)>& foreign) const;
  // A device-resident level's halo started (DeviceHalo::start on the current slot); with
  // set_poison_foreign_patches, the device copies of the patches it delivers (other ranks'
  // families of the level, the coarser level's patches of its plan) set to NaN first, in
  // both time levels, as start_buffers does on the host: what no halo delivered cannot be
  // read unnoticed.
  void start_halo(exec::DeviceHalo& halo, int level) const;
  // Replaces the data of every parent of `level`'s families by their average (several
  // ranks: each rank averages its families and sends each parent's to its rank).
  void restrict_level(int level);
  // A regrid on several ranks: the rank of each family before it, [first patch / 8], by
  // its position before the change (family_owners) and then after it (owners_after: a
  // moved family's at its new position, a new family's -1); then, level by level (coarse
  // to fine, after the coarser level's new families are set), the families that stay move
  // to their new ranks and each new family's rank receives the coarse patches its
  // prolongation reads. (Positions, not coordinates: no per-family lookup at a regrid.)
  using FamilyOwners = std::vector<int>;
  FamilyOwners family_owners() const;
  FamilyOwners owners_after(const FamilyOwners& before, const mesh::MeshChange& change) const;
  void migrate_level(int level, const FamilyOwners& before, const std::vector<int>& added,
                     exec::DeviceMesh* dev = nullptr);
  // A regrid's data on the host: the families that change rank migrate (several ranks),
  // the new families are prolonged from their parents, and their speeds taken.
  void prolong_on_host(const mesh::MeshChange& change, const FamilyOwners& before);
  void gather_on_root();
  // Runs f (an output) on rank 0 after gather_on_root; every rank throws f's error.
  void run_on_root(const std::function<void()>& f);
  // The ranks writing an output together (parallel HDF5, each rank its own patches): on
  // MPI ranks of a build with parallel HDF5 unless mpi.parallel_io is false; nullopt
  // otherwise (one rank, virtual ranks, or rank 0 gathers: run_on_root).
  std::optional<io::Collective> collective_output() const;
  void write_checkpoint_file(const std::string& path, const io::CheckpointHeader& header,
                             const io::CheckpointState& st, const io::Collective* c = nullptr);
  // One decision for every rank (rank 0's would do; any rank's true is taken).
  bool agree(bool local) const { return comm_->size() == 1 ? local : comm_->max(local) > 0; }
  // True where every rank's `local` is.
  bool agree_all(bool local) const {
    return comm_->size() == 1 ? local : comm_->min(local ? 1.0 : 0.0) > 0;
  }
  // One step of `level`, from `time`, from coarse_weight to coarse_weight_end of its
  // parent's step.
  void advance(int level, double time, double dt, double coarse_weight, double coarse_weight_end);
  std::vector<exec::LevelCell> gather_cells(const std::vector<exec::LevelCell>& mine);
  // Self-gravity: the potential of the current density on the root level and, with
  // `refined`, on every refined level in turn (at the start, after a regrid, and on a
  // restart, whose refined potentials come from the checkpoint).
  void solve_gravity(bool refined);
  void log_gravity_setup() const;
  // Device residency: brings the device copy up to date before a step (after the host data
  // changed), and the host copy's current time level before a host-side reader.
  void ensure_device();
  // Sets resident_mode_ from gpu.resident, the run and the GPU's free memory (constructor).
  void choose_residency(parallel::Comm& comm);
  // The GPU's free and total memory, the free memory divided among the ranks of the run
  // that share this rank's GPU (they each plan their copies at the same time).
  std::optional<std::pair<double, double>> gpu_memory() const;
  // Whether an adaptive mesh's pool fits on the GPU (else the run goes on staged), with
  // room reserved for regrids to grow it there.
  bool refined_fit();
  // A regrid's pool must hold `patches`, beyond its capacity: the host pool and the device
  // copy made larger together (four times, 64 families more at least, as far as the GPU's free
  // memory allows); false when the GPU cannot hold `patches`.
  bool grow_device(std::size_t patches);
  void sync_host() const;
  // Both time levels of the pool copied back where the device wrote them (also before a
  // host exchange of adaptive levels, which sends the coarser level's patches in both).
  void sync_all_slots() const;
  // sync_host, then free_device.
  void release_device();
  // Frees the device copy and its halo (made again at the next step); the host copy is
  // then the newest only if it was synced.
  void free_device();
  // Frees halos_, keeping the bytes they sent for the final log.
  void drop_halo();
  // Several ranks: halos_ made (again) for each level's exchange lists (a collective).
  void make_halos();
  // The device's refinement marks of the levels whose criteria it evaluates (coarse to
  // fine, as far as they go), in plan_hierarchy's order of each level's groups.
  std::vector<std::vector<std::uint32_t>> flag_on_device();
  // A regrid's data on the devices of several ranks (after Mesh::apply_hierarchy): the
  // partition and store follow the new mesh, the families that change rank and the coarse
  // patches of new families' prolongation go from GPU to GPU, each rank prolongs its new
  // families on its GPU, and the device tables, registers and halos are made again.
  // Where the pools cannot grow on some rank's GPU, every rank copies its levels back and
  // regrids on the host instead.
  void regrid_ranks_on_device(const mesh::MeshChange& change, const FamilyOwners& before);
  // Device-resident adaptive levels on several ranks: the fine sums of the step of
  // level + 1 to the ranks of `level`'s registers, then added (FluxRegisters::
  // finish_fine_step's order).
  void finish_fine_on_device(int level);
  // RunControl::check_output_dir on rank 0, agreed: before each output.
  void guard_output_dir();
  void write_plot(int index);
  // A plot file of the current state in output.dir under name(dir), written by the ranks
  // together (collective_output) or by rank 0 (the others' patches gathered); returns its
  // path (on rank 0; empty on the others when gathered).
  std::string write_plot_on_root(const std::function<std::string(const std::string& dir)>& name);
  // The diagnostic plot file of a numerical failure `e` (best effort). Several ranks write
  // it together (gathered on rank 0) when `e` was agreed between them through an MPI Comm,
  // i.e. when every rank is here.
  void write_failure_plot(const Error& e);
  io::ToPrimitive to_primitive() const;
  // Plot-file fields computed from the mesh (div B with mhd.plot_divb).
  std::vector<io::DerivedField> derived_plot_fields() const;
  // A plot file's [units] attributes.
  void label_units(io::PlotFile& plot) const;
  void log_totals_line() const;
  // The history file's columns, and one of its rows (a collective: the totals), output.history.
  std::vector<std::string> history_columns() const;
  void write_history_row(double dt);
  // "<output.dir>/<problem>.summary.json" from machine_summary (rank 0).
  void write_summary_json(const RunSummary& run) const;
  void log_total_changes(const std::vector<double>& totals) const;
  void remove_stale_temporaries() const;
  void prune_checkpoints(const std::string& newest) const;
  std::size_t checkpoint_bytes() const;
  std::string level_summary() const;
  void log_device_summary(long long updates, const RunSummary& run) const;
  void log_prepare_summary() const;
  std::string machine_summary(const RunSummary& run) const;
  // The end of run(): rates, stages, SOR counts (summed over the ranks: a collective),
  // regrids, steps per level, totals, L1 error and the machine-readable line.
  void log_run_summary(const RunSummary& summary, long long updates, double pipeline_wall);

  Params params_;
  parallel::Comm* comm_;
  parallel::Partition partition_;
  // Per level: this rank's groups, and the patches it sends to / receives from each rank
  // before a level step (same-level buffers, then the coarser level's).
  struct LevelExchange {
    std::vector<int> groups;
    // The same groups, the `interior` ones that read no buffer patch first (in canonical
    // order, then the others): the order of a pass that overlaps the exchange.
    std::vector<int> overlap;
    std::size_t interior = 0;
    // [peer]: the same-level patches, then the coarser level's.
    std::vector<std::vector<int>> send, receive;
    std::vector<std::size_t> send_same, receive_same;  // [peer]: how many are same-level
  };
  std::vector<LevelExchange> exchanges_;
  physics::Model model_;
  mesh::FieldRegistry fields_;  // run_fields(params_)
  std::string problem_name_;
  std::string run_id_;
  std::unique_ptr<mesh::Mesh> mesh_;
  std::unique_ptr<Problem> problem_;
  std::unique_ptr<exec::Executor> executor_;
  std::unique_ptr<exec::Pipeline> pipeline_;  // the hydro pass's
  std::unique_ptr<HydroPass> hydro_;
  std::unique_ptr<gravity::SelfGravity> gravity_;  // gravity.enabled only
  // Kick at the step's start, solve, kick at its end (GravityPass::Role's order).
  std::vector<std::unique_ptr<GravityPass>> gravity_passes_;
  std::unique_ptr<PoissonPass> poisson_;              // refined levels' SOR (gravity with AMR)
  std::unique_ptr<exec::Pipeline> poisson_pipeline_;  // the SOR pass's
  SorStats sor_stats_;                                // this rank's groups
  SorStats sor_summed_;  // every rank's, at the end of run() (for its log)
  long long sor_unconverged_logged_ = 0;
  bool resident_mode_ = false;
  // Whether the levels' data are on the device with more than one level (their flux
  // registers, refluxing and restriction too; on several ranks with the fine sums and the
  // restricted parents of other ranks' patches sent to them).
  bool device_levels() const { return resident_mode_ && resident_ && resident_->levels() > 1; }
  std::unique_ptr<exec::DeviceMesh> resident_;  // made on the first step
  // resident_'s buffer patches on several ranks, one exchange per level.
  std::vector<std::unique_ptr<exec::DeviceHalo>> halos_;
  std::array<double, 4> halo_bytes_{};  // sent by dropped halos, [exec::HaloRoute]
  bool halo_logged_ = false;
  // Seconds of the device halo exchanges: in flight behind the interior groups' steps, and
  // spent in start() and finish() (the unpack, and any wait).
  struct {
    double hidden = 0, exposed = 0;
  } halo_times_;
  std::function<void()> check_output_dir_;  // RunControl::check_output_dir of the run
  double device_setup_seconds_ = 0;         // ensure_device's copies to the GPU, this rank
  mutable double buffer_bytes_ = 0;         // sent by this rank's host exchanges of buffer patches
  bool device_setup_logged_ = false;
  bool device_current_ = false;        // resident_ holds the newest data
  std::vector<exec::Pass*> schedule_;  // the passes of a level step, in order
  exec::FluxRegisters registers_;
  RefinementParams refinement_;
  MemoryEstimate memory_;
  bool subcycle_ = true;
  std::vector<double> speeds_;  // last max signal speed per level
  std::vector<long> level_steps_;
  long long cell_updates_ = 0;
  bool device_pool_room_ = true;
  int gpu_sharers_ = 1;  // ranks of the run on this rank's GPU, itself included
  int regrid_count_ = 0;
  RegridStats regrid_stats_;
  long long terms_sent_ = 0;  // correction_terms_sent's, from the host
#ifdef NDEBUG
  bool verify_mesh_ = false;
#else
  bool verify_mesh_ = true;
#endif
  bool poison_foreign_ = false;
  bool overlap_exchange_ = true;  // mpi.overlap_exchange
  // This rank's groups stepped by passes that overlap the exchange: [0] before the
  // messages arrived, [1] in all.
  long long overlap_groups_[2] = {0, 0};
  long long floored_ = 0;
  long long corrected_ = 0;  // cells recomputed by first-order flux correction (hydro.fofc)
  // What first-order flux correction cost in this run (not counted across restarts): rounds
  // of correcting passes, group solves and batches (exec::PassStats), and the wall seconds
  // of the correcting rounds (inside the prepare, solve and close stages). fofc_summed_:
  // every rank's solves and batches and the most seconds of any, at the end of run().
  struct FofcCost {
    long long rounds = 0, solves = 0, batches = 0;
    double seconds = 0;
  };
  FofcCost fofc_cost_, fofc_summed_;
  // Refluxing corrections withheld because they would have left a coarse cell unphysical
  // (exec/flux_register.cpp): each loses conservation by its correction.
  long long reflux_withheld_ = 0;
  Timers timers_;
  double time_ = 0;
  std::unique_ptr<io::HistoryFile> history_;  // rank 0, with output.history
  bool history_opened_ = false;               // on every rank
  long last_history_step_ = -1;
  double next_history_ = 0;
  long step_ = 0;
  bool initialized_ = false;
  bool restarted_ = false;
  // Loop state that a checkpoint carries (io::CheckpointState).
  int plot_index_ = 0;
  double next_plot_ = 0;
  long last_plot_step_ = -1;
  double next_checkpoint_ = 0;
  std::vector<double> totals0_;  // conserved_totals() at t = 0
  RunWatch watch_;               // time-step collapse, runaway totals
  long last_checkpoint_step_ = -1;
  double checkpoint_rate_ = 0;  // bytes/s of the last checkpoint write (0: none yet)
};

}  // namespace tessera::evolve
