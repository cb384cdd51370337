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

// Cells of the box beyond a non-periodic boundary copy the nearest inside cell. Only the
// slabs outside the domain are visited; dimension by dimension, so an edge or corner
// cell takes the value its neighbour received in the previous pass.
void clamp_outside(const Mesh& mesh, int level, CoarseBox& box) {
  const auto cells = mesh.level_cells(level);
  const int n = box.n;
  for (int d = 0; d < 3; ++d) {
    if (mesh.geometry().periodic(d)) continue;
    const int below = std::clamp(-box.lo[d], 0, n);            // [0, below): g < 0
    const int above = std::clamp(cells[d] - box.lo[d], 0, n);  // [above, n): g >= cells
    if (below == 0 && above == n) continue;
    for (int v = 0; v < box.nvar; ++v)
      for (int k = 0; k < n; ++k)
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < n; ++i) {
            int idx[3] = {i, j, k};
            if (idx[d] >= below && idx[d] < above) continue;
            idx[d] = std::clamp(box.lo[d] + idx[d], 0, cells[d] - 1) - box.lo[d];
            // No inside cell in the box (it never happens for a box around a patch).
            box.at(v, i, j, k) =
                idx[d] < 0 || idx[d] >= n ? Real(0) : box.at(v, idx[0], idx[1], idx[2]);
          }
  }
}

}  // namespace

void gather_box(const Mesh& mesh, int level, std::array<int, 3> lo, int n, double w, CoarseBox& box,
                int first_field, int count) {
  box.lo = lo;
  box.n = n;
  box.nvar = count < 0 ? mesh.nvar() : count;
  const int f0 = count < 0 ? 0 : first_field;
  // Every cell is written below (patches inside the domain, clamp_outside beyond it), so
  // the buffer is not cleared first.
  box.data.resize(std::size_t(box.nvar) * n * n * n);
  const FieldRegistry& fields = mesh.fields();
  box.prolongation.resize(box.nvar);
  for (int v = 0; v < box.nvar; ++v) box.prolongation[v] = fields[f0 + v].prolongation;
  // The admissibility check reads a whole state: only for boxes of every field.
  box.admissible = count < 0 && fields.admissible() ? &fields.admissible() : nullptr;
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
        const int len = b[0] - a[0];
        for (int v = 0; v < box.nvar; ++v) {
          const bool one_level = fields[f0 + v].time_levels == 1;  // no previous state
          for (int k = a[2]; k < b[2]; ++k)
            for (int j = a[1]; j < b[1]; ++j) {
              const int c = (f0 + v) * kPatchCells +
                            ((k - base[2]) * kPatchSize + (j - base[1])) * kPatchSize +
                            (a[0] - base[0]);
              Real* to = &box.at(v, a[0] - lo[0], j - lo[1], k - lo[2]);
              if (w == 1 || one_level)
                std::copy_n(now + c, len, to);
              else if (w == 0)
                std::copy_n(before + c, len, to);
              else
                for (int i = 0; i < len; ++i) to[i] = wo * before[c + i] + wn * now[c + i];
            }
        }
      }
  clamp_outside(mesh, level, box);
}

namespace {
void enforce_admissible(const CoarseBox& box, std::array<int, 3> lo, std::array<int, 3> hi,
                        Real* dst, int dst_n, std::array<int, 3> origin);
}  // namespace

Real prolong_cell(const CoarseBox& box, int var, std::array<int, 3> fine) {
  int c[3], s[3];
  for (int d = 0; d < 3; ++d) {
    const int coarse = floor_div(fine[d], 2);
    s[d] = fine[d] - 2 * coarse == 0 ? -1 : 1;
    c[d] = coarse - box.lo[d];
  }
  const Real mid = box.at(var, c[0], c[1], c[2]);
  if (box.kind(var) == Prolongation::kInjection) return mid;
  Real value = mid;
  const bool limited = box.kind(var) == Prolongation::kLimitedLinear;
  for (int d = 0; d < 3; ++d) {
    int lo[3] = {c[0], c[1], c[2]}, hi[3] = {c[0], c[1], c[2]};
    --lo[d], ++hi[d];
    const Real below = mid - box.at(var, lo[0], lo[1], lo[2]);
    const Real above = box.at(var, hi[0], hi[1], hi[2]) - mid;
    const Real slope =
        limited ? kernels::LimiterMinmod::slope(below, above) : Real(0.5) * (below + above);
    value += Real(0.25) * s[d] * slope;
  }
  return value;
}

