#include "tessera/exec/resident.hpp"

#include <algorithm>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"

namespace tessera::exec {

namespace {

// Fills group `g`'s row of the tables; false when a block inside the domain has no
// same-level patch (it would come from the coarser level) or the group touches a
// problem-defined side (whose states the host computes).
bool group_tables(const mesh::Mesh& m, int first_patch, int* blocks, int& code) {
  const auto& geo = m.geometry();
  const int sides = m.neighbours().sides(first_patch);
  code = 0;
  for (int d = 0; d < 3; ++d)
    for (int s = 0; s < 2; ++s) {
      if (!(sides >> (2 * d + s) & 1)) continue;
      const mesh::Boundary b = geo.boundary[d][s];
      if (b == mesh::Boundary::kProblem) return false;
      code |= (b == mesh::Boundary::kReflecting ? kernels::kSideReflecting : kernels::kSideOutflow)
              << (4 * d + 2 * s);
    }
  // The mesh's neighbour table in the device layout: a patch, or -1 beyond the boundary.
  const int* row = m.neighbours().row(first_patch);
  for (int b = 0; b < kernels::kGatherBlocks; ++b) {
    if (row[b] == mesh::kBlockCoarse) return false;  // inside the domain: coarser level
    blocks[b] = row[b] >= 0 ? row[b] : -1;
  }
  return true;
}

}  // namespace

bool level_is_self_contained(const mesh::Mesh& m, int level) {
  int blocks[kernels::kGatherBlocks], code = 0;
  for (const int g : m.groups(level))
    if (!group_tables(m, g, blocks, code)) return false;
  return true;
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
  t.first_patch = groups;
  for (std::size_t g = 0; g < groups.size(); ++g)
    if (!group_tables(m, groups[g], t.blocks.data() + g * kernels::kGatherBlocks, t.codes[g]))
      throw Error(ErrorKind::kInternal,
                  strprintf("level %d: group of patch %d has ghost zones on the coarser level; "
                            "its data cannot stay on the device",
                            level, groups[g]));
  return t;
}

void gather_group_host(const mesh::Mesh& m, const GatherTables& t, int slot, int g, int ghost,
                       int first, int count, Real* box) {
  const int n3 = kernels::box_cells(ghost);
  const int* blocks = t.blocks.data() + std::size_t(g) * kernels::kGatherBlocks;
  const auto& fields = m.fields();
  for (int cell = 0; cell < n3; ++cell) {
    const kernels::GatherSource s = kernels::gather_source(blocks, t.codes[g], ghost, cell);
    if (s.patch < 0)
      throw Error(ErrorKind::kInternal, "gather table reads a block beyond the boundary");
    const Real* u = m.data(slot, s.patch) + s.cell;
    for (int v = 0; v < count; ++v) {
      const int dir = fields[first + v].vector_component;
      const Real x = u[std::size_t(first + v) * mesh::kPatchCells];
      box[std::size_t(v) * n3 + cell] = dir >= 0 && (s.flip >> dir) & 1 ? -x : x;
    }
  }
}

}  // namespace tessera::exec
