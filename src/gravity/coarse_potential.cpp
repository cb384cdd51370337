// The coarser level's potential as the refined levels' Poisson solves see it: the parent's
// box continued beyond non-periodic boundaries, its quadratic interpolation, and the
// groups' potential boxes with their ghost layers (coarse_potential.hpp, self_gravity.hpp).
#include <algorithm>
#include <array>
#include <cstddef>
#include <vector>

#include "coarse_potential.hpp"
#include "kernels/poisson_sor.hpp"
#include "tessera/core/error.hpp"
#include "tessera/exec/pipeline.hpp"
#include "tessera/gravity/self_gravity.hpp"
#include "tessera/mesh/prolongation.hpp"

namespace tessera::gravity {

namespace {
constexpr int kN = mesh::kPatchSize;
}  // namespace

namespace {

void continue_linearly(const mesh::Mesh& m, int level, mesh::CoarseBox& cb);

// Beyond a non-periodic domain boundary a refined level's ghost potential continues the
// coarser level's: the coarse box's cells outside the domain (which gather_box filled
// with the nearest inside value) become the linear continuation of the two inside cells
// along the normal, one axis after the other (edges and corners from the continued
// values), so that the unlimited-slope prolongation gives the ghost cells outside the same
// linear extrapolation along the normal (1.75 phi(0) - 0.75 phi(1) at -h/2) and second-order
// values along the face. Continued from the coarser level, not from the level's own
// interior, so that the Dirichlet problem stays well posed (its own values would make the
// boundary follow the solution: d^2 phi / dn^2 = 0 admits any linear potential).
void continue_beyond_boundary(const mesh::Mesh& m, int level, mesh::CoarseBox& cb,
                              const SelfGravity* root, double weight) {
  const auto cells = m.level_cells(level);
  const int n = cb.n;
  continue_linearly(m, level, cb);
  if (level != 0 || root == nullptr || root->periodic()) return;
  // Next to the root level the free-space potential just outside the domain is known: the
  // layer at distance 1 takes it, the layer at distance 2 continues it linearly, so that a
  // refined level touching the domain boundary is bounded by the potential of the whole
  // (corrected) mass, not by its own extrapolation.
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const int g[3] = {cb.lo[0] + i, cb.lo[1] + j, cb.lo[2] + k};
        bool outside = false, layer = true;
        for (int d = 0; d < 3; ++d) {
          const bool out = g[d] < 0 || g[d] >= cells[d];
          if (out && m.geometry().periodic(d)) layer = false;  // a periodic image: as it is
          if (out) outside = true;
          if (g[d] < -1 || g[d] > cells[d]) layer = false;
        }
        if (outside && layer) cb.at(0, i, j, k) = Real(root->exterior(g[0], g[1], g[2], weight));
      }
  for (int d = 0; d < 3; ++d) {
    if (m.geometry().periodic(d)) continue;
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
          int idx[3] = {i, j, k};
          const int q = cb.lo[d] + idx[d];
          if (q != -2 && q != cells[d] + 1) continue;
          const int step = q < 0 ? 1 : -1;  // inward
          int a1[3] = {i, j, k}, a0[3] = {i, j, k};
          a1[d] += step;
          a0[d] += 2 * step;
          if (a0[d] < 0 || a0[d] >= n) continue;
          cb.at(0, i, j, k) = 2 * cb.at(0, a1[0], a1[1], a1[2]) - cb.at(0, a0[0], a0[1], a0[2]);
        }
  }
}

void continue_linearly(const mesh::Mesh& m, int level, mesh::CoarseBox& cb) {
  const auto cells = m.level_cells(level);
  const int n = cb.n;
  for (int d = 0; d < 3; ++d) {
    if (m.geometry().periodic(d)) continue;
    const int below = std::clamp(-cb.lo[d], 0, n);            // box cells [0, below) outside
    const int above = std::clamp(cells[d] - cb.lo[d], 0, n);  // [above, n) outside
    if ((below == 0 && above == n) || above - below < 2) continue;
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
          int idx[3] = {i, j, k};
          const int q = idx[d];
          if (q >= below && q < above) continue;
          const int edge = q < below ? below : above - 1;  // the inside cell next to it
          const int step = q < below ? 1 : -1;             // inward
          int e0[3] = {i, j, k}, e1[3] = {i, j, k};
          e0[d] = edge;
          e1[d] = edge + step;
          const Real a = cb.at(0, e0[0], e0[1], e0[2]), b = cb.at(0, e1[0], e1[1], e1[2]);
          const int dist = q < below ? below - q : q - (above - 1);
          cb.at(0, i, j, k) = a + Real(dist) * (a - b);
        }
  }
}

}  // namespace

