#include "tessera/evolve/diagnostics.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace tessera::evolve {

namespace {

int floor_div(int a, int b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// Variable v of cell g of patch p's level, at most one patch beyond p: from the level's
// patch when it has one (the neighbour table), else from the coarser levels; cells beyond
// a non-periodic boundary clamp to the domain.
Real cell_value(const mesh::Mesh& m, int p, std::array<int, 3> g, int v) {
  const mesh::NeighbourTable& table = m.neighbours();
  while (p != mesh::kNoPatch) {
    const auto& meta = m.patch(p);
    const auto cells = m.level_cells(meta.level);
    int off[3];
    for (int d = 0; d < 3; ++d) {
      if (!m.geometry().periodic(d)) g[d] = std::clamp(g[d], 0, cells[d] - 1);
      off[d] = floor_div(g[d] - meta.corner[d], mesh::kPatchSize);
    }
    const int q = table.neighbour(p, off[0], off[1], off[2]);
    if (q >= 0) {
      const auto corner = m.patch(q).corner;
      int local[3];
      for (int d = 0; d < 3; ++d) {
        // Periodic images: the patch found may sit at the wrapped position.
        local[d] = ((g[d] - corner[d]) % cells[d] + cells[d]) % cells[d];
      }
      return m.current(q)[v * mesh::kPatchCells +
                          (local[2] * mesh::kPatchSize + local[1]) * mesh::kPatchSize + local[0]];
    }
    for (int d = 0; d < 3; ++d) g[d] = floor_div(g[d], 2);
    p = meta.parent;
  }
  return 0;  // unreachable: the root level covers the domain
}

}  // namespace

void magnetic_divergence(const mesh::Mesh& m, int p, int first_var, Real* div, Real* relative) {
  constexpr int n = mesh::kPatchSize, b = n + 2;  // the patch with one layer of face neighbours
  const auto& meta = m.patch(p);
  const Real* u = m.current(p);
  const double h = m.dx(meta.level);
  // B and |B| of the patch and its face neighbours, gathered once per patch: the stencils
  // below read each cell up to 7 times, and a neighbour outside the patch is a lookup in
  // the mesh (cell_value). Same values and the same arithmetic as evaluating per stencil.
  Real field[3][b * b * b];
  double magnitude[b * b * b];
  const auto at = [](int i, int j, int k) { return ((k + 1) * b + (j + 1)) * b + (i + 1); };
  const auto gather = [&](int i, int j, int k) {
    const bool inside = i >= 0 && i < n && j >= 0 && j < n && k >= 0 && k < n;
    double b2 = 0;
    for (int d = 0; d < 3; ++d) {
      const Real x =
          inside ? u[(first_var + d) * mesh::kPatchCells + (k * n + j) * n + i]
                 : cell_value(m, p, {meta.corner[0] + i, meta.corner[1] + j, meta.corner[2] + k},
                              first_var + d);
      field[d][at(i, j, k)] = x;
      b2 += double(x) * double(x);
    }
    magnitude[at(i, j, k)] = std::sqrt(b2);
  };
  for (int k = -1; k <= n; ++k)
    for (int j = -1; j <= n; ++j)
      for (int i = -1; i <= n; ++i) {
        // Interior cells and face neighbours only (edges and corners are not in a stencil).
        const int outside = (i < 0 || i >= n) + (j < 0 || j >= n) + (k < 0 || k >= n);
        if (outside <= 1) gather(i, j, k);
      }
  const int stride[3] = {1, b, b * b};
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const int c = (k * n + j) * n + i, q = at(i, j, k);
        double sum = 0;
        double scale = relative ? magnitude[q] : 0;
        for (int d = 0; d < 3; ++d) {
          sum += double(field[d][q + stride[d]]) - double(field[d][q - stride[d]]);
          if (relative)
            scale = std::max({scale, magnitude[q + stride[d]], magnitude[q - stride[d]]});
        }
        div[c] = Real(sum / (2 * h));
        if (relative) relative[c] = scale > 0 ? Real(std::fabs(sum) / (2 * scale)) : Real(0);
      }
}

DivergenceStats divergence_stats(const mesh::Mesh& m, int first_var, parallel::Comm& comm,
                                 const parallel::Partition& part) {
  const std::vector<int> order = m.canonical_order();
  std::vector<int> mine;  // canonical positions of this rank's leaf patches
  for (std::size_t i = 0; i < order.size(); ++i)
    if (m.patch(order[i]).is_leaf() && part.owns(comm.rank(), order[i]))
      mine.push_back(static_cast<int>(i));
  const int np = static_cast<int>(mine.size());
  std::vector<double> max_rel(np, 0);
  std::vector<double> sums(2 * std::size_t(np), 0);  // [patch]: sum of relative, volume
  std::vector<std::int64_t> keys(mine.begin(), mine.end());
#pragma omp parallel
  {
    std::vector<Real> div(mesh::kPatchCells), rel(mesh::kPatchCells);
#pragma omp for schedule(dynamic, 8)
    for (int i = 0; i < np; ++i) {
      const int p = order[mine[i]];
      magnetic_divergence(m, p, first_var, div.data(), rel.data());
      const double h = m.dx(m.patch(p).level), vol = h * h * h;
      double sum_rel = 0;
      for (int c = 0; c < mesh::kPatchCells; ++c) {
        max_rel[i] = std::max(max_rel[i], double(rel[c]));
        sum_rel += rel[c];
      }
      sums[2 * i] = sum_rel * vol;
      sums[2 * i + 1] = vol * mesh::kPatchCells;
    }
  }
  DivergenceStats s;
  for (int i = 0; i < np; ++i) s.max_relative = std::max(s.max_relative, max_rel[i]);
  s.max_relative = comm.max(s.max_relative);
  const std::vector<double> total = comm.ordered_sum(keys, sums, 2);
  if (total[1] > 0) s.mean_relative = total[0] / total[1];
  return s;
}

}  // namespace tessera::evolve
