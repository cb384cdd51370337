// Prepare and close stages: moving a patch group between the patch pool and the
// solver's contiguous box (GAMER's Prepare_PatchData / closing step, Schive et al. 2010 §3.5).
#include <algorithm>
#include <vector>

#include "kernels/group_layout.hpp"

#include "stream_store.hpp"
#include "tessera/core/error.hpp"
#include "tessera/exec/pipeline.hpp"
#include "tessera/mesh/boundary.hpp"
#include "tessera/mesh/prolongation.hpp"

namespace tessera::exec {

using mesh::kPatchSize;

namespace {

// Ghost cells of a block without a same-level patch: interpolated in space and time
// from the parent level (proper nesting guarantees it covers them).
void fill_from_coarse(const mesh::Mesh& m, const mesh::PatchMeta& base, int ghost,
                      double coarse_weight, const int lo[3], const int hi[3], mesh::CoarseBox& cb,
                      bool& gathered, Real* box) {
  const int n = 2 * kPatchSize + 2 * ghost;
  if (base.level == 0)
    throw Error(ErrorKind::kInternal, "a root-level patch lacks a neighbour inside the domain");
  if (!gathered) {
    // The group box reaches `ghost` fine cells = ghost/2 coarse cells beyond the parent,
    // plus one coarse cell for the slopes.
    const auto& parent = m.patch(base.parent);
    const int margin = (ghost + 1) / 2 + 1;
    mesh::gather_box(
        m, parent.level,
        {parent.corner[0] - margin, parent.corner[1] - margin, parent.corner[2] - margin},
        kPatchSize + 2 * margin, coarse_weight, cb);
    gathered = true;
  }
  const auto& c = base.corner;
  mesh::prolong_region(cb, {c[0] + lo[0], c[1] + lo[1], c[2] + lo[2]},
                       {c[0] + hi[0], c[1] + hi[1], c[2] + hi[2]}, box, n,
                       {c[0] - ghost, c[1] - ghost, c[2] - ghost});
}

}  // namespace

namespace {

// All fields of the mesh.
bool prepare_all(const mesh::Mesh& m, int slot, int first_patch, int ghost, Real* box,
                 double coarse_weight, double time) {
  const int n = 2 * kPatchSize + 2 * ghost;
  const std::size_t n3 = std::size_t(n) * n * n;
  const auto& base = m.patch(first_patch);
  const mesh::NeighbourTable::Row blocks = m.neighbours().row(first_patch);
  thread_local mesh::CoarseBox coarse;
  bool gathered = false;
  // The group spans patch blocks 0..1 per dimension; ghosts reach into blocks -1 and 2.
  for (int bz = -1; bz <= 2; ++bz)
    for (int by = -1; by <= 2; ++by)
      for (int bx = -1; bx <= 2; ++bx) {
        const int b[3] = {bx, by, bz};
        int lo[3], hi[3];
        for (int d = 0; d < 3; ++d) {
          lo[d] = std::max(b[d] * kPatchSize, -ghost);
          hi[d] = std::min(b[d] * kPatchSize + kPatchSize, 2 * kPatchSize + ghost);
        }
        if (lo[0] >= hi[0] || lo[1] >= hi[1] || lo[2] >= hi[2]) continue;
        const int src = blocks[mesh::group_block(bx, by, bz)];
        // Beyond a non-periodic boundary: boundary conditions, below.
        if (src == mesh::kBlockBoundary) continue;
        if (src == mesh::kBlockCoarse) {
          fill_from_coarse(m, base, ghost, coarse_weight, lo, hi, coarse, gathered, box);
          continue;
        }
        const Real* data = m.data(slot, src);
        const int len = hi[0] - lo[0];
        for (int v = 0; v < m.nvar(); ++v)
          for (int z = lo[2]; z < hi[2]; ++z)
            for (int y = lo[1]; y < hi[1]; ++y) {
              const Real* from =
                  data + v * mesh::kPatchCells +
                  ((z - bz * kPatchSize) * kPatchSize + (y - by * kPatchSize)) * kPatchSize +
                  (lo[0] - bx * kPatchSize);
              Real* to = box + v * n3 + ((z + ghost) * n + (y + ghost)) * n + (lo[0] + ghost);
              std::copy(from, from + len, to);
            }
      }
  mesh::apply_physical_boundaries(m, base.level, base.corner, ghost, box, time);
  return gathered;
}

}  // namespace

bool prepare_group(const mesh::Mesh& m, int slot, int first_patch, int ghost, Real* box,
                   double coarse_weight, FieldRange fields, double time) {
  if (fields.count == 0 || (fields.first == 0 && fields.count == m.nvar()))
    return prepare_all(m, slot, first_patch, ghost, box, coarse_weight, time);
  // A pass that reads some of the fields: the whole box is assembled (interpolation and
  // boundaries see every field) and its fields copied out. Correct for any fields; a
  // pass for which this matters can be given its own gather.
  const std::size_t n3 = kernels::box_cells(ghost);
  thread_local std::vector<Real> all;
  all.resize(n3 * m.nvar());
  const bool coarse = prepare_all(m, slot, first_patch, ghost, all.data(), coarse_weight, time);
  std::copy(all.begin() + fields.first * n3, all.begin() + (fields.first + fields.count) * n3, box);
  return coarse;
}

void close_group(mesh::Mesh& m, int slot, int first_patch, const Real* interior,
                 FieldRange fields) {
  constexpr int g = 2 * kPatchSize;
  if (fields.count == 0) fields = {0, m.nvar()};
  for (int c = 0; c < mesh::kFamilySize; ++c) {
    Real* data = m.data(slot, first_patch + c);
    const int ox = (c & 1) * kPatchSize, oy = ((c >> 1) & 1) * kPatchSize;
    const int oz = ((c >> 2) & 1) * kPatchSize;
    for (int v = 0; v < fields.count; ++v)
      for (int z = 0; z < kPatchSize; ++z)
        for (int y = 0; y < kPatchSize; ++y) {
          const Real* from = interior + v * g * g * g + ((z + oz) * g + (y + oy)) * g + ox;
          stream_copy(
              from, kPatchSize,
              data + (fields.first + v) * mesh::kPatchCells + (z * kPatchSize + y) * kPatchSize);
        }
  }
}

}  // namespace tessera::exec
