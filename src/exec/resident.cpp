#include "tessera/exec/resident.hpp"

#include <algorithm>
#include <array>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/parallel.hpp"

namespace tessera::exec {

namespace {

// Fills group `g`'s row of the tables; returns whether the group touches a problem-defined
// side (kernels::kSideProblem in its code: its states come from the host's ProblemGhosts).
// `coarse` is set when a block inside the domain has no same-level patch (it comes from
// the coarser level).
bool group_tables(const mesh::Mesh& m, int first_patch, int* blocks, int& code, bool& coarse) {
  const auto& geo = m.geometry();
  const int sides = m.neighbours().sides(first_patch);
  code = 0;
  coarse = false;
  bool problem = false;
  for (int d = 0; d < 3; ++d)
    for (int s = 0; s < 2; ++s) {
      if (!(sides >> (2 * d + s) & 1)) continue;
      const mesh::Boundary b = geo.boundary[d][s];
      problem = problem || b == mesh::Boundary::kProblem;
      const int kind = b == mesh::Boundary::kProblem      ? kernels::kSideProblem
                       : b == mesh::Boundary::kReflecting ? kernels::kSideReflecting
                                                          : kernels::kSideOutflow;
      code |= kind << (4 * d + 2 * s);
    }
  // The mesh's neighbour table in the device layout: a patch, the coarser level, or -1
  // beyond the boundary.
  const mesh::NeighbourTable::Row row = m.neighbours().row(first_patch);
  for (int b = 0; b < kernels::kGatherBlocks; ++b) {
    coarse = coarse || row[b] == mesh::kBlockCoarse;
    blocks[b] = row[b] >= 0 ? row[b] : row[b] == mesh::kBlockCoarse ? kernels::kGatherCoarse : -1;
  }
  return problem;
}

// The parent level's patches around the group's parent and the domain's extent relative
// to the parent (kernels/coarse_fine_gather.hpp). Proper nesting gives the parent all of its
// same-level neighbours inside the domain.
void coarse_row(const mesh::Mesh& m, int first_patch, int* patches, int* clamp) {
  const auto parent = m.patch(m.patch(first_patch).parent);
  const int pid = m.patch(first_patch).parent;
  for (int b = 0; b < kernels::kCoarseBlocks; ++b) {
    const int q = m.neighbours().neighbour(pid, b % 3 - 1, (b / 3) % 3 - 1, b / 9 - 1);
    if (q == mesh::kBlockCoarse)
      throw Error(ErrorKind::kInternal,
                  strprintf("proper nesting violated: patch %d of level %d lacks a neighbour", pid,
                            parent.level));
    patches[b] = q >= 0 ? q : -1;
  }
  const auto cells = m.level_cells(parent.level);
  constexpr int kFar = 1 << 20;  // a periodic dimension: no clamp
  for (int d = 0; d < 3; ++d) {
    const bool periodic = m.geometry().periodic(d);
    clamp[2 * d] = periodic ? -kFar : -parent.corner[d];
    clamp[2 * d + 1] = periodic ? kFar : cells[d] - 1 - parent.corner[d];
  }
}

}  // namespace

bool level_is_self_contained(const mesh::Mesh& m, int level) {
  int blocks[kernels::kGatherBlocks], code = 0;
  bool coarse = false;
  for (const int g : m.groups(level))
    if (group_tables(m, g, blocks, code, coarse) || coarse) return false;
  return true;
}

CoarseSlots coarse_slots(const mesh::Mesh& m, int level, double weight) {
  if (level == 0) return {};
  return {m.current_slot(level - 1), m.next_slot(level - 1), weight};
}

const char* halo_route_name(HaloRoute r) {
  switch (r) {
    case HaloRoute::kHost:
      return "host";
    case HaloRoute::kPeer:
      return "peer";
    case HaloRoute::kMpi:
      return "mpi";
    default:
      return "none";
  }
}

GatherTables build_gather_tables(const mesh::Mesh& m, int level, const std::vector<int>* order) {
  GatherTables t;
  t.level = level;
  const auto& groups = order ? *order : m.groups(level);
  t.blocks.resize(groups.size() * kernels::kGatherBlocks);
  t.codes.resize(groups.size());
  t.coarse.assign(groups.size() * kernels::kCoarseBlocks, -1);
  t.clamp.assign(groups.size() * kernels::kCoarseClamp, 0);
  t.first_patch = groups;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    bool coarse = false;
    t.problem = group_tables(m, groups[g], t.blocks.data() + g * kernels::kGatherBlocks, t.codes[g],
                             coarse) ||
                t.problem;
    if (coarse)
      coarse_row(m, groups[g], t.coarse.data() + g * kernels::kCoarseBlocks,
                 t.clamp.data() + g * kernels::kCoarseClamp);
    t.coarse_fine = t.coarse_fine || coarse;
  }
  t.prolong = prolong_fields(m.fields());
  return t;
}

