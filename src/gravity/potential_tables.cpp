#include "src/gravity/potential_tables.hpp"

#include <algorithm>

#include "correction_stencil.hpp"
#include "kernels/poisson_sor.hpp"
#include "tessera/core/error.hpp"
#include "tessera/exec/resident.hpp"
#include "tessera/gravity/self_gravity.hpp"

namespace tessera::gravity {

namespace {
constexpr int kN = mesh::kPatchSize;
constexpr int kBox = kernels::kPotentialBox;
}  // namespace

PotentialTables build_potential_tables(const mesh::Mesh& m, int level,
                                       const std::vector<int>* groups, const SelfGravity* root) {
  if (level < 1 || level >= m.num_levels())
    throw Error(ErrorKind::kInternal, "potential tables of a level without a coarser one");
  PotentialTables t;
  t.level = level;
  t.first_patch = groups ? *groups : m.groups(level);
  const exec::ProlongTable p = exec::build_prolong_table(m, t.first_patch);
  t.coarse = p.coarse;
  t.clamp = p.clamp;
  const auto cells = m.level_cells(level - 1);
  for (const int first : t.first_patch) {
    const mesh::NeighbourTable::Row row = m.neighbours().row(first);
    t.blocks.insert(t.blocks.end(), row.begin(), row.end());
    const auto parent = m.patch(m.patch(first).parent);
    kernels::PotentialBoxPlace place{};
    for (int d = 0; d < 3; ++d) {
      place.corner[d] = parent.corner[d];
      place.cells[d] = static_cast<int>(cells[d]);
      place.periodic[d] = m.geometry().periodic(d);
    }
    t.place.push_back(place);
    unsigned char faces = 0;
    const int parent_patch = m.patch(first).parent;
    for (int ax = 0; ax < 3; ++ax)
      for (int side = 0; side < 2; ++side) {
        int off[3] = {0, 0, 0};
        off[ax] = side == 0 ? -1 : 1;
        const int nb = m.neighbours().neighbour(parent_patch, off[0], off[1], off[2]);
        if (nb < 0 || m.patch(nb).is_leaf()) faces |= 1u << (2 * ax + side);
      }
    t.gradient_faces.push_back(faces);
  }
  t.root_exterior = level == 1 && root && !root->periodic();
  return t;
}

void parent_potential_box(const mesh::Mesh& m, const PotentialTables& t, int g, int phi_field,
                          double weight, Real* box, const SelfGravity* root) {
  const int coarse_level = t.level - 1;
  const int now = m.current_slot(coarse_level), before = m.next_slot(coarse_level);
  const std::size_t off = std::size_t(phi_field) * mesh::kPatchCells;
  // mesh::gather_box's time interpolation of a two-level field.
  const Real wn = Real(weight), wo = Real(1 - weight);
  const auto value = [&](int patch, int cell) {
    const Real a = m.data(now, patch)[off + cell];
    if (weight == 1) return a;
    const Real b = m.data(before, patch)[off + cell];
    return weight == 0 ? b : wo * b + wn * a;
  };
  const int* coarse = t.coarse.data() + std::size_t(g) * kernels::kCoarseBlocks;
  const int* clamp = t.clamp.data() + std::size_t(g) * kernels::kCoarseClamp;
  const kernels::PotentialBoxPlace& place = t.place[g];
  const auto each = [&](auto&& f) {
    for (int k = 0; k < kBox; ++k)
      for (int j = 0; j < kBox; ++j)
        for (int i = 0; i < kBox; ++i) f(i, j, k);
  };
  each([&](int i, int j, int k) {
    box[kernels::potential_box_index(i, j, k)] =
        kernels::potential_box_cell(value, coarse, clamp, i, j, k);
  });
  for (int d = 0; d < 3; ++d)
    each([&](int i, int j, int k) { kernels::continue_potential_cell(box, place, d, i, j, k); });
  if (!t.root_exterior) return;
  const auto exterior = [&](int i, int j, int k) { return root->exterior(i, j, k, weight); };
  each([&](int i, int j, int k) {
    kernels::exterior_potential_cell(box, place, exterior, i, j, k);
  });
  for (int d = 0; d < 3; ++d)
    each([&](int i, int j, int k) { kernels::continue_exterior_cell(box, place, d, i, j, k); });
}

void gather_potential_tables(const mesh::Mesh& m, const PotentialTables& t, int g, int phi_field,
                             double weight, Real* rho, Real* phi, bool coarse_ghosts,
                             int source_field, const SelfGravity* root) {
  constexpr int n = kernels::kSorBox;
  const int first = t.first_patch[g];
  const int slot = m.current_slot(t.level);
  const std::size_t phi_off = std::size_t(phi_field) * mesh::kPatchCells;
  for (int c = 0; c < mesh::kFamilySize; ++c) {
    const Real* u = m.data(slot, first + c);
    const int o[3] = {(c & 1) * kN, ((c >> 1) & 1) * kN, ((c >> 2) & 1) * kN};
    for (int a = 0; a < mesh::kPatchCells; ++a) {
      const int i = a % kN, j = (a / kN) % kN, k = a / (kN * kN);
      const int b = ((k + o[2] + 1) * n + (j + o[1] + 1)) * n + (i + o[0] + 1);
      phi[b] = u[phi_off + a];
      if (rho)
        rho[b] =
            source_field >= 0 ? u[a] + u[std::size_t(source_field) * mesh::kPatchCells + a] : u[a];
    }
  }
  thread_local std::vector<Real> box;
  bool made = false;
  const int* blocks = t.blocks.data() + std::size_t(g) * kernels::kGatherBlocks;
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        if (i > 0 && j > 0 && k > 0 && i < n - 1 && j < n - 1 && k < n - 1) continue;
        const int b[3] = {i - 1, j - 1, k - 1};  // relative to the group's first cell
        Real& out = phi[(k * n + j) * n + i];
        if (!coarse_ghosts) {
          int blk[3], local[3];
          for (int d = 0; d < 3; ++d) {
            blk[d] = b[d] < 0 ? -1 : b[d] / kN;
            local[d] = b[d] - blk[d] * kN;
          }
          const int src = blocks[mesh::group_block(blk[0], blk[1], blk[2])];
          if (src >= 0) {
            out = m.data(slot, src)[phi_off + (local[2] * kN + local[1]) * kN + local[0]];
            continue;
          }
        }
        if (!made) {
          box.resize(kernels::kPotentialBoxCells);
          parent_potential_box(m, t, g, phi_field, weight, box.data(), root);
          made = true;
        }
        out = kernels::interpolate_potential_cell(box.data(), b);
      }
}

