#include "tessera/mesh/boundary.hpp"

#include <vector>

#include "tessera/core/error.hpp"

namespace tessera::mesh {

namespace {

// The box's layout and where it lies: cell (i, j, k) of the box is cell
// corner + (i, j, k) - ghost of the level.
struct BoxFrame {
  int n = 0, ghost = 0, nvar = 0;
  std::array<int, 3> corner{};
  double dx = 0;
  std::array<double, 3> xmin{};
  std::array<int, 3> cells{};  // of the level
  std::array<bool, 3> periodic{};
};

// Fills the `ghost` layers of one side of dimension `dim`. A reflecting wall flips the sign
// of the vector components normal to it (`flipped`: those fields). A problem-defined side
// asks the problem cell by cell (ProblemBoundary), at time t.
void fill_side(Boundary bc, int dim, int side, const BoxFrame& f, const std::vector<int>& flipped,
               const ProblemBoundary& problem, double t, Real* box) {
  const int n = f.n, ghost = f.ghost, nvar = f.nvar;
  const int n3 = n * n * n;
  const int stride[3] = {1, n, n * n};
  const int a_dim = (dim + 1) % 3, b_dim = (dim + 2) % 3;
  std::vector<Real> state(bc == Boundary::kProblem ? problem.nvar : 0);
  for (int layer = 0; layer < ghost; ++layer) {
    // Ghost cell index along dim, its mirror image and the nearest interior cell.
    const int g = side == 0 ? ghost - 1 - layer : n - ghost + layer;
    const int mirror = side == 0 ? ghost + layer : n - ghost - 1 - layer;
    const int edge = side == 0 ? ghost : n - ghost - 1;
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) {
        GhostFill fill = bc == Boundary::kReflecting ? GhostFill::kReflecting : GhostFill::kOutflow;
        if (bc == Boundary::kProblem) {
          int idx[3];
          idx[dim] = g, idx[a_dim] = a, idx[b_dim] = b;
          std::array<double, 3> lo, hi;
          for (int d = 0; d < 3; ++d) {
            // Along a periodic dimension the cell's image inside the domain.
            int c = f.corner[d] - ghost + idx[d];
            if (f.periodic[d]) c = (c % f.cells[d] + f.cells[d]) % f.cells[d];
            lo[d] = f.xmin[d] + c * f.dx;
            hi[d] = lo[d] + f.dx;
          }
          fill = problem.state(lo, hi, t, dim, side, state.data());
        }
        const int base = a * stride[a_dim] + b * stride[b_dim];
        const int to = base + g * stride[dim];
        const int from = base + (fill == GhostFill::kReflecting ? mirror : edge) * stride[dim];
        for (int v = 0; v < nvar; ++v) box[v * n3 + to] = box[v * n3 + from];
        if (fill == GhostFill::kReflecting)
          for (const int v : flipped) {
            Real& normal = box[v * n3 + to];
            normal = -normal;
          }
        else if (fill == GhostFill::kState)
          for (int v = 0; v < problem.nvar; ++v) box[v * n3 + to] = state[v];
      }
  }
}

}  // namespace

void apply_physical_boundaries(const Mesh& mesh, int level, std::array<int, 3> group_corner,
                               int ghost, Real* box, double time) {
  const auto& geo = mesh.geometry();
  const auto cells = mesh.level_cells(level);
  const BoxFrame frame{2 * kPatchSize + 2 * ghost,
                       ghost,
                       mesh.nvar(),
                       group_corner,
                       mesh.dx(level),
                       geo.xmin,
                       cells,
                       {geo.periodic(0), geo.periodic(1), geo.periodic(2)}};
  for (int dim = 0; dim < 3; ++dim) {
    if (geo.periodic(dim)) continue;
    const bool low = group_corner[dim] == 0;
    const bool high = group_corner[dim] + 2 * kPatchSize == cells[dim];
    if (!low && !high) continue;
    const std::vector<int> flipped =
        mesh.fields().select([dim](const FieldInfo& f) { return f.vector_component == dim; });
    for (int side = 0; side < 2; ++side) {
      if (!(side == 0 ? low : high)) continue;
      const Boundary bc = geo.boundary[dim][side];
      if (bc == Boundary::kProblem && !mesh.problem_boundary())
        throw Error(ErrorKind::kInternal,
                    "a problem-defined boundary without the problem's boundary states");
      fill_side(bc, dim, side, frame, flipped, mesh.problem_boundary(), time, box);
    }
  }
}

}  // namespace tessera::mesh
