// The potential correction (docs/architecture.md, "Self-gravity"; the cycle itself is
// Simulation::solve_gravity): the source field, the coarse level's source from the finer
// level's potential, and the prolongation of the coarse change.
#include <algorithm>
#include <limits>
#include <vector>

#include "coarse_potential.hpp"
#include "correction_stencil.hpp"
#include "kernels/group_layout.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/parallel.hpp"
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

std::vector<Real> keep_potential(const mesh::Mesh& m, int level, int phi_field,
                                 const std::vector<int>* only) {
  const std::size_t off = std::size_t(phi_field) * mesh::kPatchCells;
  const auto& groups = only ? *only : m.groups(level);
  std::vector<Real> kept(groups.size() * mesh::kFamilySize * mesh::kPatchCells);
#pragma omp parallel for schedule(static)
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (int c = 0; c < mesh::kFamilySize; ++c)
      std::copy_n(m.current(groups[g] + c) + off, mesh::kPatchCells,
                  kept.data() + (g * mesh::kFamilySize + c) * mesh::kPatchCells);
  return kept;
}

void coarse_change(mesh::Mesh& m, int level, int phi_field, const std::vector<Real>& kept,
                   const CorrectionTerms& terms, const std::vector<int>* only) {
  const int coarse = level - 1;
  const std::size_t off = std::size_t(phi_field) * mesh::kPatchCells;
  const int cur = m.current_slot(coarse), other = m.next_slot(coarse);
  // The coarse change, into the coarser level's other slot (gather_box reads it at w = 0).
  const auto& coarse_groups = only ? *only : m.groups(coarse);
  ParallelErrors errors;  // a missing term throws
#pragma omp parallel for schedule(static)
  for (std::size_t g = 0; g < coarse_groups.size(); ++g)
    errors.run(static_cast<std::int64_t>(g), [&] {
      for (int c = 0; c < mesh::kFamilySize; ++c) {
        const int p = coarse_groups[g] + c;
        const Real* now = m.data(cur, p) + off;
        const Real* before_all = kept.data() + (g * mesh::kFamilySize + c) * mesh::kPatchCells;
        Real* change = m.data(other, p) + off;
        const double* fine =
            m.patch(p).is_leaf() ? nullptr : terms.at(p) + CorrectionTerms::kRestricted;
        for (int a = 0; a < mesh::kPatchCells; ++a)
          change[a] = Real(double(now[a]) - (fine ? fine[a] : double(before_all[a])));
      }
    });
  errors.rethrow();
}

void add_coarse_change(mesh::Mesh& m, int level, int phi_field, const std::vector<int>* only) {
  const std::size_t off = std::size_t(phi_field) * mesh::kPatchCells;
  const auto& groups = only ? *only : m.groups(level);
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
      for (int c = 0; c < mesh::kFamilySize && m.holds(groups[g]); ++c)
        for (int slot = 0; slot < 2; ++slot)
          std::fill_n(m.data(slot, groups[g] + c) + std::size_t(source_field) * mesh::kPatchCells,
                      mesh::kPatchCells, Real(0));
  }
}

double* CorrectionTerms::add(int p) {
  if (slot_[p] < 0) {
    slot_[p] = static_cast<int>(data_.size() / kReals);
    data_.resize(data_.size() + kReals, std::numeric_limits<double>::quiet_NaN());
  }
  return find(p);
}

const double* CorrectionTerms::at(int p) const {
  const double* t = find(p);
  if (!t)
    throw Error(ErrorKind::kInternal,
                strprintf("potential correction: no finer-level terms for covered patch %d", p));
  return t;
}

namespace {

// Whether covered patch p needs the finer level's gradient through its face along `ax`
// (low: its low face): beyond it lies the domain's boundary or a leaf.
bool needs_gradient(const mesh::Mesh& m, int p, int ax, bool low) {
  int off[3] = {0, 0, 0};
  off[ax] = low ? -1 : 1;
  const int nb = m.neighbours().neighbour(p, off[0], off[1], off[2]);
  return nb < 0 || m.patch(nb).is_leaf();
}

}  // namespace