void add_coarse_change_tables(mesh::Mesh& m, const PotentialTables& t, int g, int phi_field) {
  if (t.root_exterior)
    throw Error(ErrorKind::kInternal, "the coarse change's tables are made without the root");
  thread_local std::vector<Real> box;
  box.resize(kernels::kPotentialBoxCells);
  parent_potential_box(m, t, g, phi_field, 0.0, box.data(), nullptr);
  const std::size_t off = std::size_t(phi_field) * mesh::kPatchCells;
  const int first = t.first_patch[g];
  for (int c = 0; c < mesh::kFamilySize; ++c) {
    Real* phi = m.current(first + c) + off;
    for (int a = 0; a < mesh::kPatchCells; ++a) {
      const int f[3] = {a % kN + (c & 1) * kN, (a / kN) % kN + ((c >> 1) & 1) * kN,
                        a / (kN * kN) + ((c >> 2) & 1) * kN};
      phi[a] += kernels::interpolate_group_cell(box.data(), f);
    }
  }
}

void fine_terms_tables(const mesh::Mesh& m, const PotentialTables& t, int g, int phi_field,
                       int source_field, double four_pi_g, double mean, const SelfGravity* root,
                       double* terms) {
  const std::size_t phi_off = std::size_t(phi_field) * mesh::kPatchCells;
  const int first = t.first_patch[g];
  const int slot = m.current_slot(t.level);
  const double hf = m.dx(t.level);
  // The potential of the group's cell (x, y, z), 0 .. 15 per axis.
  const auto fine_phi = [&](int x, int y, int z) {
    const int child = (x / kN) + 2 * (y / kN) + 4 * (z / kN);
    return m.data(slot, first + child)[phi_off + ((z % kN) * kN + (y % kN)) * kN + x % kN];
  };
  // R(phi_fine): the eight finer cells of each parent cell, in fine_terms' order.
  for (int k = 0; k < kN; ++k)
    for (int j = 0; j < kN; ++j)
      for (int i = 0; i < kN; ++i) {
        double sum = 0;
        for (int c = 0; c < 8; ++c)
          sum += fine_phi(2 * i + (c & 1), 2 * j + ((c >> 1) & 1), 2 * k + (c >> 2));
        terms[CorrectionTerms::kRestricted + (k * kN + j) * kN + i] = sum / 8;
      }
  // The finer level's residual, restricted: its boxes with the same-level neighbours'
  // ghost values, each parent cell's eight contributions added in the group's cell order.
  thread_local std::vector<Real> rho, box;
  rho.resize(kernels::box_cells(1));
  box.resize(kernels::box_cells(1));
  gather_potential_tables(m, t, g, phi_field, 1.0, rho.data(), box.data(), false, source_field,
                          root);
  detail::restricted_residual(rho.data(), box.data(), four_pi_g, mean, hf,
                              terms + CorrectionTerms::kResidual);
  // The gradients through the parent's faces toward leaves and the domain's boundary: the
  // fine cell inside less the ghost value interpolated from the parent's box (weight 1).
  const unsigned faces = t.gradient_faces[g];
  if (!faces) return;
  thread_local std::vector<Real> parent;
  parent.resize(kernels::kPotentialBoxCells);
  parent_potential_box(m, t, g, phi_field, 1.0, parent.data(), root);
  for (int ax = 0; ax < 3; ++ax)
    for (const bool low : {true, false}) {
      if (!(faces & (1u << (2 * ax + (low ? 0 : 1))))) continue;
      const int side = low ? 1 : -1;  // from the inside cell toward the ghost: -side
      const int f_in = low ? 0 : 2 * kN - 1;
      const int a1 = (ax + 1) % 3, a2 = (ax + 2) % 3;
      double* gradient = terms + CorrectionTerms::kGradient +
                         CorrectionTerms::face(ax, low) * CorrectionTerms::kFaceCells;
      for (int t2 = 0; t2 < kN; ++t2)
        for (int t1 = 0; t1 < kN; ++t1) {
          double fine = 0;
          for (int s2 = 0; s2 < 2; ++s2)
            for (int s1 = 0; s1 < 2; ++s1) {
              int f[3];
              f[a1] = 2 * t1 + s1;
              f[a2] = 2 * t2 + s2;
              f[ax] = f_in;
              const double in = fine_phi(f[0], f[1], f[2]);
              f[ax] = f_in - side;
              fine += in - double(kernels::interpolate_potential_cell(parent.data(), f));
            }
          gradient[t2 * kN + t1] = fine / (4 * hf);
        }
    }
}