namespace detail {

// The potential of patch `parent` with two layers of ghost cells (12^3, at time `weight`),
// continued beyond non-periodic domain boundaries: what its children's ghost values are
// interpolated from.
void gather_parent_potential(const mesh::Mesh& m, int parent, double weight, int phi_field,
                             mesh::CoarseBox& cb, const SelfGravity* root) {
  const auto& meta = m.patch(parent);
  mesh::gather_box(m, meta.level, {meta.corner[0] - 2, meta.corner[1] - 2, meta.corner[2] - 2},
                   mesh::kPatchSize + 4, weight, cb, phi_field, 1);
  continue_beyond_boundary(m, meta.level, cb, root, weight);
}

// The potential of fine cell `fine` (level index) from the 3 x 3 x 3 coarse cells around
// its parent: tensor-product quadratic Lagrange interpolation, third order. The ghost
// values are the Dirichlet boundary of a refined level's solve, and an error there is an
// error of the solution next to it: linear interpolation (error (h/4)^2 phi''/2 per axis,
// plus the cross terms it drops) limits the refined level to the coarser level's accuracy
// near a steep potential (Schive et al. 2010 §2.3 interpolate quadratically for the same
// reason). The fine cell's centre is a quarter of a coarse cell from its parent's, on the
// side s = -1 or +1: weights (5/32, 15/16, -3/32) on (-s, 0, +s) reversed for s = -1.
Real interpolate_potential(const mesh::CoarseBox& cb, std::array<int, 3> fine) {
  int c[3];
  Real w[3][3];
  for (int d = 0; d < 3; ++d) {
    const int coarse = fine[d] >= 0 ? fine[d] / 2 : -((1 - fine[d]) / 2);
    const bool upper = fine[d] - 2 * coarse == 1;
    c[d] = coarse - cb.lo[d];
    w[d][0] = upper ? Real(-3) / 32 : Real(5) / 32;
    w[d][1] = Real(15) / 16;
    w[d][2] = upper ? Real(5) / 32 : Real(-3) / 32;
  }
  Real value = 0;
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 3; ++j) {
      Real row = 0;
      for (int i = 0; i < 3; ++i)
        row += w[0][i] * cb.at(0, c[0] + i - 1, c[1] + j - 1, c[2] + k - 1);
      value += w[1][j] * w[2][k] * row;
    }
  return value;
}

void interpolate_group_potential(const mesh::CoarseBox& cb, Real* out) {
  constexpr int g = 2 * kN;  // the group's edge
  const int n = cb.n;        // kN + 4: the parent patch and two ghost layers
  // Weights of fine index f (0 .. g-1) on coarse box cells f/2 + 1, + 2, + 3 (the parent
  // cell f/2 sits at box index f/2 + 2).
  auto w = [](int f, int i) {
    const bool upper = f & 1;
    if (i == 1) return Real(15) / 16;
    return (i == 0) == upper ? Real(-3) / 32 : Real(5) / 32;
  };
  thread_local std::vector<Real> ax, axy;
  ax.assign(std::size_t(n) * n * g, Real(0));   // [k][j][fine i]
  axy.assign(std::size_t(n) * g * g, Real(0));  // [k][fine j][fine i]
  for (int k = 1; k < n - 1; ++k)
    for (int j = 1; j < n - 1; ++j)
      for (int f = 0; f < g; ++f) {
        const int c = f / 2 + 1;
        Real v = 0;
        for (int i = 0; i < 3; ++i) v += w(f, i) * cb.at(0, c + i, j, k);
        ax[(std::size_t(k) * n + j) * g + f] = v;
      }
  for (int k = 1; k < n - 1; ++k)
    for (int f = 0; f < g; ++f) {
      const int c = f / 2 + 1;
      for (int fi = 0; fi < g; ++fi) {
        Real v = 0;
        for (int j = 0; j < 3; ++j) v += w(f, j) * ax[(std::size_t(k) * n + c + j) * g + fi];
        axy[(std::size_t(k) * g + f) * g + fi] = v;
      }
    }
  for (int f = 0; f < g; ++f) {
    const int c = f / 2 + 1;
    for (int fj = 0; fj < g; ++fj)
      for (int fi = 0; fi < g; ++fi) {
        Real v = 0;
        for (int k = 0; k < 3; ++k) v += w(f, k) * axy[(std::size_t(c + k) * g + fj) * g + fi];
        out[(f * g + fj) * g + fi] = v;
      }
  }
}

}  // namespace detail