kernels::ProlongFields prolong_fields(const mesh::FieldRegistry& fields) {
  if (fields.size() > kernels::kMaxGatherFields)
    throw Error(ErrorKind::kInternal, strprintf("%d fields: the gather tables handle at most %d",
                                                fields.size(), kernels::kMaxGatherFields));
  kernels::ProlongFields pf;
  pf.nvar = fields.size();
  for (int f = 0; f < fields.size(); ++f) {
    pf.kind[f] = static_cast<signed char>(fields[f].prolongation);
    pf.one_level[f] = fields[f].time_levels == 1;
  }
  pf.admissible = fields.admissible();
  return pf;
}

ProlongTable build_prolong_table(const mesh::Mesh& m, const std::vector<int>& families) {
  ProlongTable t;
  t.first_patch = families;
  t.coarse.assign(families.size() * kernels::kCoarseBlocks, -1);
  t.clamp.assign(families.size() * kernels::kCoarseClamp, 0);
  for (std::size_t i = 0; i < families.size(); ++i) {
    if (m.patch(families[i]).level == 0)
      throw Error(ErrorKind::kInternal, "a root family has no parent to be prolonged from");
    coarse_row(m, families[i], t.coarse.data() + i * kernels::kCoarseBlocks,
               t.clamp.data() + i * kernels::kCoarseClamp);
  }
  return t;
}

void prolong_family_host(mesh::Mesh& m, const ProlongTable& t, int i) {
  const kernels::ProlongFields pf = prolong_fields(m.fields());
  const int first = t.first_patch[i];
  const int now = m.current_slot(m.patch(m.patch(first).parent).level);
  const auto value = [&](int patch, int v, int cell, bool) {
    return m.data(now, patch)[std::size_t(v) * mesh::kPatchCells + cell];
  };
  const int* coarse = t.coarse.data() + std::size_t(i) * kernels::kCoarseBlocks;
  const int* clamp = t.clamp.data() + std::size_t(i) * kernels::kCoarseClamp;
  constexpr int P = mesh::kPatchSize;
  for (int c = 0; c < mesh::kFamilySize; ++c) {
    Real* out = m.current(first + c);
    for (int cell = 0; cell < mesh::kPatchCells; ++cell) {
      const int f[3] = {(c & 1) * P + cell % P, ((c >> 1) & 1) * P + (cell / P) % P,
                        ((c >> 2) & 1) * P + cell / (P * P)};
      kernels::prolong_new_cell(value, coarse, clamp, pf, f, [&](int v, Real x) {
        out[std::size_t(v) * mesh::kPatchCells + cell] = x;
      });
    }
  }
}

ProblemGhosts build_problem_ghosts(const mesh::Mesh& m, const GatherTables& t, int ghost,
                                   double time) {
  const mesh::ProblemBoundary& pb = m.problem_boundary();
  const auto& geo = m.geometry();
  const auto cells = m.level_cells(t.level);
  const double dx = m.dx(t.level);
  const int n = kernels::kGroupSize + 2 * ghost;
  const int slab = ghost * n * n;  // entries per side
  ProblemGhosts pg;
  pg.ghost = ghost;
  pg.nvar = pb.nvar;
  pg.time = time;
  pg.side.assign(std::size_t(t.groups()) * 6, -1);
  // The sides first (group, dimension, side), each slab at its offset; then the cells, in
  // parallel (the prepare stage asks the problem from several threads too). A state's
  // index is its entry's: room for one per entry.
  std::vector<std::array<int, 3>> sides;
  for (int g = 0; g < t.groups(); ++g)
    for (int d = 0; d < 3; ++d)
      for (int s = 0; s < 2; ++s)
        if (kernels::side_kind(t.codes[g], d, s) == kernels::kSideProblem) {
          pg.side[std::size_t(g) * 6 + 2 * d + s] = static_cast<int>(sides.size()) * slab;
          sides.push_back({g, d, s});
        }
  if (sides.empty()) return pg;
  if (!pb)
    throw Error(ErrorKind::kInternal,
                "a problem-defined boundary without the problem's boundary states");
  pg.entries.resize(sides.size() * slab);
  pg.states.resize(pg.entries.size() * pb.nvar);
  ParallelErrors errors;
#pragma omp parallel for schedule(dynamic)
  for (std::size_t i = 0; i < sides.size(); ++i)
    errors.run(static_cast<std::int64_t>(i), [&] {
      const auto [g, d, s] = sides[i];
      const auto corner = m.patch(t.first_patch[g]).corner;
      // Box cell by box cell in kernels::problem_entry's order, each asked as
      // mesh/boundary.cpp asks it (the same position, periodic images inside the domain).
      for (int layer = 0; layer < ghost; ++layer)
        for (int b = 0; b < n; ++b)
          for (int a = 0; a < n; ++a) {
            int c[3];
            c[d] = s == 0 ? -1 - layer : kernels::kGroupSize + layer;
            c[(d + 1) % 3] = a - ghost;
            c[(d + 2) % 3] = b - ghost;
            std::array<double, 3> lo, hi;
            for (int e = 0; e < 3; ++e) {
              int x = corner[e] + c[e];
              if (geo.periodic(e)) x = (x % cells[e] + cells[e]) % cells[e];
              lo[e] = geo.xmin[e] + x * dx;
              hi[e] = lo[e] + dx;
            }
            const std::size_t e = i * slab + (std::size_t(layer) * n + b) * n + a;
            Real* u = pg.states.data() + e * pb.nvar;
            const mesh::GhostFill fill = pb.state(lo, hi, time, d, s, u);
            pg.entries[e] = fill == mesh::GhostFill::kState        ? static_cast<int>(e)
                            : fill == mesh::GhostFill::kReflecting ? kernels::kGhostReflecting
                                                                   : kernels::kGhostOutflow;
          }
    });
  errors.rethrow();
  return pg;
}

