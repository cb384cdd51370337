#include "tessera/evolve/pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "stream_store.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/parallel.hpp"

namespace tessera::evolve {

namespace {

// `in` is the group's input box with `ghost` layers.
[[noreturn]] void report_unphysical(const mesh::Mesh& m, int level, int first_patch,
                                    const kernels::GroupResult& r, const Real* in, int ghost,
                                    const Real* out, long step, const kernels::Scheme& scheme,
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
      s += strprintf("%s%s=%.6e", v ? " " : "", kernels::conserved_name(scheme.physics, v).c_str(),
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

}  // namespace

Pipeline::Pipeline(Executor& executor, int groups_per_batch, int ghost, int nvar)
    : executor_(executor),
      batch_(groups_per_batch > 0 ? groups_per_batch : executor.preferred_batch()),
      ghost_(ghost),
      nvar_(nvar) {
  for (auto& s : staging_) s = executor_.allocate(batch_, ghost_, nvar_);
}

void Pipeline::close_batch(mesh::Mesh& m, int level, const std::vector<int>& groups, int first,
                           int count, Staging& st, double dt, long step,
                           const kernels::Scheme& scheme, FluxRegisters& registers,
                           LevelStepStats& stats) {
  const int write = m.next_slot(level);
  ParallelErrors errors;
#pragma omp parallel
  {
    // Dynamic: groups with registered faces take longer.
#pragma omp for schedule(dynamic)
    for (int g = 0; g < count; ++g)
      errors.run(g, [&] {
        close_group(m, write, groups[first + g], st.out + g * st.out_reals);
        registers.close_group(m, groups[first + g], st.flux + g * st.flux_reals, dt);
      });
    stream_fence();  // close_group streams into the pool
  }
  errors.rethrow();
  for (int g = 0; g < count; ++g) {
    const auto& r = st.results[g];
    if (r.bad_cell >= 0)
      report_unphysical(m, level, groups[first + g], r, st.in + g * st.in_reals, st.ghost,
                        st.out + g * st.out_reals, step, scheme, st.nvar);
    stats.max_speed = std::max(stats.max_speed, double(r.max_speed));
    stats.floored += r.floored;
  }
}

LevelStepStats Pipeline::advance_level(mesh::Mesh& m, int level, double dt, const SolveArgs& args,
                                       long step, double coarse_weight, FluxRegisters& registers,
                                       Timers& timers) {
  const auto& groups = m.groups(level);
  const int total = static_cast<int>(groups.size());
  const int read = m.current_slot(level);
  const int batches = (total + batch_ - 1) / batch_;
  if (kernels::ghost_width(args.scheme.integrator) != ghost_ || args.nvar() != nvar_)
    throw Error(
        ErrorKind::kInternal,
        strprintf("the scheme needs %d ghost layers of %d variables, the pipeline was "
                  "built for %d of %d",
                  kernels::ghost_width(args.scheme.integrator), args.nvar(), ghost_, nvar_));
  LevelStepStats stats;
  auto count_of = [&](int k) { return std::min(batch_, total - k * batch_); };
  // Batch k: prepare into staging k % 2 and submit; then close batch k - 1, whose
  // results arrive while batch k runs on the device.
  bool in_flight[2] = {false, false};
  try {
    for (int k = 0; k <= batches; ++k) {
      if (k < batches) {
        Staging& st = *staging_[k % 2];
        {
          ScopedTimer t(timers, Stage::kPrepare);
          const int first = k * batch_, count = count_of(k);
          long long n_same = 0, n_cf = 0;
          double t_same = 0, t_cf = 0;
          ParallelErrors errors;  // the buffer allocates; prepare checks what it reads
          // Each box is assembled in a per-thread buffer that stays in cache, then streamed
          // to the staging area whole (stream_store.hpp).
#pragma omp parallel reduction(+ : n_same, n_cf, t_same, t_cf)
          {
            thread_local std::vector<Real> box;
            errors.run(-1, [&] { box.resize(st.in_reals); });
            // Dynamic: a group with coarse-fine faces takes 1.6x as long as one without,
            // and they come in clusters (at the edges of refined regions).
#pragma omp for schedule(dynamic)
            for (int g = 0; g < count; ++g)
              errors.run(g, [&] {
                const auto t0 = Timers::Clock::now();
                const bool coarse_fine =
                    prepare_group(m, read, groups[first + g], ghost_, box.data(), coarse_weight);
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
        ScopedTimer t(timers, Stage::kSolve);
        executor_.submit(args, st, count_of(k));
        in_flight[k % 2] = true;
      }
      if (k == 0) continue;
      Staging& prev = *staging_[(k - 1) % 2];
      {
        ScopedTimer t(timers, Stage::kIdle);
        executor_.wait(prev);
        in_flight[(k - 1) % 2] = false;
      }
      ScopedTimer t(timers, Stage::kClose);
      close_batch(m, level, groups, (k - 1) * batch_, count_of(k - 1), prev, dt, step, args.scheme,
                  registers, stats);
    }
  } catch (...) {
    // A failure while a batch is still on the device (an unphysical cell found in the
    // previous batch, say): let it finish before its staging can be freed.
    for (int b = 0; b < 2; ++b)
      if (in_flight[b]) try {
          executor_.wait(*staging_[b]);
        } catch (...) {
        }
    throw;
  }
  m.swap_slots(level);
  return stats;
}

}  // namespace tessera::evolve
