// The potential correction (docs/architecture.md, "Self-gravity"; the cycle itself is
// Simulation::solve_gravity): the source field, the coarse level's source from the finer
// level's potential, and the prolongation of the coarse change.
#include <algorithm>
#include <vector>

#include "coarse_potential.hpp"
#include "kernels/group_layout.hpp"
#include "tessera/gravity/self_gravity.hpp"

namespace tessera::gravity {

namespace {
constexpr int kN = mesh::kPatchSize;
}  // namespace

mesh::FieldInfo correction_field() {
  mesh::FieldInfo f;
  f.name = kCorrectionField;
  f.time_levels = 1;
  f.flux_corrected = false;
  f.restricted = false;
  // New patches get no source: the regrid that makes them solves every level again.
  f.prolongation = mesh::Prolongation::kInjection;
  f.checkpointed = true;
  f.plotted = false;
  return f;
}

std::vector<Real> keep_potential(const mesh::Mesh& m, int level, int phi_field) {
  const std::size_t off = std::size_t(phi_field) * mesh::kPatchCells;
  const auto& groups = m.groups(level);
  std::vector<Real> kept(groups.size() * mesh::kFamilySize * mesh::kPatchCells);
#pragma omp parallel for schedule(static)
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (int c = 0; c < mesh::kFamilySize; ++c)
      std::copy_n(m.current(groups[g] + c) + off, mesh::kPatchCells,
                  kept.data() + (g * mesh::kFamilySize + c) * mesh::kPatchCells);
  return kept;
}

void prolong_correction(mesh::Mesh& m, int level, int phi_field, const std::vector<Real>& kept) {
  const int coarse = level - 1;
  const std::size_t off = std::size_t(phi_field) * mesh::kPatchCells;
  const int cur = m.current_slot(coarse), other = m.next_slot(coarse);
  constexpr int half = kN / 2;
  // The coarse change, into the coarser level's other slot (gather_box reads it at w = 0).
  const auto& coarse_groups = m.groups(coarse);
#pragma omp parallel for schedule(static)
  for (std::size_t g = 0; g < coarse_groups.size(); ++g)
    for (int c = 0; c < mesh::kFamilySize; ++c) {
      const int p = coarse_groups[g] + c;
      const Real* now = m.data(cur, p) + off;
      const Real* before_all = kept.data() + (g * mesh::kFamilySize + c) * mesh::kPatchCells;
      Real* change = m.data(other, p) + off;
      const int first_child = m.patch(p).first_child;
      for (int k = 0; k < kN; ++k)
        for (int j = 0; j < kN; ++j)
          for (int i = 0; i < kN; ++i) {
            const int a = (k * kN + j) * kN + i;
            double before = before_all[a];
            if (first_child != mesh::kNoPatch) {
              const Real* f =
                  m.current(first_child + (i / half) + 2 * (j / half) + 4 * (k / half)) + off;
              const int fi = 2 * (i % half), fj = 2 * (j % half), fk = 2 * (k % half);
              double sum = 0;
              for (int q = 0; q < 8; ++q)
                sum += f[((fk + (q >> 2)) * kN + fj + ((q >> 1) & 1)) * kN + fi + (q & 1)];
              before = sum / 8;
            }
            change[a] = Real(double(now[a]) - before);
          }
    }
  const auto& groups = m.groups(level);
#pragma omp parallel for schedule(dynamic, 4)
  for (std::size_t g = 0; g < groups.size(); ++g) {
    thread_local mesh::CoarseBox cb;
    const int first = groups[g];
    thread_local std::vector<Real> change(kernels::kGroupCells);
    detail::gather_parent_potential(m, m.patch(first).parent, 0.0, phi_field, cb, nullptr);
    detail::interpolate_group_potential(cb, change.data());
    for (int c = 0; c < mesh::kFamilySize; ++c) {
      Real* phi = m.current(first + c) + off;
      const int ox = (c & 1) * kN, oy = ((c >> 1) & 1) * kN, oz = ((c >> 2) & 1) * kN;
      for (int k = 0; k < kN; ++k)
        for (int j = 0; j < kN; ++j)
          for (int i = 0; i < kN; ++i)
            phi[(k * kN + j) * kN + i] += change[((k + oz) * 2 * kN + j + oy) * 2 * kN + i + ox];
    }
  }
}

void clear_correction(mesh::Mesh& m, int source_field) {
  for (int level = 0; level < m.num_levels(); ++level) {
    const auto& groups = m.groups(level);
#pragma omp parallel for schedule(static)
    for (std::size_t g = 0; g < groups.size(); ++g)
      for (int c = 0; c < mesh::kFamilySize; ++c)
        for (int slot = 0; slot < 2; ++slot)
          std::fill_n(m.data(slot, groups[g] + c) + std::size_t(source_field) * mesh::kPatchCells,
                      mesh::kPatchCells, Real(0));
  }
}

void correction_source(mesh::Mesh& m, int level, int phi_field, int source_field, double four_pi_g,
                       const SelfGravity* root) {
  const std::size_t phi_off = std::size_t(phi_field) * mesh::kPatchCells;
  const std::size_t src_off = std::size_t(source_field) * mesh::kPatchCells;
  // d = R(phi_fine) - phi on every covered patch (a patch with children is covered whole).
  std::vector<int> covered;
  for (const int first : m.groups(level))
    for (int c = 0; c < mesh::kFamilySize; ++c)
      if (!m.patch(first + c).is_leaf()) covered.push_back(first + c);
  std::vector<int> slot_of(m.num_patches(), -1);
  for (std::size_t i = 0; i < covered.size(); ++i) slot_of[covered[i]] = static_cast<int>(i);
  std::vector<double> d(covered.size() * mesh::kPatchCells);
  constexpr int half = kN / 2;
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < covered.size(); ++i) {
    const int p = covered[i];
    const Real* phi = m.current(p) + phi_off;
    double* out = d.data() + i * mesh::kPatchCells;
    for (int k = 0; k < kN; ++k)
      for (int j = 0; j < kN; ++j)
        for (int ii = 0; ii < kN; ++ii) {
          const int child = m.patch(p).first_child + (ii / half) + 2 * (j / half) + 4 * (k / half);
          const Real* f = m.current(child) + phi_off;
          const int fi = 2 * (ii % half), fj = 2 * (j % half), fk = 2 * (k % half);
          double sum = 0;
          for (int c = 0; c < 8; ++c)
            sum += f[((fk + (c >> 2)) * kN + fj + ((c >> 1) & 1)) * kN + fi + (c & 1)];
          out[(k * kN + j) * kN + ii] = sum / 8 - double(phi[(k * kN + j) * kN + ii]);
        }
  }
  // The finer level's residual 4 pi G (rho + source) - laplacian(phi), restricted (the mean
  // of the eight finer cells), with the ghost values the finer level's solves use (its
  // same-level neighbours', else the interpolated coarse ones): the full-approximation
  // scheme's coarse equation carries it, so that a finer level that is only smoothed, not
  // solved, still has its remaining error corrected from the coarse level.
  std::vector<double> rr(d.size(), 0.0);
  const double mean = root ? root->mean_density() : 0.0;  // periodic: the Jeans swindle's
  const double hf = m.dx(level + 1);
  const auto& fine_groups = m.groups(level + 1);
#pragma omp parallel for schedule(dynamic, 4)
  for (std::size_t g = 0; g < fine_groups.size(); ++g) {
    constexpr int n = kernels::kSorBox;
    thread_local std::vector<Real> rho, box;
    rho.resize(kernels::box_cells(1));
    box.resize(kernels::box_cells(1));
    gather_potential(m, phi_field, fine_groups[g], 1.0, rho.data(), box.data(), false, source_field,
                     root);
    double* out =
        rr.data() + std::size_t(slot_of[m.patch(fine_groups[g]).parent]) * mesh::kPatchCells;
    for (int k = 0; k < 2 * kN; ++k)
      for (int j = 0; j < 2 * kN; ++j)
        for (int i = 0; i < 2 * kN; ++i) {
          const int b = ((k + 1) * n + (j + 1)) * n + (i + 1);
          const double lap = double(box[b - 1]) + box[b + 1] + box[b - n] + box[b + n] +
                             box[b - n * n] + box[b + n * n] - 6.0 * box[b];
          out[((k / 2) * kN + j / 2) * kN + i / 2] +=
              (four_pi_g * (rho[b] - mean) - lap / (hf * hf)) / 8;
        }
  }
  const double h = m.dx(level);
  // The finer level's gradient toward covered patch p through its face along `ax`, seen
  // from the cell beyond it on side -side (side = +1: p's low face), at face cell (t1, t2)
  // of p: the mean over the four fine faces of (inside - ghost) / hf, the ghost values
  // interpolated from cb (the potential around p) as the finer level's solve has them.
  auto fine_gradient = [&](int p, int ax, int side, int t1, int t2, const mesh::CoarseBox& cb) {
    const auto& pc = m.patch(p).corner;
    const int f_in = side > 0 ? 2 * pc[ax] : 2 * pc[ax] + 2 * kN - 1;
    const int a1 = (ax + 1) % 3, a2 = (ax + 2) % 3;
    double fine = 0;
    for (int s2 = 0; s2 < 2; ++s2)
      for (int s1 = 0; s1 < 2; ++s1) {
        std::array<int, 3> f;
        f[a1] = 2 * (pc[a1] + t1) + s1;
        f[a2] = 2 * (pc[a2] + t2) + s2;
        f[ax] = f_in;
        int local[3], child = m.patch(p).first_child;
        for (int a = 0; a < 3; ++a) {
          const int l = f[a] - 2 * pc[a];
          child += (l / kN) << a;
          local[a] = l % kN;
        }
        const double in = m.current(child)[phi_off + (local[2] * kN + local[1]) * kN + local[0]];
        f[ax] = f_in - side;
        fine += in - double(detail::interpolate_potential(cb, f));
      }
    return fine / (4 * hf);
  };
  // The source on the covered cells: with psi = R(phi_fine) there and phi elsewhere, the
  // coarse equation laplacian(psi) = 4 pi G (rho + source - mean) - R(residual), i.e.
  // source = (laplacian(phi) + laplacian(d) + R(residual)) / (4 pi G) - rho + mean
  // (laplacian(phi) with the ghost values of its own solve); zero on the leaves before their
  // flux terms.
  const double scale = 1.0 / (four_pi_g * m.dx(level) * m.dx(level));  // covered cells
  const auto& groups = m.groups(level);
  const mesh::NeighbourTable& table = m.neighbours();
#pragma omp parallel for schedule(static)
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (int c = 0; c < mesh::kFamilySize; ++c) {
      const int p = groups[g] + c;
      Real* src = m.current(p) + src_off;
      if (slot_of[p] < 0) continue;
      thread_local mesh::CoarseBox own_phi;
      detail::gather_parent_potential(m, p, 1.0, phi_field, own_phi, root);
      const double* rp = rr.data() + std::size_t(slot_of[p]) * mesh::kPatchCells;
      const Real* rho_p = m.current(p);
      const double* own = d.data() + std::size_t(slot_of[p]) * mesh::kPatchCells;
      // d at (i, j, k) of the patch, which may lie in a face neighbour: zero where that is a
      // leaf, or beyond the domain.
      auto at = [&](int i, int j, int k) -> double {
        int off[3] = {0, 0, 0}, idx[3] = {i, j, k};
        for (int a = 0; a < 3; ++a)
          if (idx[a] < 0)
            off[a] = -1, idx[a] += kN;
          else if (idx[a] >= kN)
            off[a] = 1, idx[a] -= kN;
        if (off[0] == 0 && off[1] == 0 && off[2] == 0) return own[(k * kN + j) * kN + i];
        const int nb = table.neighbour(p, off[0], off[1], off[2]);
        if (nb < 0)  // beyond the domain: no gradient of d across the boundary
          return own[(std::clamp(k, 0, kN - 1) * kN + std::clamp(j, 0, kN - 1)) * kN +
                     std::clamp(i, 0, kN - 1)];
        if (slot_of[nb] < 0) return 0.0;
        return d[std::size_t(slot_of[nb]) * mesh::kPatchCells + (idx[2] * kN + idx[1]) * kN +
                 idx[0]];
      };
      // own_phi's box starts two cells before the patch.
      auto phi_at = [&](int i, int j, int k) { return double(own_phi.at(0, i + 2, j + 2, k + 2)); };
      for (int k = 0; k < kN; ++k)
        for (int j = 0; j < kN; ++j)
          for (int i = 0; i < kN; ++i) {
            const double lap = at(i - 1, j, k) + at(i + 1, j, k) + at(i, j - 1, k) +
                               at(i, j + 1, k) + at(i, j, k - 1) + at(i, j, k + 1) -
                               6 * own[(k * kN + j) * kN + i];
            const double lap_phi = phi_at(i - 1, j, k) + phi_at(i + 1, j, k) + phi_at(i, j - 1, k) +
                                   phi_at(i, j + 1, k) + phi_at(i, j, k - 1) + phi_at(i, j, k + 1) -
                                   6 * phi_at(i, j, k);
            const int a = (k * kN + j) * kN + i;
            src[a] = Real((lap + lap_phi) * scale + rp[a] / four_pi_g - double(rho_p[a]) + mean);
          }
      // On a domain face the composite flux is the finer level's too (its difference
      // between the inside cells and the ghost values its solve has there, from the coarse
      // exterior potential): the face's term phi(ghost) - phi of the covered cell gives way
      // to h times the fine gradient outward. Without it a level covering the domain's face
      // and its coarser level would hold different masses (the outward fluxes' sums), and
      // every cycle would shift the whole potential.
      for (int ax = 0; ax < 3; ++ax)
        for (int side = -1; side <= 1; side += 2) {
          int off[3] = {0, 0, 0};
          off[ax] = side;
          if (table.neighbour(p, off[0], off[1], off[2]) >= 0) continue;
          const int q = side < 0 ? 0 : kN - 1;  // the covered cells on that face
          for (int t2 = 0; t2 < kN; ++t2)
            for (int t1 = 0; t1 < kN; ++t1) {
              int idx[3];
              idx[ax] = q;
              idx[(ax + 1) % 3] = t1;
              idx[(ax + 2) % 3] = t2;
              int out[3] = {idx[0], idx[1], idx[2]};
              out[ax] += side;
              const double coarse = phi_at(out[0], out[1], out[2]) - phi_at(idx[0], idx[1], idx[2]);
              // fine_gradient's side: +1 for the patch's low face, seen from beyond it.
              const double fine = -h * fine_gradient(p, ax, -side, t1, t2, own_phi);
              src[(idx[2] * kN + idx[1]) * kN + idx[0]] += Real((fine - coarse) * scale);
            }
        }
    }
  // Flux matching on the leaves next to a covered patch: in the composite problem the
  // gradient through a coarse-fine face is the finer level's (its four faces' mean, from
  // the cells inside and the ghost values its solve used), not the coarse difference
  // across it. The leaf cell's equation changes by (coarse - fine gradient) / h, with the
  // covered side at R(phi_fine); summed with the covered cells' source this makes the
  // total source vanish (the discrete Gauss law of the finer level: both levels hold the
  // same mass), so the correction adds no mass of its own (Schive et al. 2010 §2.3).
  // The face cell (t1, t2) on layer q along ax, as a patch index.
  auto face_cell = [](int ax, int q, int t1, int t2) {
    int idx[3];
    idx[ax] = q;
    idx[(ax + 1) % 3] = t1;
    idx[(ax + 2) % 3] = t2;
    return (idx[2] * kN + idx[1]) * kN + idx[0];
  };
#pragma omp parallel for schedule(dynamic, 4)
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (int c = 0; c < mesh::kFamilySize; ++c) {
      const int u = groups[g] + c;
      if (slot_of[u] >= 0) continue;
      Real* src = m.current(u) + src_off;
      const Real* phi_u = m.current(u) + phi_off;
      std::fill_n(src, mesh::kPatchCells, Real(0));
      thread_local mesh::CoarseBox cb;
      for (int ax = 0; ax < 3; ++ax)
        for (int side = -1; side <= 1; side += 2) {
          int off[3] = {0, 0, 0};
          off[ax] = side;
          const int p = table.neighbour(u, off[0], off[1], off[2]);
          if (p < 0 || slot_of[p] < 0) continue;
          detail::gather_parent_potential(m, p, 1.0, phi_field, cb, root);
          const double* dp = d.data() + std::size_t(slot_of[p]) * mesh::kPatchCells;
          const Real* phi_p = m.current(p) + phi_off;
          // u's cells at q_u along ax face p's at q_p.
          const int q_u = side > 0 ? kN - 1 : 0, q_p = side > 0 ? 0 : kN - 1;
          for (int t2 = 0; t2 < kN; ++t2)
            for (int t1 = 0; t1 < kN; ++t1) {
              const int cu = face_cell(ax, q_u, t1, t2), cp = face_cell(ax, q_p, t1, t2);
              const double fine = fine_gradient(p, ax, side, t1, t2, cb);
              const double coarse = (double(phi_p[cp]) + dp[cp] - double(phi_u[cu])) / h;
              src[cu] += Real((coarse - fine) / h / four_pi_g);
            }
        }
    }
}

}  // namespace tessera::gravity
