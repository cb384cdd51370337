// The correcting pass of first-order flux correction (kernels/mol_stages.hpp, header):
// Pipeline::correct re-solves, from the level's previous state, every group of this rank
// whose update a flagged cell can change (GroupSolver::flag_reach), with every flag of its
// input box as the box's last variable.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "pipeline_report.hpp"
#include "stream_store.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/parallel.hpp"
#include "tessera/exec/pipeline.hpp"

namespace tessera::exec {

namespace {

// One group to solve again: `undo` solves it as the solve before did (run() without flags,
// or the previous correction with its flags), to take that solve's fluxes back out of the
// flux registers.
struct Entry {
  int index;  // in the rank's groups, in batch order
  bool undo;
};

// The box cells (index in the group's input box) of each group that holds flagged cells,
// by the group's index in `groups`. A cell belongs to a box when it lies within `ghost`
// cells of the group, across periodic boundaries too.
std::map<int, std::vector<int>> flags_by_group(const mesh::Mesh& m, int level,
                                               const std::vector<int>& groups, int ghost,
                                               const std::vector<LevelCell>& cells) {
  const auto& geo = m.geometry();
  std::int64_t size[3], ngroups[3];
  for (int d = 0; d < 3; ++d) {
    size[d] = std::int64_t(geo.root_cells[d]) << level;
    ngroups[d] = size[d] / kernels::kGroupSize;
  }
  auto key = [&](const std::int64_t(&g)[3]) {
    return (g[2] * ngroups[1] + g[1]) * ngroups[0] + g[0];
  };
  std::unordered_map<std::int64_t, int> at;
  for (std::size_t t = 0; t < groups.size(); ++t) {
    const auto c = m.patch(groups[t]).corner;
    const std::int64_t g[3] = {c[0] / kernels::kGroupSize, c[1] / kernels::kGroupSize,
                               c[2] / kernels::kGroupSize};
    at[key(g)] = static_cast<int>(t);
  }
  const int n = kernels::box_size(ghost);
  std::map<int, std::vector<int>> boxes;
  for (const LevelCell& x : cells) {
    // The groups whose boxes can hold x: at most two along each axis (ghost < 16).
    std::int64_t cand[3][2];
    int ncand[3];
    for (int d = 0; d < 3; ++d) {
      ncand[d] = 0;
      for (const std::int64_t y : {x[d] - ghost, x[d] + ghost}) {
        std::int64_t g = (y >= 0 ? y : y - kernels::kGroupSize + 1) / kernels::kGroupSize;
        if (geo.periodic(d))
          g = ((g % ngroups[d]) + ngroups[d]) % ngroups[d];
        else if (g < 0 || g >= ngroups[d])
          continue;
        if (ncand[d] == 0 || cand[d][0] != g) cand[d][ncand[d]++] = g;
      }
    }
    for (int a = 0; a < ncand[0]; ++a)
      for (int b = 0; b < ncand[1]; ++b)
        for (int e = 0; e < ncand[2]; ++e) {
          const std::int64_t g[3] = {cand[0][a], cand[1][b], cand[2][e]};
          const auto it = at.find(key(g));
          if (it == at.end()) continue;
          const auto corner = m.patch(groups[it->second]).corner;
          // Every image of x in the box: a periodic axis of one group (16 cells) holds a
          // cell and its periodic copy in the same box.
          int at[3][3], nat[3];
          for (int d = 0; d < 3; ++d) {
            nat[d] = 0;
            for (const int k : {-1, 0, 1}) {
              if (k != 0 && !geo.periodic(d)) continue;
              const std::int64_t o = x[d] + k * size[d] - (corner[d] - ghost);
              if (o >= 0 && o < n) at[d][nat[d]++] = static_cast<int>(o);
            }
          }
          for (int i = 0; i < nat[0]; ++i)
            for (int j = 0; j < nat[1]; ++j)
              for (int l = 0; l < nat[2]; ++l)
                boxes[it->second].push_back((at[2][l] * n + at[1][j]) * n + at[0][i]);
        }
  }
  return boxes;
}

}  // namespace

PassStats Pipeline::correct(const LevelStep& s, GroupPass& pass,
                            const std::vector<LevelCell>& cells,
                            const std::vector<LevelCell>& previous, bool last) {
  PassStats stats;
  const GroupSolver* solver = pass.correcting_solver(s, !last);
  if (!solver || cells.empty()) return stats;
  mesh::Mesh& m = s.mesh;
  DeviceMesh* dm = s.resident;
  const GroupShape shape = solver->shape();
  const FieldRange in = pass.inputs(), out = pass.outputs();
  if (shape.ghost != shape_.ghost || shape.in_vars != in.count + 1 ||
      pass.input_count() != in.count || m.fields()[out.first].time_levels != 2 ||
      pass.exchanges_outputs())
    throw Error(ErrorKind::kInternal,
                "pass '" + pass.name() + "': its correcting solver or fields do not fit");
  const std::vector<int>& groups = dm         ? dm->tables(s.level).first_patch
                                   : s.groups ? *s.groups
                                              : m.groups(s.level);
  // The groups to solve again: those with a flagged cell within the flags' reach
  // (GroupSolver::flag_reach; a round used to solve every group whose box held a flag: with
  // vl2 and PLM, 22^3 cells against 18^3 within reach). Cells only join the flags, so a
  // group with none within its reach never had one: its last solve was run()'s, and the
  // flags beyond the reach change neither its cells nor its faces' fluxes: solved again it
  // would give the same bits. Each group solved takes every flag of its box.
  const int reach = std::min(solver->flag_reach(), shape.ghost);
  const auto near = flags_by_group(m, s.level, groups, reach, cells);
  if (near.empty()) return stats;
  const auto boxes = flags_by_group(m, s.level, groups, shape.ghost, cells);
  const auto before = flags_by_group(m, s.level, groups, shape.ghost, previous);
  // run() made its outputs current: the step starts from the other slot.
  const int read = m.next_slot(s.level), write = m.current_slot(s.level);
  // Refluxing on the host: the group's fluxes from the solve before (run()'s, or the previous
  // correction's) come out of the registers first: solved again with that solve's flags
  // (none for run()), they come out bit for bit the same.
  // Device-resident: the registers are on the device, and the batches put the fluxes in.
  const bool undo = pass.refluxes() && m.num_levels() > 1;
  std::vector<Entry> entries;
  for (const auto& group : near) {
    const int t = group.first;
    // A group on no register has nothing to undo: its solve is not repeated.
    if (undo && s.registers.touches(m, groups[t])) entries.push_back({t, true});
    entries.push_back({t, false});
  }
  // Resident batches hold the listed groups of one sign (ResidentBatch::groups): the solves
  // to undo first, then the new ones, so that a round takes two batches, not two per group.
  // A register cell takes the fluxes of one group of the level only, so each cell still sees
  // its group's undo before its new fluxes, as on the host.
  if (dm)
    std::stable_partition(entries.begin(), entries.end(), [](const Entry& x) { return x.undo; });
  if (!correcting_ || !(correcting_->shape == shape))
    // A batch of the pipeline's size, made on the first flagged cell (memory.cpp counts it):
    // a round on a deep level solves hundreds of groups and each batch is waited for
    // (capped at 32 groups, the cloud blast's correction took 44% of its time loop on one
    // GPU; docs/performance.md, "First-order flux correction: its cost").
    correcting_ = executor_.allocate(batch_, *solver);
  Staging& st = *correcting_;
  const int n3 = kernels::box_cells(shape.ghost);
  const std::size_t flags_at = std::size_t(in.count) * n3;
  std::vector<int> listed;  // a resident batch's groups, by their index in the tables
  std::size_t e = 0;
  while (e < entries.size()) {
    // A batch: up to the staging's capacity. Resident batches put their fluxes into the
    // registers with one sign: solves to undo and new ones apart.
    std::size_t end = e + 1;
    while (end < entries.size() && int(end - e) < st.capacity &&
           (!dm || entries[end].undo == entries[e].undo))
      ++end;
    const int count = static_cast<int>(end - e);
    stats.solves += count;
    stats.batches += 1;
    listed.clear();
    for (std::size_t k = e; k < end; ++k) listed.push_back(entries[k].index);
    {
      ScopedTimer t(s.timers, Stage::kPrepare);
      ParallelErrors errors;
      // Resident, only the flags are written here: too little to wake the threads for.
#pragma omp parallel for schedule(dynamic) if (!dm)
      for (int g = 0; g < count; ++g)
        errors.run(g, [&] {
          const Entry& en = entries[e + g];
          Real* box = st.in + g * st.in_reals;
          if (!dm)
            prepare_group(m, read, groups[en.index], shape.ghost, box, s.coarse_weight, in, s.time);
          std::fill(box + flags_at, box + flags_at + n3, Real(0));
          const auto& flags = en.undo ? before : boxes;
          const auto it = flags.find(en.index);
          if (it != flags.end())
            for (const int c : it->second) box[flags_at + c] = Real(1);
        });
      errors.rethrow();
    }
    {
      ScopedTimer t(s.timers, Stage::kSolve);
      if (dm) {
        Executor::ResidentBatch rb{entries[e].index,
                                   read,
                                   write,
                                   in.first,
                                   out.first,
                                   in.count,
                                   s.level,
                                   coarse_slots(m, s.level, s.coarse_weight),
                                   undo ? (entries[e].undo ? -s.dt : s.dt) : 0.0,
                                   !entries[e].undo};
        rb.time = s.time;
        rb.groups = listed.data();
        dm->problem_ghosts(m, s.level, shape.ghost, s.time);
        executor_.submit_resident(*solver, st, count, *dm, rb);
      } else
        executor_.submit(*solver, st, count);
      executor_.wait(st);
    }
    ScopedTimer t(s.timers, Stage::kClose);
    if (!dm) {
      ParallelErrors errors;
#pragma omp parallel
      {
#pragma omp for schedule(static)
        for (int g = 0; g < count; ++g)
          errors.run(g, [&] {
            if (!entries[e + g].undo)
              close_group(m, write, groups[entries[e + g].index], st.out + g * st.out_reals, out);
          });
        stream_fence();  // close_group streams into the pool
      }
      errors.rethrow();
    }
    for (int g = 0; g < count; ++g) {
      const Entry& en = entries[e + g];
      const int first = groups[en.index];
      const Real* planes = st.flux + g * st.flux_reals;
      if (en.undo) {
        if (!dm) s.registers.close_group(m, first, planes, -s.dt);
        continue;
      }
      if (!dm && pass.refluxes()) s.registers.close_group(m, first, planes, s.dt);
      const auto& r = st.results[g];
      if (r.bad_cell >= 0) {
        if (dm) executor_.fetch_resident(st, count);
        report_unphysical(m, s.level, first, r, st.in + g * st.in_reals, st.ghost,
                          st.out + g * st.out_reals, s.step, *solver, in.count);
      }
      // For the next correction. The host reads the flags off the unfloored cells with
      // the kernel's own test; compiled with contractions the GPU may flag a cell at the
      // floor to round-off that the host passes (it then stays as it came, at the floor).
      if (r.flagged > 0) {
        if (dm) executor_.fetch_resident_output(st, g);
        collect_flagged(m, *solver, first, st.out + g * st.out_reals, r, stats);
      }
      stats.max_speed = std::max(stats.max_speed, double(r.max_speed));
      stats.floored += r.floored;
      stats.groups += 1;
    }
    e = end;
  }
  return stats;
}

}  // namespace tessera::exec
