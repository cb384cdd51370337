// The potential correction's stencils on one patch (internal to src/gravity): the coarse
// level's source from the finer level's terms (gravity::correction_source and its twin
// from the tables, correction_source_tables) and the finer level's restricted residual
// (fine_terms and fine_terms_tables). The twins differ only in where the potential boxes
// come from; sharing the arithmetic keeps their bits equal (tests/unit/
// test_potential_gather.cpp compares them) and the device kernels' reference one.
#pragma once

#include <algorithm>
#include <cstddef>

#include "kernels/poisson_sor.hpp"
#include "tessera/core/real.hpp"
#include "tessera/gravity/self_gravity.hpp"
#include "tessera/mesh/mesh.hpp"

namespace tessera::gravity::detail {

// What the source of one patch of `level` reads: the level's potential, the finer level's
// terms of its covered patches, and the constants of the coarse equation.
struct SourceStencil {
  SourceStencil(mesh::Mesh& mesh, int level, const CorrectionTerms& t, int phi_field,
                int source_field, double four_pi_g_, double mean_)
      : m(mesh),
        terms(t),
        phi_off(std::size_t(phi_field) * mesh::kPatchCells),
        src_off(std::size_t(source_field) * mesh::kPatchCells),
        h(mesh.dx(level)),
        four_pi_g(four_pi_g_),
        mean(mean_) {}

  mesh::Mesh& m;
  const CorrectionTerms& terms;
  std::size_t phi_off, src_off;
  double h, four_pi_g, mean;

  static constexpr int kN = mesh::kPatchSize;
  static int face_cell(int ax, int q, int t1, int t2) {
    int idx[3];
    idx[ax] = q;
    idx[(ax + 1) % 3] = t1;
    idx[(ax + 2) % 3] = t2;
    return (idx[2] * kN + idx[1]) * kN + idx[0];
  }
  // d = R(phi_fine) - phi on covered patch p's cell a.
  double d_of(int p, int a) const {
    return terms.at(p)[CorrectionTerms::kRestricted + a] -
           double(m.current(p)[phi_off + std::size_t(a)]);
  }
  // The finer level's gradient through covered patch p's face along ax (low: its low face).
  const double* gradient(int p, int ax, bool low) const {
    return terms.at(p) + CorrectionTerms::kGradient +
           CorrectionTerms::face(ax, low) * CorrectionTerms::kFaceCells;
  }

  // The source on covered patch p: with psi = R(phi_fine) there and phi elsewhere, the
  // coarse equation laplacian(psi) = 4 pi G (rho + source - mean) - R(residual), i.e.
  // source = (laplacian(phi) + laplacian(d) + R(residual)) / (4 pi G) - rho + mean, with
  // laplacian(phi) from phi_at(i, j, k) (p's potential and the ghost values of its own
  // solve, i, j, k in -2 .. 9). On a domain face the composite flux is the finer level's
  // too (its difference between the inside cells and the ghost values its solve has there,
  // from the coarse exterior potential): the face's term phi(ghost) - phi of the covered
  // cell gives way to h times the fine gradient outward. Without it a level covering the
  // domain's face and its coarser level would hold different masses (the outward fluxes'
  // sums), and every cycle would shift the whole potential.
  template <class Covered, class PhiAt>
  void covered_source(int p, const Covered& covered, const PhiAt& phi_at) const {
    const mesh::NeighbourTable& table = m.neighbours();
    const double scale = 1.0 / (four_pi_g * h * h);
    Real* src = m.current(p) + src_off;
    const double* rp = terms.at(p) + CorrectionTerms::kResidual;
    const Real* rho_p = m.current(p);
    // d at (i, j, k) of the patch, which may lie in a face neighbour: zero where that is a
    // leaf; beyond the domain the patch's own nearest value (no gradient of d across it).
    const auto at = [&](int i, int j, int k) -> double {
      int off[3] = {0, 0, 0}, idx[3] = {i, j, k};
      for (int a = 0; a < 3; ++a)
        if (idx[a] < 0)
          off[a] = -1, idx[a] += kN;
        else if (idx[a] >= kN)
          off[a] = 1, idx[a] -= kN;
      if (off[0] == 0 && off[1] == 0 && off[2] == 0) return d_of(p, (k * kN + j) * kN + i);
      const int nb = table.neighbour(p, off[0], off[1], off[2]);
      if (nb < 0)
        return d_of(p, (std::clamp(k, 0, kN - 1) * kN + std::clamp(j, 0, kN - 1)) * kN +
                           std::clamp(i, 0, kN - 1));
      if (!covered(nb)) return 0.0;
      return d_of(nb, (idx[2] * kN + idx[1]) * kN + idx[0]);
    };
    for (int k = 0; k < kN; ++k)
      for (int j = 0; j < kN; ++j)
        for (int i = 0; i < kN; ++i) {
          const double lap = at(i - 1, j, k) + at(i + 1, j, k) + at(i, j - 1, k) + at(i, j + 1, k) +
                             at(i, j, k - 1) + at(i, j, k + 1) - 6 * d_of(p, (k * kN + j) * kN + i);
          const double lap_phi = phi_at(i - 1, j, k) + phi_at(i + 1, j, k) + phi_at(i, j - 1, k) +
                                 phi_at(i, j + 1, k) + phi_at(i, j, k - 1) + phi_at(i, j, k + 1) -
                                 6 * phi_at(i, j, k);
          const int a = (k * kN + j) * kN + i;
          src[a] = Real((lap + lap_phi) * scale + rp[a] / four_pi_g - double(rho_p[a]) + mean);
        }
    for (int ax = 0; ax < 3; ++ax)
      for (int side = -1; side <= 1; side += 2) {
        int off[3] = {0, 0, 0};
        off[ax] = side;
        if (table.neighbour(p, off[0], off[1], off[2]) >= 0) continue;
        const int q = side < 0 ? 0 : kN - 1;  // the covered cells on that face
        const double* fine_gradient = gradient(p, ax, side < 0);
        for (int t2 = 0; t2 < kN; ++t2)
          for (int t1 = 0; t1 < kN; ++t1) {
            int idx[3];
            idx[ax] = q;
            idx[(ax + 1) % 3] = t1;
            idx[(ax + 2) % 3] = t2;
            int beyond[3] = {idx[0], idx[1], idx[2]};
            beyond[ax] += side;
            const double coarse =
                phi_at(beyond[0], beyond[1], beyond[2]) - phi_at(idx[0], idx[1], idx[2]);
            const double fine = -h * fine_gradient[t2 * kN + t1];
            src[(idx[2] * kN + idx[1]) * kN + idx[0]] += Real((fine - coarse) * scale);
          }
      }
  }