CorrectionTerms fine_terms(const mesh::Mesh& m, int level, int phi_field, int source_field,
                           double four_pi_g, const SelfGravity* root,
                           const std::vector<int>* only) {
  const std::size_t phi_off = std::size_t(phi_field) * mesh::kPatchCells;
  const auto& fine_groups = only ? *only : m.groups(level + 1);
  CorrectionTerms terms(m.num_patches());
  for (const int g : fine_groups) terms.add(m.patch(g).parent);
  std::vector<double*> out(fine_groups.size());  // after every add: they move the data
  for (std::size_t g = 0; g < fine_groups.size(); ++g)
    out[g] = terms.find(m.patch(fine_groups[g]).parent);
  const double mean = root ? root->mean_density() : 0.0;  // periodic: the Jeans swindle's
  const double hf = m.dx(level + 1);
  constexpr int half = kN / 2;
  ParallelErrors errors;
#pragma omp parallel for schedule(dynamic, 4)
  for (std::size_t g = 0; g < fine_groups.size(); ++g)
    errors.run(static_cast<std::int64_t>(g), [&] {
      const int first_child = fine_groups[g], p = m.patch(first_child).parent;
      double* t = out[g];
      // R(phi_fine): the mean of the eight finer cells of each cell of p.
      double* restricted = t + CorrectionTerms::kRestricted;
      for (int k = 0; k < kN; ++k)
        for (int j = 0; j < kN; ++j)
          for (int ii = 0; ii < kN; ++ii) {
            const int child = first_child + (ii / half) + 2 * (j / half) + 4 * (k / half);
            const Real* f = m.current(child) + phi_off;
            const int fi = 2 * (ii % half), fj = 2 * (j % half), fk = 2 * (k % half);
            double sum = 0;
            for (int c = 0; c < 8; ++c)
              sum += f[((fk + (c >> 2)) * kN + fj + ((c >> 1) & 1)) * kN + fi + (c & 1)];
            restricted[(k * kN + j) * kN + ii] = sum / 8;
          }
      // The finer level's residual 4 pi G (rho + source) - laplacian(phi), restricted, with
      // the ghost values the finer level's solves use (its same-level neighbours', else the
      // interpolated coarse ones): the full-approximation scheme's coarse equation carries
      // it, so that a finer level that is only smoothed, not solved, still has its
      // remaining error corrected from the coarse level.
      thread_local std::vector<Real> rho, box;
      rho.resize(kernels::box_cells(1));
      box.resize(kernels::box_cells(1));
      gather_potential(m, phi_field, first_child, 1.0, rho.data(), box.data(), false, source_field,
                       root);
      detail::restricted_residual(rho.data(), box.data(), four_pi_g, mean, hf,
                                  t + CorrectionTerms::kResidual);
      // The finer level's gradient through p's face along `ax` (low: p's low face), seen
      // from the cell beyond it, at face cell (t1, t2): the mean over the four fine faces of
      // (inside - ghost) / hf, the ghost values interpolated from the potential around p as
      // the finer level's solve has them.
      thread_local mesh::CoarseBox cb;
      bool gathered = false;
      const auto pc = m.patch(p).corner;
      for (int ax = 0; ax < 3; ++ax)
        for (const bool low : {true, false}) {
          if (!needs_gradient(m, p, ax, low)) continue;
          if (!gathered) detail::gather_parent_potential(m, p, 1.0, phi_field, cb, root);
          gathered = true;
          const int side = low ? 1 : -1;  // from the inside cell toward the ghost: -side
          const int f_in = low ? 2 * pc[ax] : 2 * pc[ax] + 2 * kN - 1;
          const int a1 = (ax + 1) % 3, a2 = (ax + 2) % 3;
          double* gradient = t + CorrectionTerms::kGradient +
                             CorrectionTerms::face(ax, low) * CorrectionTerms::kFaceCells;
          for (int t2 = 0; t2 < kN; ++t2)
            for (int t1 = 0; t1 < kN; ++t1) {
              double fine = 0;
              for (int s2 = 0; s2 < 2; ++s2)
                for (int s1 = 0; s1 < 2; ++s1) {
                  std::array<int, 3> f;
                  f[a1] = 2 * (pc[a1] + t1) + s1;
                  f[a2] = 2 * (pc[a2] + t2) + s2;
                  f[ax] = f_in;
                  int local[3], child = first_child;
                  for (int a = 0; a < 3; ++a) {
                    const int l = f[a] - 2 * pc[a];
                    child += (l / kN) << a;
                    local[a] = l % kN;
                  }
                  const double in =
                      m.current(child)[phi_off + (local[2] * kN + local[1]) * kN + local[0]];
                  f[ax] = f_in - side;
                  fine += in - double(detail::interpolate_potential(cb, f));
                }
              gradient[t2 * kN + t1] = fine / (4 * hf);
            }
        }
    });
  errors.rethrow();
  return terms;
}