void prolong_region(const CoarseBox& box, std::array<int, 3> lo, std::array<int, 3> hi, Real* dst,
                    int dst_n, std::array<int, 3> origin) {
  const std::size_t n3 = std::size_t(dst_n) * dst_n * dst_n;
  int clo[3], chi[3];
  for (int d = 0; d < 3; ++d) clo[d] = floor_div(lo[d], 2), chi[d] = floor_div(hi[d] - 1, 2);
  const int sx = 1, sy = box.n, sz = box.n * box.n;
  for (int v = 0; v < box.nvar; ++v) {
    Real* out = dst + v * n3;
    const bool linear = box.kind(v) != Prolongation::kInjection;
    const bool limited = box.kind(v) == Prolongation::kLimitedLinear;
    for (int ck = clo[2]; ck <= chi[2]; ++ck)
      for (int cj = clo[1]; cj <= chi[1]; ++cj)
        for (int ci = clo[0]; ci <= chi[0]; ++ci) {
          const Real* m =
              box.data.data() +
              ((std::size_t(v) * box.n + (ck - box.lo[2])) * box.n + (cj - box.lo[1])) * box.n +
              (ci - box.lo[0]);
          const Real mid = *m;
          // The same limited slopes and additions as prolong_cell, once per coarse cell.
          Real q[3] = {0, 0, 0};
          if (limited) {
            q[0] = Real(0.25) * kernels::LimiterMinmod::slope(mid - m[-sx], m[sx] - mid);
            q[1] = Real(0.25) * kernels::LimiterMinmod::slope(mid - m[-sy], m[sy] - mid);
            q[2] = Real(0.25) * kernels::LimiterMinmod::slope(mid - m[-sz], m[sz] - mid);
          } else if (linear) {
            q[0] = Real(0.125) * (m[sx] - m[-sx]);
            q[1] = Real(0.125) * (m[sy] - m[-sy]);
            q[2] = Real(0.125) * (m[sz] - m[-sz]);
          }
          for (int oz = 0; oz < 2; ++oz) {
            const int z = 2 * ck + oz;
            if (z < lo[2] || z >= hi[2]) continue;
            for (int oy = 0; oy < 2; ++oy) {
              const int y = 2 * cj + oy;
              if (y < lo[1] || y >= hi[1]) continue;
              Real* row = out + (std::size_t(z - origin[2]) * dst_n + (y - origin[1])) * dst_n;
              for (int ox = 0; ox < 2; ++ox) {
                const int x = 2 * ci + ox;
                if (x < lo[0] || x >= hi[0]) continue;
                Real value = mid;
                if (linear) {
                  value += ox ? q[0] : -q[0];
                  value += oy ? q[1] : -q[1];
                  value += oz ? q[2] : -q[2];
                }
                row[x - origin[0]] = value;
              }
            }
          }
        }
  }
  if (box.admissible) enforce_admissible(box, lo, hi, dst, dst_n, origin);
}

namespace {

// The admissibility fallback of prolong_region: fine cells of a coarse cell with an
// inadmissible child take the coarse cell's values.
void enforce_admissible(const CoarseBox& box, std::array<int, 3> lo, std::array<int, 3> hi,
                        Real* dst, int dst_n, std::array<int, 3> origin) {
  const std::size_t n3 = std::size_t(dst_n) * dst_n * dst_n;
  int clo[3], chi[3];
  for (int d = 0; d < 3; ++d) clo[d] = floor_div(lo[d], 2), chi[d] = floor_div(hi[d] - 1, 2);
  const std::size_t box_n3 = std::size_t(box.n) * box.n * box.n;
  for (int ck = clo[2]; ck <= chi[2]; ++ck)
    for (int cj = clo[1]; cj <= chi[1]; ++cj)
      for (int ci = clo[0]; ci <= chi[0]; ++ci) {
        // The coarse cell's fine cells inside the region, as dst offsets.
        std::size_t cells[8];
        int count = 0;
        for (int oz = 0; oz < 2; ++oz)
          for (int oy = 0; oy < 2; ++oy)
            for (int ox = 0; ox < 2; ++ox) {
              const int x = 2 * ci + ox, y = 2 * cj + oy, z = 2 * ck + oz;
              if (x < lo[0] || x >= hi[0] || y < lo[1] || y >= hi[1] || z < lo[2] || z >= hi[2])
                continue;
              cells[count++] =
                  (std::size_t(z - origin[2]) * dst_n + (y - origin[1])) * dst_n + (x - origin[0]);
            }
        bool ok = true;
        for (int c = 0; c < count && ok; ++c) ok = (*box.admissible)(dst + cells[c], n3);
        if (ok) continue;
        const std::size_t m =
            ((std::size_t(ck - box.lo[2]) * box.n) + (cj - box.lo[1])) * box.n + (ci - box.lo[0]);
        for (int v = 0; v < box.nvar; ++v)
          for (int c = 0; c < count; ++c) dst[v * n3 + cells[c]] = box.data[v * box_n3 + m];
      }
}

}  // namespace

void prolong_family(Mesh& mesh, int first_child, CoarseBox& scratch) {
  const auto& child0 = mesh.patch(first_child);
  const auto& parent = mesh.patch(child0.parent);
  gather_box(mesh, parent.level, {parent.corner[0] - 1, parent.corner[1] - 1, parent.corner[2] - 1},
             kPatchSize + 2, 1.0, scratch);
  for (int c = 0; c < kFamilySize; ++c) {
    const auto corner = mesh.patch(first_child + c).corner;
    prolong_region(scratch, corner,
                   {corner[0] + kPatchSize, corner[1] + kPatchSize, corner[2] + kPatchSize},
                   mesh.current(first_child + c), kPatchSize, corner);
  }
}

namespace {

// Volume average of the 8 children's cells under parent cell (i, j, k) of variable v,
// for every restricted field v.
template <class F>
void for_each_restricted(const Mesh& mesh, int first_child, F&& f) {
  constexpr int h = kPatchSize / 2;
  const FieldRegistry& fields = mesh.fields();
  for (int c = 0; c < kFamilySize; ++c) {
    const Real* uc = mesh.current(first_child + c);
    const int ox = (c & 1) * h, oy = ((c >> 1) & 1) * h, oz = ((c >> 2) & 1) * h;
    for (int v = 0; v < mesh.nvar(); ++v) {
      if (!fields[v].restricted) continue;
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
}

}  // namespace

double max_restriction_mismatch(const Mesh& mesh, const std::function<bool(int)>& include) {
  std::vector<double> scale(mesh.nvar(), 0), diff(mesh.nvar(), 0);
  for (int p = 0; p < mesh.num_patches(); ++p) {
    if (include && !include(p)) continue;
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
