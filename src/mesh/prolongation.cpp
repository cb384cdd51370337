#include "tessera/mesh/prolongation.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/reconstruction.hpp"
#include "tessera/core/error.hpp"

namespace tessera::mesh {

namespace {

int floor_div(int a, int b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// Cells of the box beyond a non-periodic boundary copy the nearest inside cell.
void clamp_outside(const Mesh& mesh, int level, CoarseBox& box) {
  const auto cells = mesh.level_cells(level);
  const int n = box.n;
  for (int d = 0; d < 3; ++d) {
    if (mesh.geometry().periodic(d)) continue;
    for (int v = 0; v < box.nvar; ++v)
      for (int k = 0; k < n; ++k)
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < n; ++i) {
            int idx[3] = {i, j, k};
            const int g = box.lo[d] + idx[d];
            if (g >= 0 && g < cells[d]) continue;
            idx[d] = std::clamp(g, 0, cells[d] - 1) - box.lo[d];
            if (idx[d] < 0 || idx[d] >= n) continue;  // no inside cell in the box
            box.at(v, i, j, k) = box.at(v, idx[0], idx[1], idx[2]);
          }
  }
}

}  // namespace

void gather_box(const Mesh& mesh, int level, std::array<int, 3> lo, int n, double w,
                CoarseBox& box) {
  box.lo = lo;
  box.n = n;
  box.nvar = mesh.nvar();
  box.data.assign(std::size_t(box.nvar) * n * n * n, Real(0));
  const int slot_new = mesh.current_slot(level), slot_old = mesh.next_slot(level);
  const Real wn = Real(w), wo = Real(1 - w);
  PatchCoord first{}, last{};
  for (int d = 0; d < 3; ++d) {
    first[d] = floor_div(lo[d], kPatchSize);
    last[d] = floor_div(lo[d] + n - 1, kPatchSize);
  }
  for (int pz = first[2]; pz <= last[2]; ++pz)
    for (int py = first[1]; py <= last[1]; ++py)
      for (int px = first[0]; px <= last[0]; ++px) {
        PatchCoord pc = {px, py, pz};
        if (!mesh.wrap(level, pc)) continue;  // beyond a boundary: clamp_outside
        const int p = mesh.find_patch(level, pc);
        if (p == kNoPatch)
          throw Error(ErrorKind::kInternal,
                      "proper nesting violated: level " + std::to_string(level) +
                          " has no patch at (" + std::to_string(pc[0]) + ", " +
                          std::to_string(pc[1]) + ", " + std::to_string(pc[2]) + ")");
        const Real* now = mesh.data(slot_new, p);
        const Real* before = mesh.data(slot_old, p);
        const int base[3] = {px * kPatchSize, py * kPatchSize, pz * kPatchSize};
        int a[3], b[3];
        for (int d = 0; d < 3; ++d) {
          a[d] = std::max(base[d], lo[d]);
          b[d] = std::min(base[d] + kPatchSize, lo[d] + n);
        }
        for (int v = 0; v < box.nvar; ++v)
          for (int k = a[2]; k < b[2]; ++k)
            for (int j = a[1]; j < b[1]; ++j)
              for (int i = a[0]; i < b[0]; ++i) {
                const int c = v * kPatchCells +
                              ((k - base[2]) * kPatchSize + (j - base[1])) * kPatchSize +
                              (i - base[0]);
                box.at(v, i - lo[0], j - lo[1], k - lo[2]) =
                    w == 1 ? now[c] : (w == 0 ? before[c] : wo * before[c] + wn * now[c]);
              }
      }
  clamp_outside(mesh, level, box);
}

Real prolong_cell(const CoarseBox& box, int var, std::array<int, 3> fine) {
  int c[3], s[3];
  for (int d = 0; d < 3; ++d) {
    const int coarse = floor_div(fine[d], 2);
    s[d] = fine[d] - 2 * coarse == 0 ? -1 : 1;
    c[d] = coarse - box.lo[d];
  }
  const Real mid = box.at(var, c[0], c[1], c[2]);
  Real value = mid;
  for (int d = 0; d < 3; ++d) {
    int lo[3] = {c[0], c[1], c[2]}, hi[3] = {c[0], c[1], c[2]};
    --lo[d], ++hi[d];
    const Real slope = kernels::LimiterMinmod::slope(mid - box.at(var, lo[0], lo[1], lo[2]),
                                                     box.at(var, hi[0], hi[1], hi[2]) - mid);
    value += Real(0.25) * s[d] * slope;
  }
  return value;
}

void prolong_family(Mesh& mesh, int first_child, CoarseBox& scratch) {
  const auto& child0 = mesh.patch(first_child);
  const auto& parent = mesh.patch(child0.parent);
  gather_box(mesh, parent.level, {parent.corner[0] - 1, parent.corner[1] - 1, parent.corner[2] - 1},
             kPatchSize + 2, 1.0, scratch);
  for (int c = 0; c < kFamilySize; ++c) {
    const auto& m = mesh.patch(first_child + c);
    Real* u = mesh.current(first_child + c);
    for (int v = 0; v < mesh.nvar(); ++v)
      for (int k = 0; k < kPatchSize; ++k)
        for (int j = 0; j < kPatchSize; ++j)
          for (int i = 0; i < kPatchSize; ++i)
            u[v * kPatchCells + (k * kPatchSize + j) * kPatchSize + i] =
                prolong_cell(scratch, v, {m.corner[0] + i, m.corner[1] + j, m.corner[2] + k});
  }
}

namespace {

// Volume average of the 8 children's cells under parent cell (i, j, k) of variable v.
template <class F>
void for_each_restricted(const Mesh& mesh, int first_child, F&& f) {
  constexpr int h = kPatchSize / 2;
  for (int c = 0; c < kFamilySize; ++c) {
    const Real* uc = mesh.current(first_child + c);
    const int ox = (c & 1) * h, oy = ((c >> 1) & 1) * h, oz = ((c >> 2) & 1) * h;
    for (int v = 0; v < mesh.nvar(); ++v)
      for (int k = 0; k < h; ++k)
        for (int j = 0; j < h; ++j)
          for (int i = 0; i < h; ++i) {
            Real sum = 0;
            for (int dk = 0; dk < 2; ++dk)
              for (int dj = 0; dj < 2; ++dj)
                for (int di = 0; di < 2; ++di)
                  sum += uc[v * kPatchCells +
                            ((2 * k + dk) * kPatchSize + (2 * j + dj)) * kPatchSize + 2 * i + di];
            f(v * kPatchCells + ((k + oz) * kPatchSize + (j + oy)) * kPatchSize + (i + ox),
              Real(0.125) * sum);
          }
  }
}

}  // namespace

double max_restriction_mismatch(const Mesh& mesh) {
  std::vector<double> scale(mesh.nvar(), 0), diff(mesh.nvar(), 0);
  for (int p = 0; p < mesh.num_patches(); ++p) {
    const Real* u = mesh.current(p);
    for (int v = 0; v < mesh.nvar(); ++v)
      for (int c = 0; c < kPatchCells; ++c)
        scale[v] = std::max(scale[v], std::fabs(double(u[v * kPatchCells + c])));
    if (mesh.patch(p).is_leaf()) continue;
    for_each_restricted(mesh, mesh.patch(p).first_child, [&](int idx, Real avg) {
      const int v = idx / kPatchCells;
      diff[v] = std::max(diff[v], std::fabs(double(u[idx]) - double(avg)));
    });
  }
  double worst = 0;
  for (int v = 0; v < mesh.nvar(); ++v)
    if (scale[v] > 0) worst = std::max(worst, diff[v] / scale[v]);
  return worst;
}

void restrict_family(Mesh& mesh, int first_child) {
  const int parent = mesh.patch(first_child).parent;
  Real* up = mesh.current(parent);
  for_each_restricted(mesh, first_child, [&](int idx, Real avg) { up[idx] = avg; });
}

}  // namespace tessera::mesh