std::vector<int> term_readers(const mesh::Mesh& m, const parallel::Partition& part, int p) {
  std::vector<int> r{part.owner(p)};
  for (int ax = 0; ax < 3; ++ax)
    for (int side = -1; side <= 1; side += 2) {
      int off[3] = {0, 0, 0};
      off[ax] = side;
      const int nb = m.neighbours().neighbour(p, off[0], off[1], off[2]);
      if (nb >= 0) r.push_back(part.owner(nb));
    }
  std::sort(r.begin(), r.end());
  r.erase(std::unique(r.begin(), r.end()), r.end());
  return r;
}

long long exchange_terms(const mesh::Mesh& m, int level, CorrectionTerms& terms,
                         parallel::Comm& comm, const parallel::Partition& part) {
  const int rank = comm.rank();
  constexpr std::size_t n = CorrectionTerms::kReals;
  // Both sides walk the finer level's groups in canonical order.
  auto each = [&](auto&& f) {
    for (const int g : m.groups(level + 1)) {
      const int p = m.patch(g).parent, from = part.owner(g);
      for (const int to : term_readers(m, part, p))
        if (to != from) f(p, from, to);
    }
  };
  std::vector<std::vector<double>> send(comm.size());
  long long sent = 0;
  each([&](int p, int from, int to) {
    if (from != rank) return;
    const double* t = terms.at(p);
    send[to].insert(send[to].end(), t, t + n);
    ++sent;
  });
  const auto got = comm.exchange(std::move(send));
  std::vector<std::size_t> at(comm.size(), 0);
  each([&](int p, int from, int to) {
    if (to != rank) return;
    if (at[from] + n > got[from].size())
      throw Error(
          ErrorKind::kInternal,
          strprintf("potential correction of level %d: rank %d sent too few terms", level, from));
    std::copy_n(got[from].data() + at[from], n, terms.add(p));
    at[from] += n;
  });
  return sent;
}

void correction_source(mesh::Mesh& m, int level, int phi_field, int source_field, double four_pi_g,
                       const CorrectionTerms& terms, const SelfGravity* root,
                       const std::vector<int>* only) {
  const double mean = root ? root->mean_density() : 0.0;  // periodic: the Jeans swindle's
  const detail::SourceStencil stencil(m, level, terms, phi_field, source_field, four_pi_g, mean);
  const auto& groups = only ? *only : m.groups(level);
  auto covered = [&](int p) { return !m.patch(p).is_leaf(); };
  // The covered patches first: a leaf's flux terms read their potential and terms, not
  // their source. Each covered patch's potential box with the ghost values of its own solve.
  ParallelErrors errors;  // a missing term throws
#pragma omp parallel for schedule(static)
  for (std::size_t g = 0; g < groups.size(); ++g)
    errors.run(static_cast<std::int64_t>(g), [&] {
      for (int c = 0; c < mesh::kFamilySize; ++c) {
        const int p = groups[g] + c;
        if (!covered(p)) continue;
        thread_local mesh::CoarseBox own_phi;
        detail::gather_parent_potential(m, p, 1.0, phi_field, own_phi, root);
        // own_phi's box starts two cells before the patch.
        stencil.covered_source(p, covered, [&](int i, int j, int k) {
          return double(own_phi.at(0, i + 2, j + 2, k + 2));
        });
      }
    });
  errors.rethrow();
#pragma omp parallel for schedule(dynamic, 4)
  for (std::size_t g = 0; g < groups.size(); ++g)
    errors.run(static_cast<std::int64_t>(g), [&] {
      for (int c = 0; c < mesh::kFamilySize; ++c)
        if (!covered(groups[g] + c)) stencil.leaf_source(groups[g] + c, covered);
    });
  errors.rethrow();
}

}  // namespace tessera::gravity