void correction_source_tables(mesh::Mesh& m, int level, const PotentialTables& fine,
                              const CorrectionTerms& terms, int phi_field, int source_field,
                              double four_pi_g, double mean, const SelfGravity* root) {
  if (fine.level != level + 1)
    throw Error(ErrorKind::kInternal, "the correction's source without the finer level's tables");
  const detail::SourceStencil stencil(m, level, terms, phi_field, source_field, four_pi_g, mean);
  std::vector<int> group_of(m.num_patches(), -1);  // covered patch -> its finer group
  for (int g = 0; g < fine.groups(); ++g) group_of[m.patch(fine.first_patch[g]).parent] = g;
  const auto covered = [&](int p) { return group_of[p] >= 0; };
  std::vector<Real> box(kernels::kPotentialBoxCells);
  for (const int first : m.groups(level))
    for (int c = 0; c < mesh::kFamilySize; ++c) {
      const int p = first + c;
      if (!covered(p)) continue;
      parent_potential_box(m, fine, group_of[p], phi_field, 1.0, box.data(), root);
      stencil.covered_source(p, covered, [&](int i, int j, int k) {
        return double(box[kernels::potential_box_index(i + 2, j + 2, k + 2)]);
      });
    }
  // The leaves next to a covered patch: flux matching.
  for (const int first : m.groups(level))
    for (int c = 0; c < mesh::kFamilySize; ++c)
      if (!covered(first + c)) stencil.leaf_source(first + c, covered);
}

}  // namespace tessera::gravity
