// The time step's parts: regridding (flag, plan, apply, prolong; on several ranks with
// the families' moves), the level step with its subcycles, restriction and refluxing
// (Schive et al. 2010 §2.1), the time step from the levels' signal speeds, and the
// self-gravity solves at synchronisation.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/parallel.hpp"
#include "tessera/evolve/memory.hpp"
#include "tessera/evolve/simulation.hpp"
#include "tessera/mesh/prolongation.hpp"

namespace tessera::evolve {

bool Simulation::regrid() {
  // Device-resident adaptive levels: the levels are flagged on the GPU where the criteria
  // allow (only the marks per patch come back), the host plans and changes the octree, and
  // the device copy follows the change: its moves, and the new families prolonged there
  // (DeviceMesh::regrid). The levels are copied back only for the host's flags, or when the
  // pool must grow beyond what the GPU holds (the run then goes on staged). On several
  // ranks the same, with the families that change rank and the coarse patches of new
  // families' prolongation sent from GPU to GPU through the hosts (regrid_ranks_on_device).
  const bool ranks = comm_->size() > 1;
  const bool keep_device = agree_all(device_levels() && device_current_);
  if (!keep_device) release_device();
  mesh::HierarchyChange h;
  {
    ScopedTimer t(timers_, Stage::kFlag);
    std::vector<std::vector<std::uint32_t>> marks;
    if (keep_device) marks = flag_on_device();
    const int top = std::min(refinement_.max_level, mesh_->num_levels());
    // The host flags the levels the device did not (with its copy brought up to date);
    // several ranks flag their own families, whose halos their buffer patches hold.
    if (static_cast<int>(marks.size()) < top) {
      if (keep_device) sync_all_slots();
      if (ranks)
        for (int level = 0; level < mesh_->num_levels(); ++level) exchange_buffers(level);
    }
    h = plan_change(*mesh_, refinement_, model_, *problem_, time_, ranks ? &partition_ : nullptr,
                    ranks ? comm_ : nullptr, keep_device ? &marks : nullptr);
  }
  ScopedTimer t(timers_, Stage::kRegrid);
  check_mesh_growth(params_, memory_, mesh_->num_patches(), mesh_->pool_capacity_patches(),
                    mesh_->forest().families_after(h), false);
  // Only what changes is touched: removed families were restricted onto their parents at
  // the end of the last step; new ones are prolonged from their parents, coarse to fine.
  FamilyOwners before = ranks ? family_owners() : FamilyOwners{};
  // A pool that must grow beyond its capacity: the device copy grows with it where the GPU
  // has the memory; otherwise the levels are copied back and the copy (which page-locks the
  // host pool) lets go before the pool is reallocated. A sparse store (several ranks) moves
  // no data here: its new families are held after the partition (hold_wanted).
  const mesh::MeshChange change = mesh_->apply_changes(h, [&](std::size_t patches) {
    if (mesh_->sparse()) return;
    if (keep_device && device_current_ && grow_device(patches)) return;
    sync_all_slots();
    free_device();
  });
  if (ranks) before = owners_after(before, change);
  regrid_stats_.families_added += change.added_families;
  regrid_stats_.families_removed += change.removed_families;
  regrid_stats_.families_moved += change.moved_families;
  if (change.empty()) return false;
  const int nlev = mesh_->num_levels();
  // The signal speeds of the families that stayed are those of their last step; a new
  // family contributes the speed of its prolonged state.
  speeds_.resize(nlev, 0.0);
  if (ranks && keep_device) {
    regrid_ranks_on_device(change, before);
  } else if (keep_device && device_current_) {
    repartition(false, true);
    registers_.build(*mesh_, partition_, comm_->rank());
    if (!resident_->regrid(*mesh_, change, {mesh_->groups(0)}, model_.physics(), model_.params(),
                           speeds_))
      throw Error(ErrorKind::kInternal,
                  "the host pool moved under its device copy during a regrid without the copy "
                  "being released");
    resident_->set_registers(*mesh_, registers_);
    // The host copy's moved families hold what the host had; its new ones nothing.
    mesh_->set_host_stale(0, true);
    mesh_->set_host_stale(1, true);
    ++regrid_stats_.device_regrids;
  } else {
    repartition(false, true);
    prolong_on_host(change, before);
  }
  level_steps_.resize(std::max<std::size_t>(level_steps_.size(), nlev), 0);
  if (verify_mesh_) sync_all_slots();
  verify_mesh("the mesh after a regrid");
  ++regrid_count_;
  return true;
}

void Simulation::prolong_on_host(const mesh::MeshChange& change, const FamilyOwners& before) {
  const bool ranks = comm_->size() > 1;
  if (ranks) migrate_level(0, before, {});
  for (int level = 1; level < mesh_->num_levels(); ++level) {
    std::vector<int> own;  // several ranks: each prolongs its own new families
    if (ranks) {
      migrate_level(level, before, change.added[level]);
      for (const int g : change.added[level])
        if (partition_.owns(comm_->rank(), g)) own.push_back(g);
    }
    const auto& added = ranks ? own : change.added[level];
    double s = 0;
    ParallelErrors errors;  // the scratch box allocates
#pragma omp parallel for schedule(dynamic) reduction(max : s)
    for (std::size_t i = 0; i < added.size(); ++i)
      errors.run(static_cast<std::int64_t>(i), [&] {
        thread_local mesh::CoarseBox scratch;
        mesh::prolong_family(*mesh_, added[i], scratch);
        for (int c = 0; c < mesh::kFamilySize; ++c) s = std::max(s, patch_max_speed(added[i] + c));
      });
    errors.rethrow();
    speeds_[level] = std::max(speeds_[level], comm_->max(s));
  }
  trim_store();  // several ranks: what the moves read and nothing needs now goes
  registers_.build(*mesh_, partition_, comm_->rank());
}

double Simulation::patch_max_speed(int p) const {
  const int n = mesh::kPatchCells;
  const Real* u = mesh_->current(p);
  double s = 0;
  for (int i = 0; i < n; ++i) s = std::max(s, model_.max_signal_speed(u + i, n));
  return s;
}

double Simulation::patch_interface_speed(int p) const {
  constexpr int P = mesh::kPatchSize;
  const std::size_t n = mesh::kPatchCells;
  const Real* u = mesh_->current(p);
  double s = 0;
  for (int d = 0; d < 3; ++d) {
    const int step = d == 0 ? 1 : d == 1 ? P : P * P;
    // The face neighbour along +d, where the same level has one that this rank holds.
    const int q = mesh_->neighbours().neighbour(p, d == 0, d == 1, d == 2);
    const Real* next = q >= 0 && mesh_->holds(q) ? mesh_->current(q) : nullptr;
    for (int k = 0; k < P; ++k)
      for (int j = 0; j < P; ++j)
        for (int i = 0; i < P; ++i) {
          const int idx = (k * P + j) * P + i, along = d == 0 ? i : d == 1 ? j : k;
          if (along + 1 < P)
            s = std::max(s, model_.interface_signal_speed(u + idx, u + idx + step, n, d));
          else if (next)
            s = std::max(s,
                         model_.interface_signal_speed(u + idx, next + idx - (P - 1) * step, n, d));
        }
  }
  return s;
}

double Simulation::level_max_speed(int level, bool interfaces) const {
  const auto& groups = mesh_->groups(level);
  const int rank = comm_->rank();
  double s = 0;
#pragma omp parallel for reduction(max : s)
  for (std::size_t g = 0; g < groups.size(); ++g)
    if (partition_.owns(rank, groups[g]))
      for (int c = 0; c < mesh::kFamilySize; ++c)
        s = std::max(
            s, interfaces ? patch_interface_speed(groups[g] + c) : patch_max_speed(groups[g] + c));
  return comm_->max(s);
}

double Simulation::root_dt(int* limiting) const {
  double dt = std::numeric_limits<double>::infinity();
  for (int level = 0; level < mesh_->num_levels(); ++level) {
    const double s = speeds_[level];
    if (!(s > 0) || !std::isfinite(s))
      throw Error(ErrorKind::kNumerical,
                  strprintf("step %ld: maximum signal speed on level %d is %g, no stable time "
                            "step exists",
                            step_, level, s));
    const double dt_level = params_.real("hydro.cfl") * mesh_->dx(level) / s;
    const double as_root = subcycle_ ? dt_level * double(1 << level) : dt_level;
    if (as_root < dt && limiting) *limiting = level;
    dt = std::min(dt, as_root);
  }
  return dt;
}

// Every rank's cells, in one sorted list on every rank (a collective).
std::vector<exec::LevelCell> Simulation::gather_cells(const std::vector<exec::LevelCell>& mine) {
  std::vector<double> flat;
  flat.reserve(3 * mine.size());
  for (const auto& c : mine) flat.insert(flat.end(), {double(c[0]), double(c[1]), double(c[2])});
  const auto got = comm_->allgather(std::move(flat));
  std::vector<exec::LevelCell> all;
  for (const auto& from : got)
    for (std::size_t i = 0; i + 2 < from.size(); i += 3)
      all.push_back({std::int64_t(from[i]), std::int64_t(from[i + 1]), std::int64_t(from[i + 2])});
  std::sort(all.begin(), all.end());
  return all;
}

// One step of `level`: its passes in order (schedule_), then two half steps (or one
// shared step) of the finer level, whose fluxes then correct this level's and whose
// average replaces the covered cells.
void Simulation::advance(int level, double time, double dt, double coarse_weight,
                         double coarse_weight_end) {
  if (resident_mode_ && level == 0) ensure_device();
  const bool ranks = comm_->size() > 1;
  exec::LevelStep step{*mesh_,
                       level,
                       dt,
                       coarse_weight,
                       step_ + 1,
                       registers_,
                       timers_,
                       resident_mode_ ? resident_.get() : nullptr,
                       coarse_weight_end,
                       level_steps_[level],
                       time};
  if (ranks) step.groups = &exchanges_[level].groups;
  double speed = 0;
  long long floored = 0, flagged = 0;
  // Several ranks: the buffer patches are received before each pass that reads them,
  // after the passes before it changed the data (the gravity kick before the hydro step:
  // the kicked neighbours are what one rank reads); a pass's error on one rank (an
  // unphysical cell) stops every rank with the lowest failing rank's error, the one a
  // single rank reports, before anyone enters a later collective (the next pass's
  // exchange, the gravity solve's gather).
  // The time of the exchanges and agreements (waits for slower ranks included) is the
  // exchange stage's.
  // A pass through the pipeline steps the groups that read no buffer patch while the
  // level's buffer patches travel, and the others once they have arrived
  // (LevelStep::overlap_groups; mpi.overlap_exchange).
  for (exec::Pass* pass : schedule_) {
    exec::LevelStep s = step;
    std::unique_ptr<parallel::PendingExchange> pending;
    exec::DeviceHalo* const halo = level < int(halos_.size()) ? halos_[level].get() : nullptr;
    bool halo_pending = false;    // resident: halo started, not finished
    bool halo_seen_done = false;  // ... and test() found it complete
    if (ranks && pass->reads_neighbours(level) && halo) {
      // Device-resident: the buffer patches go GPU to GPU (or through pinned host memory)
      // while the interior groups run.
      // The share hidden: the time from start() until the halo was seen complete (or until
      // finish() was called, if it was not) against that time plus start() and finish().
      using Clock = std::chrono::steady_clock;
      const auto t0 = Clock::now();
      ScopedTimer t(timers_, Stage::kExchange);
      start_halo(*halo, level);
      halo_pending = true;
      const auto started = Clock::now();
      halo_times_.exposed += std::chrono::duration<double>(started - t0).count();
      if (overlap_exchange_ && pass->overlaps_exchange()) {
        s.overlap_groups = &exchanges_[level].overlap;
        s.interior = exchanges_[level].interior;
        overlap_groups_[0] += static_cast<long long>(s.interior);
        overlap_groups_[1] += static_cast<long long>(s.overlap_groups->size());
        s.remote = [&, started] {
          ScopedTimer tr(timers_, Stage::kExchange);
          const auto called = Clock::now();
          if (!halo_seen_done)
            halo_times_.hidden += std::chrono::duration<double>(called - started).count();
          halo_pending = false;
          halo->finish();
          halo_times_.exposed += std::chrono::duration<double>(Clock::now() - called).count();
        };
        s.progress = [&, started] {
          if (halo_pending && !halo_seen_done && halo->test()) {
            halo_seen_done = true;
            halo_times_.hidden += std::chrono::duration<double>(Clock::now() - started).count();
          }
        };
      } else {
        halo_pending = false;
        const auto called = Clock::now();
        halo->finish();
        halo_times_.exposed += std::chrono::duration<double>(Clock::now() - called).count();
      }
    } else if (ranks && pass->reads_neighbours(level)) {
      ScopedTimer t(timers_, Stage::kExchange);
      if (overlap_exchange_ && pass->overlaps_exchange()) {
        pending = start_buffers(level);
        s.overlap_groups = &exchanges_[level].overlap;
        s.interior = exchanges_[level].interior;
        overlap_groups_[0] += static_cast<long long>(s.interior);
        overlap_groups_[1] += static_cast<long long>(s.overlap_groups->size());
        s.remote = [&] {
          ScopedTimer tr(timers_, Stage::kExchange);
          auto p = std::move(pending);
          finish_buffers(level, *p);
        };
        s.progress = [&] {
          if (pending) pending->test();
        };
      } else {
        exchange_buffers(level);
      }
    }
    std::exception_ptr error;
    exec::PassStats stats;
    try {
      stats = pass->run(s);
      speed = std::max(speed, stats.max_speed);
      floored += stats.floored;
    } catch (...) {
      if (!ranks) throw;
      error = std::current_exception();
    }
    // A pass that returned, or failed, before its buffer patches arrived: they end here
    // (the other ranks' receives wait for them), and are unpacked as before any pass.
    if (pending) try {
        ScopedTimer t(timers_, Stage::kExchange);
        auto p = std::move(pending);
        if (error)
          p->finish();
        else
          finish_buffers(level, *p);
      } catch (...) {
        if (!error) error = std::current_exception();
      }
    if (halo_pending) try {
        ScopedTimer t(timers_, Stage::kExchange);
        halo_pending = false;
        halo->finish();
      } catch (...) {
        if (!error) error = std::current_exception();
      }
    if (ranks) {
      ScopedTimer t(timers_, Stage::kExchange);
      comm_->agree(error);
    }
    if (pass->corrects()) {
      // First-order flux correction (kernels/mol_stages.hpp): every rank's flagged cells,
      // then the step again where they are; cells a correction leaves unphysical (the
      // neighbours of flagged cells, whose faces changed) join the flags for another,
      // up to kCorrections; the last floors what is left.
      constexpr int kCorrections = 4;
      const auto began = std::chrono::steady_clock::now();
      std::vector<exec::LevelCell> cells, previous, fresh = std::move(stats.flagged_cells);
      for (int round = 1; round <= kCorrections; ++round) {
        if (ranks) {
          ScopedTimer t(timers_, Stage::kExchange);
          fresh = gather_cells(fresh);
        }
        if (fresh.empty()) break;
        previous = cells;
        cells.insert(cells.end(), fresh.begin(), fresh.end());
        std::sort(cells.begin(), cells.end());
        cells.erase(std::unique(cells.begin(), cells.end()), cells.end());
        fresh.clear();
        // No new cell: another round would repeat this one; it floors instead.
        const bool last = round == kCorrections || (round > 1 && cells.size() == previous.size());
        try {
          ++fofc_cost_.rounds;
          exec::PassStats fixed = pass->correct(s, cells, previous, last);
          speed = std::max(speed, fixed.max_speed);
          floored += fixed.floored;
          fofc_cost_.solves += fixed.solves;
          fofc_cost_.batches += fixed.batches;
          fresh = std::move(fixed.flagged_cells);
        } catch (...) {
          if (!ranks) throw;
          error = std::current_exception();
        }
        if (ranks) {
          ScopedTimer t(timers_, Stage::kExchange);
          comm_->agree(error);
        }
        if (last) break;
      }
      fofc_cost_.seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
      flagged += static_cast<long long>(cells.size());
    }
  }
  {
    ScopedTimer t(timers_, Stage::kExchange);
    speeds_[level] = comm_->max(speed);
    floored_ += comm_->sum(floored);
    corrected_ += flagged;  // every rank's cells already
    // The fine fluxes of this step at coarse-fine faces go into the coarse patches'
    // registers (on their ranks).
    if (level > 0 && device_levels())
      finish_fine_on_device(level - 1);
    else if (level > 0)
      registers_.finish_fine_step(level - 1, ranks ? comm_ : nullptr);
  }
  ++level_steps_[level];
  cell_updates_ += 1LL * mesh_->groups(level).size() * mesh::kFamilySize * mesh::kPatchCells;
  if (level + 1 >= mesh_->num_levels()) return;
  const int substeps = subcycle_ ? 2 : 1;
  for (int s = 0; s < substeps; ++s)
    advance(level + 1, time + s * (dt / substeps), dt / substeps, double(s) / substeps,
            double(s + 1) / substeps);
  ScopedTimer t(timers_, Stage::kReflux);
  // Device-resident adaptive levels: the same operations on the device.
  restrict_level(level + 1);
  const long long withheld =
      device_levels() ? resident_->reflux(*mesh_, level) : registers_.reflux(*mesh_, level);
  reflux_withheld_ += comm_->sum(withheld);
  if (device_levels()) mesh_->set_host_stale(mesh_->current_slot(level), true);
}

void Simulation::solve_gravity(bool refined) {
  if (!gravity_) return;
  ScopedTimer t(timers_, Stage::kGravity);
  const int levels = mesh_->num_levels();
  // Several ranks: each works on its own groups, after refreshing the buffer patches it
  // reads (the level's neighbours and the coarser level around every group: the exchange
  // plan of a self-gravitating adaptive run) from their owners' current state.
  const bool ranks = comm_->size() > 1;
  auto own = [&](int level) { return ranks ? &exchanges_[level].groups : nullptr; };
  // A device-resident run: the solves and the correction on the GPU, the buffer patches
  // refreshed there by the level's halo (the host's exchange plan).
  exec::DeviceMesh* const dev = resident_mode_ && device_current_ ? resident_.get() : nullptr;
  auto refresh = [&](int level) {
    if (!ranks) return;
    if (!dev) return exchange_buffers(level);
    // One exchange of a halo at a time: every rank has unpacked the last one (which a
    // peer's next copies into its receiving buffer would overwrite) before any starts.
    comm_->agree(nullptr);
    exec::DeviceHalo& halo = *halos_.at(level);
    const auto t0 = std::chrono::steady_clock::now();
    start_halo(halo, level);
    halo.finish();
    halo_times_.exposed +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  // A refined level's solve at the levels' common time, its ghost layer from the coarser
  // level; smooth: a smoothing pass instead (`iterations` Gauss-Seidel iterations per group,
  // ghost values from the same-level neighbours where there are some).
  auto at_sync = [&](int level) {
    exec::LevelStep s{*mesh_, level, 0.0, 1.0, step_, registers_, timers_, dev, 1.0};
    s.groups = own(level);
    return s;
  };
  GravityPass& poisson = *gravity_passes_[1];
  auto solve_level = [&](int level) {
    refresh(level);
    poisson.solve_refined(at_sync(level));
  };
  const int iterations = static_cast<int>(params_.integer("gravity.smoothing_iterations"));
  auto smooth = [&](int level) {
    refresh(level);
    poisson.solve_refined(at_sync(level), true, iterations);
  };
  const int source = gravity_->source_field();
  if (dev && source >= 0) {
    // A device-resident run: the same cycle as below, each step on the GPU (several ranks:
    // the same refreshes, by the halos, and the terms sent from device memory).
    gravity_->device_clear_correction(*mesh_, *dev);
    gravity_->solve(*mesh_, dev);
    if (levels == 1) return;
    if (refined)
      for (int level = 1; level < levels; ++level) solve_level(level);
    const int cycles = static_cast<int>(params_.integer("gravity.correction_cycles"));
    for (int cycle = 0; cycle < cycles; ++cycle) {
      for (int level = levels - 1; level >= 1; --level) {
        smooth(level);
        gravity_->device_correct_down(*mesh_, *dev, level - 1, refresh);
      }
      gravity_->solve(*mesh_, dev);
      for (int level = 1; level < levels; ++level) {
        gravity_->device_correct_up(*mesh_, *dev, level, refresh);
        smooth(level);
      }
    }
    return;
  }
  if (source < 0 || levels == 1) {
    if (source >= 0) gravity::clear_correction(*mesh_, source);
    gravity_->solve(*mesh_, dev);
    if (refined)
      for (int level = 1; level < levels; ++level) solve_level(level);
    return;
  }
  // The potential correction (docs/architecture.md, "Self-gravity"): V-cycles of the full
  // approximation scheme (FAS) over all levels, the root solved exactly (FFT) as the
  // coarsest grid. First guess: the root solved without correction and the refined levels
  // as below. Down: each refined level, finest first, is smoothed (Gauss-Seidel per patch
  // group, same-level neighbours' values as ghosts) and gives the level below its source
  // (gravity::fine_terms, from each of its groups for the parent: the restricted solution
  // and residual, the fluxes through faces to leaves and isolated domain faces;
  // gravity::correction_source assembles them; on several ranks the terms go to the ranks
  // that read them). The root is solved with it. Up: each refined level takes the change
  // of the level below (gravity::coarse_change, add_coarse_change) and is smoothed. Two
  // cycles bring the levels to the composite solution within its discretisation error
  // (docs/validation.md). The sources are cleared and recomputed at every synchronisation
  // (the level steps in between solve with those of the last one), so that no error can
  // accumulate over the steps.
  gravity::clear_correction(*mesh_, source);
  gravity_->solve(*mesh_);
  // The first guess: each level solved from the coarser one where the mesh is new (the start,
  // a regrid); at the end of a root step the refined levels' own last solves, at this time.
  if (refined)
    for (int level = 1; level < levels; ++level) solve_level(level);
  const int phi = gravity_->phi_field();
  const double four_pi_g = gravity_->four_pi_g();
  const int cycles = static_cast<int>(params_.integer("gravity.correction_cycles"));
  std::vector<std::vector<Real>> kept(levels);
  std::vector<gravity::CorrectionTerms> terms(levels);
  for (int cycle = 0; cycle < cycles; ++cycle) {
    for (int level = levels - 1; level >= 1; --level) {
      smooth(level);
      refresh(level);  // the smoothed neighbours: the residual's ghost values
      kept[level - 1] = gravity::keep_potential(*mesh_, level - 1, phi, own(level - 1));
      terms[level - 1] = gravity::fine_terms(*mesh_, level - 1, phi, source, four_pi_g,
                                             gravity_.get(), own(level));
      if (ranks)
        terms_sent_ +=
            gravity::exchange_terms(*mesh_, level - 1, terms[level - 1], *comm_, partition_);
      refresh(level - 1);  // the potential around each patch of the level below
      gravity::correction_source(*mesh_, level - 1, phi, source, four_pi_g, terms[level - 1],
                                 gravity_.get(), own(level - 1));
    }
    gravity_->solve(*mesh_);
    for (int level = 1; level < levels; ++level) {
      gravity::coarse_change(*mesh_, level, phi, kept[level - 1], terms[level - 1], own(level - 1));
      refresh(level);  // the change of the coarser level around each parent
      gravity::add_coarse_change(*mesh_, level, phi, own(level));
      smooth(level);
    }
  }
}

}  // namespace tessera::evolve