void gather_group_host(const mesh::Mesh& m, const GatherTables& t, int slot, int g, int ghost,
                       int first, int count, Real* box, CoarseSlots cs,
                       const ProblemGhosts* problem) {
  const int n3 = kernels::box_cells(ghost);
  const int* blocks = t.blocks.data() + std::size_t(g) * kernels::kGatherBlocks;
  const int* coarse = t.coarse.data() + std::size_t(g) * kernels::kCoarseBlocks;
  const int* clamp = t.clamp.data() + std::size_t(g) * kernels::kCoarseClamp;
  const auto& fields = m.fields();
  // gather_box's time interpolation, operation for operation.
  const Real wn = Real(cs.weight), wo = Real(1 - cs.weight);
  const auto value = [&](int patch, int v, int cell, bool one_level) {
    const std::size_t i = std::size_t(v) * mesh::kPatchCells + cell;
    if (cs.weight == 1 || one_level) return m.data(cs.now, patch)[i];
    if (cs.weight == 0) return m.data(cs.before, patch)[i];
    return wo * m.data(cs.before, patch)[i] + wn * m.data(cs.now, patch)[i];
  };
  // Problem-defined sides: the tables of this group's sides.
  const int* sides[6] = {};
  if (problem) {
    if (problem->ghost != ghost)
      throw Error(ErrorKind::kInternal, "problem-defined ghost cells built for another width");
    for (int i = 0; i < 6; ++i) {
      const int at = problem->side[std::size_t(g) * 6 + i];
      sides[i] = at >= 0 ? problem->entries.data() + at : nullptr;
    }
  }
  // A problem-defined side's state, where it is the cell's value.
  const auto state = [&](const kernels::GatherSource& s, int v, Real& x) {
    if (s.state < 0 || v >= problem->nvar) return false;
    const int dir = fields[v].vector_component;
    x = problem->states[std::size_t(s.state) * problem->nvar + v];
    if (dir >= 0 && (s.state_flip >> dir) & 1) x = -x;
    return true;
  };
  if (!problem)
    for (int side = 0; side < 6; ++side)
      if (kernels::side_kind(t.codes[g], side / 2, side % 2) == kernels::kSideProblem)
        throw Error(ErrorKind::kInternal, "a problem-defined side without its ghost cells");
  for (int cell = 0; cell < n3; ++cell) {
    const kernels::GatherSource s =
        kernels::gather_source(blocks, t.codes[g], ghost, cell, problem ? sides : nullptr);
    if (s.patch == kernels::kGatherCoarse) {
      kernels::prolong_ghost_cell(value, coarse, clamp, t.prolong, ghost, s.at, first, count,
                                  [&](int v, Real x) {
                                    Real* to = &box[std::size_t(v - first) * n3 + cell];
                                    if (state(s, v, *to)) return;
                                    const int dir = fields[v].vector_component;
                                    *to = dir >= 0 && (s.flip >> dir) & 1 ? -x : x;
                                  });
      continue;
    }
    if (s.patch < 0)
      throw Error(ErrorKind::kInternal, "gather table reads a block beyond the boundary");
    const Real* u = m.data(slot, s.patch) + s.cell;
    for (int v = 0; v < count; ++v) {
      Real* to = &box[std::size_t(v) * n3 + cell];
      if (state(s, first + v, *to)) continue;
      const int dir = fields[first + v].vector_component;
      const Real x = u[std::size_t(first + v) * mesh::kPatchCells];
      *to = dir >= 0 && (s.flip >> dir) & 1 ? -x : x;
    }
  }
}

}  // namespace tessera::exec