  // Flux matching on leaf u: zero, plus for each face toward a covered patch (coarse
  // difference across it with the covered side at R(phi_fine) - the finer level's gradient
  // through it) / (4 pi G h). In the composite problem the gradient through a coarse-fine
  // face is the finer level's (its four faces' mean, from the cells inside and the ghost
  // values its solve used); summed with the covered cells' source this makes the total
  // source vanish (the discrete Gauss law of the finer level: both levels hold the same
  // mass), so the correction adds no mass of its own (Schive et al. 2010 §2.3).
  template <class Covered>
  void leaf_source(int u, const Covered& covered) const {
    const mesh::NeighbourTable& table = m.neighbours();
    Real* src = m.current(u) + src_off;
    const Real* phi_u = m.current(u) + phi_off;
    std::fill_n(src, mesh::kPatchCells, Real(0));
    for (int ax = 0; ax < 3; ++ax)
      for (int side = -1; side <= 1; side += 2) {
        int off[3] = {0, 0, 0};
        off[ax] = side;
        const int p = table.neighbour(u, off[0], off[1], off[2]);
        if (p < 0 || !covered(p)) continue;
        // u's cells at q_u along ax face p's at q_p; the face is p's low one when p lies
        // above u.
        const int q_u = side > 0 ? kN - 1 : 0, q_p = side > 0 ? 0 : kN - 1;
        const double* fine_gradient = gradient(p, ax, side > 0);
        const Real* phi_p = m.current(p) + phi_off;
        for (int t2 = 0; t2 < kN; ++t2)
          for (int t1 = 0; t1 < kN; ++t1) {
            const int cu = face_cell(ax, q_u, t1, t2), cp = face_cell(ax, q_p, t1, t2);
            const double fine = fine_gradient[t2 * kN + t1];
            const double coarse = (double(phi_p[cp]) + d_of(p, cp) - double(phi_u[cu])) / h;
            src[cu] += Real((coarse - fine) / h / four_pi_g);
          }
      }
  }
};

// The finer level's residual 4 pi G (rho - mean) - laplacian(phi) of one group, restricted
// onto its parent's cells (each the mean of its eight): from the group's SOR boxes `rho` and
// `box` (kernels::kSorBox per axis, one ghost layer; rho holding the source added) at cell
// spacing hf, each parent cell's eight contributions added in the group's cell order.
inline void restricted_residual(const Real* rho, const Real* box, double four_pi_g, double mean,
                                double hf, double* residual) {
  constexpr int kN = mesh::kPatchSize, n = kernels::kSorBox;
  std::fill_n(residual, mesh::kPatchCells, 0.0);
  for (int k = 0; k < 2 * kN; ++k)
    for (int j = 0; j < 2 * kN; ++j)
      for (int i = 0; i < 2 * kN; ++i) {
        const int b = ((k + 1) * n + (j + 1)) * n + (i + 1);
        const double lap = double(box[b - 1]) + box[b + 1] + box[b - n] + box[b + n] +
                           box[b - n * n] + box[b + n * n] - 6.0 * box[b];
        residual[((k / 2) * kN + j / 2) * kN + i / 2] +=
            (four_pi_g * (rho[b] - mean) - lap / (hf * hf)) / 8;
      }
}

}  // namespace tessera::gravity::detail