void gather_potential(const mesh::Mesh& m, int phi_field, int first_patch, double weight, Real* rho,
                      Real* phi, bool coarse_ghosts, int source_field, const SelfGravity* root) {
  constexpr int n = kernels::kSorBox;
  constexpr std::size_t n3 = std::size_t(n) * n * n;
  const auto& base = m.patch(first_patch);
  if (base.level == 0) {
    // The root level (no coarser one): every field through the pipeline's gather.
    thread_local std::vector<Real> all;
    all.resize(n3 * m.nvar());
    exec::prepare_group(m, m.current_slot(0), first_patch, 1, all.data(), weight);
    if (rho) {
      std::copy_n(all.data(), n3, rho);
      if (source_field >= 0)
        for (std::size_t c = 0; c < n3; ++c) rho[c] += all[std::size_t(source_field) * n3 + c];
    }
    std::copy_n(all.data() + std::size_t(phi_field) * n3, n3, phi);
    return;
  }
  // Only the density's interior and the potential are read (a gather of every field, ghost
  // cells interpolated, took most of a refined level's SOR time on the GPU).
  const int slot = m.current_slot(base.level);
  const std::size_t phi_off = std::size_t(phi_field) * mesh::kPatchCells;
  for (int c = 0; c < mesh::kFamilySize; ++c) {
    const Real* u = m.data(slot, first_patch + c);
    const int ox = (c & 1) * kN, oy = ((c >> 1) & 1) * kN, oz = ((c >> 2) & 1) * kN;
    for (int k = 0; k < kN; ++k)
      for (int j = 0; j < kN; ++j) {
        const int b = ((k + oz + 1) * n + (j + oy + 1)) * n + (ox + 1);
        const int a = (k * kN + j) * kN;
        std::copy_n(u + phi_off + a, kN, phi + b);
        if (rho) std::copy_n(u + a, kN, rho + b);
        if (rho && source_field >= 0) {
          const Real* src = u + std::size_t(source_field) * mesh::kPatchCells + a;
          for (int i = 0; i < kN; ++i) rho[b + i] += src[i];
        }
      }
  }
  // The ghost layer. With coarse_ghosts all of it from the coarser level (the SOR's
  // Dirichlet boundary: siblings' faces included, since a sibling's potential is its
  // previous solve's, or nothing yet, and only the coarser level's current solution gives
  // every group of the level the same boundary data; Schive et al. 2010 §2.3: "the
  // ghost-zone values are filled by interpolation from the patches one level coarser");
  // else a same-level neighbour's value where there is one (the kicks, after the level's
  // solve). Coarse values: interpolated in space (quadratic) and in time at `weight`.
  thread_local mesh::CoarseBox cb;
  bool gathered = false;
  auto coarse = [&](std::array<int, 3> fine) {
    if (!gathered) {
      detail::gather_parent_potential(m, base.parent, weight, phi_field, cb, root);
      gathered = true;
    }
    return detail::interpolate_potential(cb, fine);
  };
  const auto& c0 = base.corner;
  const mesh::NeighbourTable::Row blocks = m.neighbours().row(first_patch);
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        if (i > 0 && j > 0 && k > 0 && i < n - 1 && j < n - 1 && k < n - 1) continue;
        const int box[3] = {i - 1, j - 1, k - 1};  // cell index relative to the group
        Real& out = phi[(k * n + j) * n + i];
        if (!coarse_ghosts) {
          // The patch block (-1 .. 2 per dimension) holding the cell, as prepare_group
          // finds it.
          int blk[3], local[3];
          for (int d = 0; d < 3; ++d) {
            blk[d] = box[d] < 0 ? -1 : box[d] / kN;
            local[d] = box[d] - blk[d] * kN;
          }
          const int src = blocks[mesh::group_block(blk[0], blk[1], blk[2])];
          if (src >= 0) {
            out = m.data(slot, src)[phi_off + (local[2] * kN + local[1]) * kN + local[0]];
            continue;
          }
        }
        out = coarse({c0[0] + box[0], c0[1] + box[1], c0[2] + box[2]});
      }
}

}  // namespace tessera::gravity
