#include "tessera/evolve/diagnostics.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace tessera::evolve {

namespace {

int floor_div(int a, int b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// Variable v of cell g (index space of `level`): from the level's patch when it has one,
// else from the coarser levels; cells beyond a non-periodic boundary clamp to the domain.
Real cell_value(const mesh::Mesh& m, int level, std::array<int, 3> g, int v) {
  for (int l = level; l >= 0; --l) {
    const auto cells = m.level_cells(l);
    for (int d = 0; d < 3; ++d)
      if (!m.geometry().periodic(d)) g[d] = std::clamp(g[d], 0, cells[d] - 1);
    mesh::PatchCoord pc{floor_div(g[0], mesh::kPatchSize), floor_div(g[1], mesh::kPatchSize),
                        floor_div(g[2], mesh::kPatchSize)};
    const int p = m.find_patch(l, pc);
    if (p != mesh::kNoPatch) {
      const auto& corner = m.patch(p).corner;
      int local[3];
      for (int d = 0; d < 3; ++d) {
        // Periodic images: the patch found may sit at the wrapped position.
        local[d] = ((g[d] - corner[d]) % cells[d] + cells[d]) % cells[d];
      }
      return m.current(p)[v * mesh::kPatchCells +
                          (local[2] * mesh::kPatchSize + local[1]) * mesh::kPatchSize + local[0]];
    }
    for (int d = 0; d < 3; ++d) g[d] = floor_div(g[d], 2);
  }
  return 0;  // unreachable: the root level covers the domain
}

}  // namespace

void magnetic_divergence(const mesh::Mesh& m, int p, int first_var, Real* div, Real* relative) {
  constexpr int n = mesh::kPatchSize;
  const auto& meta = m.patch(p);
  const Real* u = m.current(p);
  const double h = m.dx(meta.level);
  auto value = [&](int v, int i, int j, int k) -> Real {
    if (i >= 0 && i < n && j >= 0 && j < n && k >= 0 && k < n)
      return u[v * mesh::kPatchCells + (k * n + j) * n + i];
    return cell_value(m, meta.level, {meta.corner[0] + i, meta.corner[1] + j, meta.corner[2] + k},
                      v);
  };
  auto magnitude = [&](int i, int j, int k) {
    double b2 = 0;
    for (int d = 0; d < 3; ++d) {
      const double b = value(first_var + d, i, j, k);
      b2 += b * b;
    }
    return std::sqrt(b2);
  };
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const int c = (k * n + j) * n + i;
        double sum = 0;
        double scale = relative ? magnitude(i, j, k) : 0;
        for (int d = 0; d < 3; ++d) {
          const int e[3] = {d == 0, d == 1, d == 2};
          sum += double(value(first_var + d, i + e[0], j + e[1], k + e[2])) -
                 double(value(first_var + d, i - e[0], j - e[1], k - e[2]));
          if (relative)
            scale = std::max({scale, magnitude(i + e[0], j + e[1], k + e[2]),
                              magnitude(i - e[0], j - e[1], k - e[2])});
        }
        div[c] = Real(sum / (2 * h));
        if (relative) relative[c] = scale > 0 ? Real(std::fabs(sum) / (2 * scale)) : Real(0);
      }
}

DivergenceStats divergence_stats(const mesh::Mesh& m, int first_var) {
  const std::vector<int> order = m.canonical_order();
  const int np = static_cast<int>(order.size());
  std::vector<double> max_rel(np, 0), sum_rel(np, 0), volume(np, 0);
#pragma omp parallel
  {
    std::vector<Real> div(mesh::kPatchCells), rel(mesh::kPatchCells);
#pragma omp for schedule(dynamic, 8)
    for (int i = 0; i < np; ++i) {
      const int p = order[i];
      if (!m.patch(p).is_leaf()) continue;
      magnetic_divergence(m, p, first_var, div.data(), rel.data());
      const double h = m.dx(m.patch(p).level), vol = h * h * h;
      for (int c = 0; c < mesh::kPatchCells; ++c) {
        max_rel[i] = std::max(max_rel[i], double(rel[c]));
        sum_rel[i] += rel[c];
      }
      sum_rel[i] *= vol;
      volume[i] = vol * mesh::kPatchCells;
    }
  }
  DivergenceStats s;
  double vol = 0;
  for (int i = 0; i < np; ++i) {
    s.max_relative = std::max(s.max_relative, max_rel[i]);
    s.mean_relative += sum_rel[i];
    vol += volume[i];
  }
  if (vol > 0) s.mean_relative /= vol;
  return s;
}

}  // namespace tessera::evolve
