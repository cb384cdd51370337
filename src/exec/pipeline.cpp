#include "tessera/exec/pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "pipeline_report.hpp"
#include "stream_store.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/parallel.hpp"

namespace tessera::exec {

// `in` is the group's input box with `ghost` layers.
[[noreturn]] void report_unphysical(const mesh::Mesh& m, int level, int first_patch,
                                    const kernels::GroupResult& r, const Real* in, int ghost,
                                    const Real* out, long step, const GroupSolver& solver,
                                    int nvar) {
  constexpr int g = kernels::kGroupSize;
  const int i = r.bad_cell % g, j = (r.bad_cell / g) % g, k = r.bad_cell / (g * g);
  const int child = (i / 8) + 2 * (j / 8) + 4 * (k / 8);
  const int patch = first_patch + child;
  const auto x = m.cell_center(patch, i % 8, j % 8, k % 8);
  const auto& meta = m.patch(patch);
  const int n = kernels::box_size(ghost), n3 = kernels::box_cells(ghost);
  const int bi = ((k + ghost) * n + (j + ghost)) * n + (i + ghost);
  auto state = [&](const Real* u, int stride, int idx) {
    std::string s;
    for (int v = 0; v < nvar; ++v)
      s += strprintf("%s%s=%.6e", v ? " " : "", solver.variable_name(v).c_str(),
                     double(u[v * stride + idx]));
    return s;
  };
  throw Error(ErrorKind::kNumerical,
              strprintf("unphysical state at step %ld: level %d, patch %d, cell (%d, %d, %d) "
                        "of the level, position (%.6g, %.6g, %.6g)\n  before the step: %s\n"
                        "  after the step:  %s\n  (floors cannot repair a non-finite state; "
                        "try a smaller hydro.cfl or a more diffusive hydro.riemann)",
                        step, level, patch, meta.corner[0] + i % 8, meta.corner[1] + j % 8,
                        meta.corner[2] + k % 8, x[0], x[1], x[2], state(in, n3, bi).c_str(),
                        state(out, kernels::kGroupCells, r.bad_cell).c_str()));
}

Pipeline::Pipeline(Executor& executor, int groups_per_batch, const GroupSolver& solver)
    : executor_(executor),
      batch_(groups_per_batch > 0 ? groups_per_batch : executor.preferred_batch()),
      shape_(solver.shape()),
      host_scratch_(solver.host_scratch_reals()),
      device_scratch_(solver.device_scratch_reals()) {
  for (auto& s : staging_) s = executor_.allocate(batch_, solver);
}

bool GroupPass::prepare(const LevelStep& s, int first_patch, int ghost, Real* box) {
  return prepare_group(s.mesh, s.mesh.current_slot(s.level), first_patch, ghost, box,
                       s.coarse_weight, inputs(), s.time);
}

void collect_flagged(const mesh::Mesh& m, const GroupSolver& solver, int first_patch,
                     const Real* out, const kernels::GroupResult& result, PassStats& stats) {
  std::vector<int> cells;
  solver.flagged_cells(out, cells);
  const auto corner = m.patch(first_patch).corner;
  constexpr int n = kernels::kGroupSize;
  for (const int c : cells)
    stats.flagged_cells.push_back(
        {corner[0] + c % n, corner[1] + (c / n) % n, corner[2] + c / (n * n)});
  stats.flagged += result.flagged;
}

PassStats GroupPass::run(const LevelStep& step) {
  if (!pipeline_)
    throw Error(ErrorKind::kInternal, "pass '" + name() + "' has no pipeline to run through");
  return pipeline_->run(step, *this);
}

PassStats GroupPass::correct(const LevelStep& step, const std::vector<LevelCell>& cells,
                             const std::vector<LevelCell>& previous, bool last) {
  if (!pipeline_)
    throw Error(ErrorKind::kInternal, "pass '" + name() + "' has no pipeline to run through");
  return pipeline_->correct(step, *this, cells, previous, last);
}

void Pipeline::prepare_batch(const LevelStep& s, GroupPass& pass, const std::vector<int>& groups,
                             int first, int count, Staging& st) {
  ScopedTimer t(s.timers, Stage::kPrepare);
  long long n_same = 0, n_cf = 0;
  double t_same = 0, t_cf = 0;
  ParallelErrors errors;  // the buffer allocates; prepare checks what it reads
  // Each box is assembled in a per-thread buffer that stays in cache, then streamed to the
  // staging area whole (stream_store.hpp).
#pragma omp parallel reduction(+ : n_same, n_cf, t_same, t_cf)
  {
    thread_local std::vector<Real> box;
    errors.run(-1, [&] { box.resize(st.in_reals); });
    // Dynamic: a group with coarse-fine faces takes 1.6x as long as one without, and they
    // come in clusters (at the edges of refined regions).
#pragma omp for schedule(dynamic)
    for (int g = 0; g < count; ++g)
      errors.run(g, [&] {
        const auto t0 = Timers::Clock::now();
        const bool coarse_fine = pass.prepare(s, groups[first + g], shape_.ghost, box.data());
        stream_copy(box.data(), st.in_reals, st.in + g * st.in_reals);
        const double dt = std::chrono::duration<double>(Timers::Clock::now() - t0).count();
        if (coarse_fine)
          ++n_cf, t_cf += dt;
        else
          ++n_same, t_same += dt;
      });
    stream_fence();
  }
  errors.rethrow();
  prepare_stats_.groups[0] += n_same, prepare_stats_.groups[1] += n_cf;
  prepare_stats_.seconds[0] += t_same, prepare_stats_.seconds[1] += t_cf;
}

void Pipeline::close_batch(const LevelStep& s, GroupPass& pass, const std::vector<int>& groups,
                           int first, int count, Staging& st) {
  mesh::Mesh& m = s.mesh;
  const FieldRange out = pass.outputs();
  const bool reflux = pass.refluxes();
  // Outputs go to the next slot, whatever their time levels: later batches still read the
  // current state of their neighbours (run() moves one-level fields back when all are done).
  const int write = m.next_slot(s.level);
  ParallelErrors errors;
#pragma omp parallel
  {
    // Dynamic: groups with registered faces take longer.
#pragma omp for schedule(dynamic)
    for (int g = 0; g < count; ++g)
      errors.run(g, [&] {
        close_group(m, write, groups[first + g], st.out + g * st.out_reals, out);
        if (reflux)
          s.registers.close_group(m, groups[first + g], st.flux + g * st.flux_reals, s.dt);
      });
    stream_fence();  // close_group streams into the pool
  }
  errors.rethrow();
}

namespace {

// What run() requires of a pass and its solver before anything is touched.
void check_pass(const mesh::Mesh& m, GroupPass& pass, const GroupSolver& solver,
                const GroupShape& shape, std::size_t host, std::size_t device) {
  const auto fail = [&](const std::string& why) {
    throw Error(ErrorKind::kInternal, "pass '" + pass.name() + "': " + why);
  };
  if (!(solver.shape() == shape) || solver.host_scratch_reals() != host ||
      solver.device_scratch_reals() != device)
    fail(strprintf(
        "its solver's shape (ghost %d, %d in, %d out, %d flux variables) is not the "
        "one the pipeline was built for (ghost %d, %d in, %d out, %d flux)",
        solver.shape().ghost, solver.shape().in_vars, solver.shape().out_vars,
        solver.shape().flux_vars, shape.ghost, shape.in_vars, shape.out_vars, shape.flux_vars));
  const FieldRange in = pass.inputs(), out = pass.outputs();
  if (in.count < 1 || out.count < 1 || pass.input_count() != shape.in_vars ||
      out.count != shape.out_vars || in.first < 0 || out.first < 0 ||
      in.first + in.count > m.nvar() || out.first + out.count > m.nvar())
    fail("its input or output fields do not match its solver or the mesh's fields");
  const auto& fields = m.fields();
  for (int f = out.first; f < out.first + out.count; ++f)
    if (fields[f].time_levels != fields[out.first].time_levels)
      fail("it writes fields with one and with two time levels");
  if (pass.refluxes()) {
    const auto corrected = fields.flux_corrected();
    // Sorted, so equal size and ends mean the same contiguous range.
    if (shape.flux_vars != out.count || static_cast<int>(corrected.size()) != out.count ||
        corrected.empty() || corrected.front() != out.first ||
        corrected.back() != out.first + out.count - 1)
      fail("it refluxes, but its outputs are not the flux-corrected fields");
  }
}

// Copies the fields `select` accepts from slot `from` to slot `to` of every patch of the
// level that this rank holds.
template <class Select>
void copy_fields(mesh::Mesh& m, int level, int from, int to, Select select) {
  const auto& groups = m.groups(level);
  for (int f = 0; f < m.nvar(); ++f) {
    if (!select(f)) continue;
#pragma omp parallel for schedule(static)
    for (std::size_t g = 0; g < groups.size(); ++g)
      for (int c = 0; c < mesh::kFamilySize && m.holds(groups[g]); ++c) {
        const Real* src = m.data(from, groups[g] + c) + std::size_t(f) * mesh::kPatchCells;
        std::copy(src, src + mesh::kPatchCells,
                  m.data(to, groups[g] + c) + std::size_t(f) * mesh::kPatchCells);
      }
  }
}

// Exchanges the fields `range` between the two slots of every patch of the level that this
// rank holds.
void exchange_fields(mesh::Mesh& m, int level, FieldRange range) {
  const auto& groups = m.groups(level);
  const std::size_t first = std::size_t(range.first) * mesh::kPatchCells;
  const std::size_t count = std::size_t(range.count) * mesh::kPatchCells;
#pragma omp parallel for schedule(static)
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (int c = 0; c < mesh::kFamilySize && m.holds(groups[g]); ++c) {
      Real* a = m.data(0, groups[g] + c) + first;
      std::swap_ranges(a, a + count, m.data(1, groups[g] + c) + first);
    }
}

// What a pass on a device-resident level requires: the executor gathers the pass's inputs
// itself, so the pass cannot have its own gather unless it gives a device one
// (GroupPass::resident_gather), and the device copy must be the level's.
void check_resident(int level, GroupPass& pass, const DeviceMesh& dm, std::size_t groups,
                    bool own_gather) {
  if (!own_gather && (pass.input_count() != pass.inputs().count || pass.exchanges_outputs()))
    throw Error(ErrorKind::kInternal,
                strprintf("pass '%s' gathers its own inputs or exchanges its outputs, which "
                          "device-resident levels do not support",
                          pass.name().c_str()));
  if (level >= dm.levels() || dm.tables(level).level != level ||
      dm.tables(level).groups() != static_cast<int>(groups))
    throw Error(ErrorKind::kInternal,
                strprintf("pass '%s': the device-resident copy does not hold level %d's groups",
                          pass.name().c_str(), level));
}

// After the last batch (pass.hpp's header): two-level outputs make the next slot current,
// with the two-level fields the pass did not write carried over (or, for a pass that
// exchanges its outputs, the outputs' slots exchanged); one-level outputs are copied back
// to the current slot.
void finish_host(mesh::Mesh& m, int level, GroupPass& pass) {
  const FieldRange out = pass.outputs();
  const auto& fields = m.fields();
  const int cur = m.current_slot(level), next = m.next_slot(level);
  if (fields[out.first].time_levels == 2 && pass.exchanges_outputs()) {
    exchange_fields(m, level, out);
  } else if (fields[out.first].time_levels == 2) {
    copy_fields(m, level, cur, next,
                [&](int f) { return !out.contains(f) && fields[f].time_levels == 2; });
    m.swap_slots(level);
  } else {
    copy_fields(m, level, next, cur, [&](int f) { return out.contains(f); });
  }
}

// finish_host() on the device copy; the host copy of the slot written is then out of date.
void finish_resident(mesh::Mesh& m, int level, FieldRange out, DeviceMesh& dm, bool exchange) {
  const auto& fields = m.fields();
  const int read = m.current_slot(level), write = m.next_slot(level);
  std::vector<int> carry;
  if (fields[out.first].time_levels == 2 && exchange) {
    for (int f = out.first; f < out.first + out.count; ++f) carry.push_back(f);
    dm.exchange_fields(carry, level);
    m.set_host_stale(read, true);
    m.set_host_stale(write, true);
  } else if (fields[out.first].time_levels == 2) {
    for (int f = 0; f < m.nvar(); ++f)
      if (!out.contains(f)) carry.push_back(f);  // one-level fields too: flip_slots copies none
    if (!carry.empty()) dm.copy_fields(carry, read, write, dm.levels() > 1 ? level : -1);
    m.set_host_stale(write, true);
    m.flip_slots(level);
  } else {
    for (int f = out.first; f < out.first + out.count; ++f) carry.push_back(f);
    dm.copy_fields(carry, write, read, dm.levels() > 1 ? level : -1);
    m.set_host_stale(read, true);
    m.set_host_stale(write, true);
  }
}

}  // namespace

namespace {

// A pass's groups cut into batches: `total` groups, the first `interior` of them (those that
// read no buffer patch when the exchange overlaps the pass) in batches of their own.
struct Batches {
  int size, total, interior, interior_batches, count;
  Batches(int size, int total, int interior)
      : size(size),
        total(total),
        interior(interior),
        interior_batches((interior + size - 1) / size),
        count(interior_batches + (total - interior + size - 1) / size) {}
  int first(int k) const {
    return k < interior_batches ? k * size : interior + (k - interior_batches) * size;
  }
  int groups(int k) const {
    return k < interior_batches ? std::min(size, interior - k * size)
                                : std::min(size, total - first(k));
  }
};

}  // namespace

// One loop, wherever the level's data live. Batch k: gather its input boxes (on the host:
// prepare into staging k % 2; device-resident: the executor gathers from the device copy)
// and submit it; then wait for batch k - 1, whose results arrive while batch k runs, and
// close it (on the host: write back and feed the flux registers; resident: the executor
// already scattered it) and read its per-group results.
PassStats Pipeline::run(const LevelStep& s, GroupPass& pass) {
  mesh::Mesh& m = s.mesh;
  const GroupSolver& solver = pass.solver(s);
  check_pass(m, pass, solver, shape_, host_scratch_, device_scratch_);
  DeviceMesh* dm = s.resident;
  const DeviceGather* own_gather = dm ? pass.resident_gather(s) : nullptr;
  if (dm) {
    check_resident(s.level, pass, *dm, s.groups ? s.groups->size() : m.groups(s.level).size(),
                   own_gather != nullptr);
    dm->problem_ghosts(m, s.level, solver.shape().ghost, s.time);
  }
  // With the buffer patches in flight: the interior groups first, in whole batches, then
  // the others once they have arrived (device-resident: the device copy's tables hold the
  // rank's groups in that order).
  const bool overlap = s.overlap_groups != nullptr;
  const std::vector<int>& groups = overlap    ? *s.overlap_groups
                                   : s.groups ? *s.groups
                                              : m.groups(s.level);
  const int total = dm ? dm->tables(s.level).groups() : static_cast<int>(groups.size());
  const Batches b(batch_, total, overlap ? static_cast<int>(s.interior) : total);
  const int read = m.current_slot(s.level), write = m.next_slot(s.level);
  const FieldRange in = pass.inputs(), out = pass.outputs();
  // Device-resident adaptive levels: the flux planes go to the device's registers.
  const double reflux_dt = dm && pass.refluxes() && dm->levels() > 1 ? s.dt : 0.0;
  PassStats stats;
  bool arrived = !overlap;
  bool in_flight[2] = {false, false};
  try {
    for (int k = 0; k <= b.count; ++k) {
      if (k < b.count) {
        if (!arrived && k >= b.interior_batches) {
          s.remote();
          arrived = true;
        }
        Staging& st = *staging_[k % 2];
        if (!dm) prepare_batch(s, pass, groups, b.first(k), b.groups(k), st);
        ScopedTimer t(s.timers, Stage::kSolve);
        if (dm) {
          Executor::ResidentBatch rb{
              b.first(k), read, write,   in.first,
              out.first,  -1,   s.level, coarse_slots(m, s.level, s.coarse_weight),
              reflux_dt};
          rb.time = s.time;
          rb.gather = own_gather;
          executor_.submit_resident(solver, st, b.groups(k), *dm, rb);
        } else
          executor_.submit(solver, st, b.groups(k));
        in_flight[k % 2] = true;
      }
      if (k == 0) continue;
      Staging& prev = *staging_[(k - 1) % 2];
      {
        ScopedTimer t(s.timers, Stage::kIdle);
        executor_.wait(prev);
        in_flight[(k - 1) % 2] = false;
      }
      {
        ScopedTimer t(s.timers, Stage::kClose);
        const int first = b.first(k - 1), count = b.groups(k - 1);
        if (!dm) close_batch(s, pass, groups, first, count, prev);
        for (int g = 0; g < count; ++g) {
          const auto& r = prev.results[g];
          if (r.flagged > 0) {
            // The cells the correcting pass will take again (a resident group's interior
            // fetched from the device).
            if (dm) executor_.fetch_resident_output(prev, g);
            const int patch = dm ? dm->tables(s.level).first_patch[first + g] : groups[first + g];
            collect_flagged(m, solver, patch, prev.out + g * prev.out_reals, r, stats);
          }
          if (r.bad_cell >= 0) {
            if (dm) {
              // The other batch may still be running: let it finish, then fetch this one's
              // boxes from the device.
              const int other = k % 2;
              if (in_flight[other]) executor_.wait(*staging_[other]), in_flight[other] = false;
              executor_.fetch_resident(prev, count);
            }
            const int patch = dm ? dm->tables(s.level).first_patch[first + g] : groups[first + g];
            report_unphysical(m, s.level, patch, r, prev.in + g * prev.in_reals, prev.ghost,
                              prev.out + g * prev.out_reals, s.step, solver, prev.shape.in_vars);
          }
          stats.max_speed = std::max(stats.max_speed, double(r.max_speed));
          stats.floored += r.floored;
          stats.iterations += r.iterations;
          stats.unconverged += r.unconverged;
        }
        stats.groups += count;
      }
      if (!arrived && s.progress) s.progress();
    }
    if (!arrived) s.remote();  // every group interior: the messages still end here
  } catch (...) {
    // A failure while a batch is still on the device (an unphysical cell found in the
    // previous batch, say): let it finish before its staging can be freed.
    for (int k = 0; k < 2; ++k)
      if (in_flight[k]) try {
          executor_.wait(*staging_[k]);
        } catch (...) {
        }
    throw;
  }
  if (dm)
    finish_resident(m, s.level, out, *dm, pass.exchanges_outputs());
  else
    finish_host(m, s.level, pass);
  return stats;
}

}  // namespace tessera::exec
