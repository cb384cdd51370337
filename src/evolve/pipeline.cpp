#include "tessera/evolve/pipeline.hpp"

#include <algorithm>
#include <cmath>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"

namespace tessera::evolve {

namespace {

[[noreturn]] void report_unphysical(const mesh::Mesh& m, int level, int first_patch,
                                    const kernels::GroupResult& r, const Real* in, const Real* out,
                                    long step) {
  constexpr int g = kernels::kGroupSize;
  const int i = r.bad_cell % g, j = (r.bad_cell / g) % g, k = r.bad_cell / (g * g);
  const int child = (i / 8) + 2 * (j / 8) + 4 * (k / 8);
  const int patch = first_patch + child;
  const auto x = m.cell_center(patch, i % 8, j % 8, k % 8);
  const auto& meta = m.patch(patch);
  const int n = kernels::box_size(kernels::kGhostRk2), gh = kernels::kGhostRk2;
  const int n3 = n * n * n;
  const int bi = ((k + gh) * n + (j + gh)) * n + (i + gh);
  auto state = [](const Real* u, int stride, int idx) {
    return strprintf("dens=%.6e momx=%.6e momy=%.6e momz=%.6e engy=%.6e", double(u[idx]),
                     double(u[stride + idx]), double(u[2 * stride + idx]),
                     double(u[3 * stride + idx]), double(u[4 * stride + idx]));
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

Pipeline::Pipeline(Executor& executor, int groups_per_batch)
    : executor_(executor), batch_(std::max(1, groups_per_batch)) {
  in_.assign(batch_ * kGroupInReals, Real(0));
  out_.assign(batch_ * kGroupOutReals, Real(0));
  flux_.assign(batch_ * kGroupFluxReals, Real(0));
  results_.resize(batch_);
}

LevelStepStats Pipeline::advance_level(mesh::Mesh& m, int level, double dt,
                                       const SolveArgs& args, long step, double coarse_weight,
                                       FluxRegisters& registers, Timers& timers) {
  const auto& groups = m.groups(level);
  const int total = static_cast<int>(groups.size());
  const int read = m.current_slot(level), write = m.next_slot(level);
  LevelStepStats stats;
  for (int first = 0; first < total; first += batch_) {
    const int count = std::min(batch_, total - first);
    {
      ScopedTimer t(timers, Stage::kPrepare);
#pragma omp parallel for schedule(static)
      for (int g = 0; g < count; ++g)
        prepare_group(m, read, groups[first + g], kernels::kGhostRk2,
                      in_.data() + g * kGroupInReals, coarse_weight);
    }
    {
      ScopedTimer t(timers, Stage::kSolve);
      executor_.solve(args, in_.data(), out_.data(), flux_.data(), results_.data(), count);
    }
    {
      ScopedTimer t(timers, Stage::kClose);
#pragma omp parallel for schedule(static)
      for (int g = 0; g < count; ++g) {
        close_group(m, write, groups[first + g], out_.data() + g * kGroupOutReals);
        registers.close_group(m, groups[first + g], flux_.data() + g * kGroupFluxReals, dt);
      }
      for (int g = 0; g < count; ++g) {
        const auto& r = results_[g];
        if (r.bad_cell >= 0)
          report_unphysical(m, level, groups[first + g], r, in_.data() + g * kGroupInReals,
                            out_.data() + g * kGroupOutReals, step);
        stats.max_speed = std::max(stats.max_speed, double(r.max_speed));
        stats.floored += r.floored;
      }
    }
  }
  m.swap_slots(level);
  return stats;
}

}  // namespace tessera::evolve
