#include "tessera/mesh/boundary.hpp"

#include <vector>

namespace tessera::mesh {

namespace {

// Fills the `ghost` layers of one side of dimension `dim`. A reflecting wall flips the sign
// of the vector components normal to it (`flipped`: those fields).
void fill_side(Boundary bc, int dim, int side, int ghost, int nvar, const std::vector<int>& flipped,
               Real* box) {
  const int n = 2 * kPatchSize + 2 * ghost;
  const int n3 = n * n * n;
  const int stride[3] = {1, n, n * n};
  const int a_dim = (dim + 1) % 3, b_dim = (dim + 2) % 3;
  for (int layer = 0; layer < ghost; ++layer) {
    // Ghost cell index along dim, its mirror image and the nearest interior cell.
    const int g = side == 0 ? ghost - 1 - layer : n - ghost + layer;
    const int mirror = side == 0 ? ghost + layer : n - ghost - 1 - layer;
    const int edge = side == 0 ? ghost : n - ghost - 1;
    const int src = bc == Boundary::kReflecting ? mirror : edge;
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) {
        const int base = a * stride[a_dim] + b * stride[b_dim];
        const int to = base + g * stride[dim], from = base + src * stride[dim];
        for (int v = 0; v < nvar; ++v) box[v * n3 + to] = box[v * n3 + from];
        if (bc == Boundary::kReflecting)
          for (const int v : flipped) {
            Real& normal = box[v * n3 + to];
            normal = -normal;
          }
      }
  }
}

}  // namespace

void apply_physical_boundaries(const Mesh& mesh, int level, std::array<int, 3> group_corner,
                               int ghost, Real* box) {
  const auto& geo = mesh.geometry();
  const auto cells = mesh.level_cells(level);
  for (int dim = 0; dim < 3; ++dim) {
    if (geo.periodic(dim)) continue;
    const bool low = group_corner[dim] == 0;
    const bool high = group_corner[dim] + 2 * kPatchSize == cells[dim];
    if (!low && !high) continue;
    const std::vector<int> flipped =
        mesh.fields().select([dim](const FieldInfo& f) { return f.vector_component == dim; });
    if (low) fill_side(geo.boundary[dim][0], dim, 0, ghost, mesh.nvar(), flipped, box);
    if (high) fill_side(geo.boundary[dim][1], dim, 1, ghost, mesh.nvar(), flipped, box);
  }
}

}  // namespace tessera::mesh
