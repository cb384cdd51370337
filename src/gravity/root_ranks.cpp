// The root level's density between the ranks of a self-gravitating run
// (docs/architecture.md, "Self-gravity without refinement on ranks"): to the z-slabs of the
// distributed FFT, or gathered whole on every rank.
#include <algorithm>
#include <limits>

#include "device_root.hpp"
#include "device_rows.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/parallel.hpp"
#include "tessera/gravity/fft_poisson.hpp"
#include "tessera/gravity/self_gravity.hpp"

namespace tessera::gravity {

namespace {
constexpr int kN = mesh::kPatchSize;
constexpr int kPotentialBox = 2 * kN + 2;  // a root family and one cell around it
}  // namespace

namespace {

// The root patches of rank `owner` (canonical order) with cells in z-planes [lo, lo + count):
// each with its planes k0 <= k < k1 (patch-local) and the offset of its cells in a message
// that holds them in this order, patch after patch, each in cell order.
struct PatchRun {
  int patch, k0, k1;
  std::size_t at;
};

std::vector<PatchRun> patch_runs(const mesh::Mesh& m, const parallel::Partition& partition,
                                 int owner, int lo, int count, std::size_t& total) {
  std::vector<PatchRun> runs;
  total = 0;
  for (const int g : m.groups(0)) {
    if (!partition.owns(owner, g)) continue;
    for (int c = 0; c < mesh::kFamilySize; ++c) {
      const int z = m.patch(g + c).corner[2];
      const int k0 = std::max(0, lo - z), k1 = std::min(kN, lo + count - z);
      if (k0 >= k1) continue;
      runs.push_back({g + c, k0, k1, total});
      total += std::size_t(k1 - k0) * kN * kN;
    }
  }
  return runs;
}

}  // namespace

void SelfGravity::scatter_root(const mesh::Mesh& m, const SlabPoisson& solver,
                               std::vector<double>& out, const std::vector<Real>* own) const {
  const int n0 = n_[0], n1 = n_[1], rank = comm_->rank();
  const int first = solver.first_plane(), planes = solver.planes();
  // With `own`: where each own root patch's values begin in it.
  const std::size_t fields = source_field_ >= 0 ? 2 : 1;
  std::vector<std::size_t> own_at;
  if (own) {
    const std::vector<int> patches = own_root_patches(m);
    if (own->size() != patches.size() * fields * mesh::kPatchCells)
      throw Error(ErrorKind::kInternal, "root density of self-gravity: values of other patches");
    own_at.assign(std::size_t(m.num_patches()), 0);
    for (std::size_t p = 0; p < patches.size(); ++p)
      own_at[std::size_t(patches[p])] = p * fields * mesh::kPatchCells;
  }
  // The density of each own root patch's cells in planes [k0, k1), in cell order, to `to`.
  auto density = [&](int patch, int k0, int k1, double* to) {
    const Real* u = own ? own->data() + own_at[std::size_t(patch)] : m.current(patch);
    const std::size_t src_at =
        own ? mesh::kPatchCells : std::size_t(std::max(source_field_, 0)) * mesh::kPatchCells;
    const Real* src = source_field_ >= 0 ? u + src_at : nullptr;
    for (int a = k0 * kN * kN; a < k1 * kN * kN; ++a)
      *to++ = src ? double(u[a]) + double(src[a]) : double(u[a]);
  };
  // Runs of a rank's patches (patch_runs) into this rank's planes, each run's values from
  // values(run, scratch) (scratch: room for a patch's cells), in patch_runs' cell order.
  auto unpack = [&](const std::vector<PatchRun>& runs, auto&& values) {
#pragma omp parallel for schedule(static)
    for (std::size_t r = 0; r < runs.size(); ++r) {
      double scratch[mesh::kPatchCells];
      const auto o = m.patch(runs[r].patch).corner;
      const double* from = values(runs[r], scratch);
      for (int k = runs[r].k0; k < runs[r].k1; ++k)
        for (int j = 0; j < kN; ++j, from += kN)
          std::copy_n(from, kN,
                      out.data() + (std::size_t(o[2] + k - first) * n1 + o[1] + j) * n0 + o[0]);
    }
  };
  out.assign(std::size_t(planes) * n1 * n0, 0.0);
  // To each other rank the cells of this rank's root patches in its planes (patch_runs'
  // order); those in this rank's own planes go straight into them.
  std::vector<std::vector<double>> send(comm_->size());
  for (int q = 0; q < comm_->size(); ++q) {
    if (q == rank) continue;
    std::size_t total = 0;
    const auto runs =
        patch_runs(m, *partition_, rank, solver.first_plane(q), solver.planes(q), total);
    send[q].resize(total);
#pragma omp parallel for schedule(static)
    for (std::size_t r = 0; r < runs.size(); ++r)
      density(runs[r].patch, runs[r].k0, runs[r].k1, send[q].data() + runs[r].at);
  }
  const auto got = comm_->exchange(std::move(send));
  {
    std::size_t total = 0;
    const auto runs = patch_runs(m, *partition_, rank, first, planes, total);
    unpack(runs, [&](const PatchRun& r, double* scratch) {
      density(r.patch, r.k0, r.k1, scratch);
      return static_cast<const double*>(scratch);
    });
  }
  // Agreed: a rank that finds a wrong count stops every rank here, none waits in the solve.
  parallel::agreed(*comm_, [&] {
    for (int q = 0; q < comm_->size(); ++q) {
      if (q == rank) continue;
      std::size_t total = 0;
      const auto runs = patch_runs(m, *partition_, q, first, planes, total);
      if (total != got[q].size())
        throw Error(ErrorKind::kInternal,
                    strprintf("root density of self-gravity: rank %d sent %zu values, %zu "
                              "expected",
                              q, got[q].size(), total));
      unpack(runs, [&](const PatchRun& r, double*) { return got[q].data() + r.at; });
    }
  });
}

void SelfGravity::gather_root(const mesh::Mesh& m, std::vector<double>& field) const {
  if (!comm_ || comm_->size() == 1) return;
  const int n0 = n_[0], n1 = n_[1], rank = comm_->rank();
  // Each rank's root patches in canonical order, their cells in patch order.
  auto each_cell = [&](int owner, auto&& f) {
    for (const int g : m.groups(0)) {
      if (!partition_->owns(owner, g)) continue;
      for (int c = 0; c < mesh::kFamilySize; ++c) {
        const auto o = m.patch(g + c).corner;
        for (int k = 0; k < kN; ++k)
          for (int j = 0; j < kN; ++j)
            for (int i = 0; i < kN; ++i)
              f(field[(std::size_t(o[2] + k) * n1 + o[1] + j) * n0 + o[0] + i]);
      }
    }
  };
  std::vector<double> mine;
  each_cell(rank, [&](double v) { mine.push_back(v); });
  const auto got = comm_->allgather(std::move(mine));
  parallel::agreed(*comm_, [&] {
    for (int q = 0; q < comm_->size(); ++q) {
      if (q == rank) continue;
      std::size_t at = 0;
      each_cell(q, [&](double& v) {
        if (at >= got[q].size())
          throw Error(ErrorKind::kInternal,
                      strprintf("root gather of self-gravity: rank %d sent too few values", q));
        v = got[q][at++];
      });
    }
  });
}

}  // namespace tessera::gravity

namespace tessera::gravity {

namespace {

// The first cell of root family g (its patches' lowest corner).
std::array<int, 3> family_corner(const mesh::Mesh& m, int g) {
  std::array<int, 3> c = m.patch(g).corner;
  for (int p = 1; p < mesh::kFamilySize; ++p)
    for (int d = 0; d < 3; ++d) c[d] = std::min(c[d], m.patch(g + p).corner[d]);
  return c;
}

}  // namespace

std::vector<std::vector<double>> SelfGravity::potential_boxes(const mesh::Mesh& m) const {
  const int g0 = n_[0] + 2, g1 = n_[1] + 2;
  const std::size_t plane = std::size_t(g1) * g0;
  // The root families each rank holds (its own and its buffer copies, whose potential
  // field solve() writes too), in the order of its boxes (follow_held), as the lowest
  // ghosted index of their box.
  std::vector<double> held;
  for (const int g : m.groups(0)) {
    if (!m.holds(g)) continue;
    const std::array<int, 3> c = family_corner(m, g);
    // Ghosted index = cell index + 1: the box's cells -1 .. 2 kN of the family start at c.
    held.push_back(double(c[2]) * plane + double(c[1]) * g0 + c[0]);
  }
  return comm_->allgather(std::move(held));
}

void SelfGravity::follow_held(const mesh::Mesh& m) {
  constexpr int f = RootBoxes::kFamilyCells;
  constexpr std::size_t cells = RootBoxes::kBoxCells;
  const int f0 = n_[0] / f, f1 = n_[1] / f, f2 = n_[2] / f;
  std::vector<int> slot(std::size_t(f0) * f1 * f2, -1);
  std::size_t count = 0;
  for (const int g : m.groups(0)) {
    if (!m.holds(g)) continue;
    const std::array<int, 3> c = family_corner(m, g);
    if (c[0] % f || c[1] % f || c[2] % f || c[0] >= n_[0] || c[1] >= n_[1] || c[2] >= n_[2])
      throw Error(ErrorKind::kInternal,
                  strprintf("root potential of self-gravity: a root family at (%d, %d, %d)", c[0],
                            c[1], c[2]));
    slot[(std::size_t(c[2] / f) * f1 + c[1] / f) * f0 + c[0] / f] = int(count++);
  }
  if (slot == box_slot_ && count == box_count_ && phi_.size() == count * cells + 1) return;
  // The box of each family that had one before.
  std::vector<std::int64_t> from(count, -1);
  if (box_slot_.size() == slot.size())
    for (std::size_t a = 0; a < slot.size(); ++a)
      if (slot[a] >= 0 && box_slot_[a] >= 0) from[std::size_t(slot[a])] = box_slot_[a];
  const auto remap = [&](std::vector<double>& v, bool keep) {
    std::vector<double> out(count * cells + 1, std::numeric_limits<double>::quiet_NaN());
    if (keep && v.size() == box_count_ * cells + 1)
#pragma omp parallel for schedule(static)
      for (std::size_t b = 0; b < count; ++b)
        if (from[b] >= 0)
          std::copy_n(v.data() + std::size_t(from[b]) * cells, cells, out.data() + b * cells);
    v.swap(out);
  };
  // Each copy keeps its values where it is current (a stale one is overwritten before it
  // is read), and takes the new layout's size either way.
  remap(phi_, host_current_);
  remap(phi_prev_, host_current_);
  box_slot_ = std::move(slot);
  box_count_ = count;
  if (device_) device_->layout(boxes(), device_current_ ? &from : nullptr);
}

void SelfGravity::scatter_potential(const mesh::Mesh& m, const SlabPoisson& solver) {
  const int g0 = n_[0] + 2, g1 = n_[1] + 2, g2 = n_[2] + 2, rank = comm_->rank();
  const std::size_t plane = std::size_t(g1) * g0;
  constexpr int kBox = kPotentialBox;
  const auto holders = potential_boxes(m);
  // What rank `reader` reads of ghosted planes [lo, lo + count): the kBox^3 box around each
  // root family it holds (its kicks read one cell around its patches), in its order, each
  // box's cells in index order, duplicates included. The boxes cover exterior()'s reads as
  // well: a refined level reads the layer outside the domain next to the root patches its
  // ghost values are interpolated from, which the rank holds. offsets: where each box's
  // cells begin in the message, and its length last.
  auto offsets = [&](int reader, int lo, int count) {
    const auto& boxes = holders[reader];
    std::vector<std::size_t> at(boxes.size() + 1, 0);
    for (std::size_t b = 0; b < boxes.size(); ++b) {
      const std::size_t corner = static_cast<std::size_t>(boxes[b]);
      const int t = int(corner / plane);
      if (corner % g0 + kBox > std::size_t(g0) || (corner % plane) / g0 + kBox > std::size_t(g1) ||
          t + kBox > g2)
        throw Error(ErrorKind::kInternal,
                    strprintf("root potential of self-gravity: rank %d holds a box beyond the "
                              "grid",
                              reader));
      const int rows = std::max(0, std::min(t + kBox, lo + count) - std::max(t, lo));
      at[b + 1] = at[b] + std::size_t(rows) * kBox * kBox;
    }
    return at;
  };
  // f(ghosted index, index into the reader's boxes, index into the message) for each of
  // those cells, in parallel over the planes (the calls of one plane, duplicates included,
  // run on one thread).
  auto each_needed = [&](int reader, int lo, int count, const std::vector<std::size_t>& at,
                         auto&& f) {
    const auto& boxes = holders[reader];
#pragma omp parallel for schedule(static)
    for (int t = lo; t < lo + count; ++t)
      for (std::size_t b = 0; b < boxes.size(); ++b) {
        const std::size_t corner = static_cast<std::size_t>(boxes[b]);
        const int t0 = int(corner / plane);
        if (t < t0 || t >= t0 + kBox) continue;
        const std::size_t row0 = at[b] + std::size_t(t - std::max(t0, lo)) * kBox * kBox;
        const std::size_t base = std::size_t(t) * plane + corner % plane;
        const std::size_t box0 = b * RootBoxes::kBoxCells + std::size_t(t - t0) * kBox * kBox;
        for (int bb = 0; bb < kBox; ++bb)
          for (int aa = 0; aa < kBox; ++aa)
            f(base + std::size_t(bb) * g0 + aa, box0 + std::size_t(bb) * kBox + aa,
              row0 + std::size_t(bb) * kBox + aa);
      }
  };
  const int first = solver.first_ghosted(), count = solver.ghosted_planes();
  const double* mine = solver.ghosted() - first * plane;  // indexed by ghosted cell
  std::vector<std::vector<double>> send(comm_->size());
  parallel::agreed(*comm_, [&] {
    for (int q = 0; q < comm_->size(); ++q) {
      const auto at = offsets(q, first, count);
      if (q == rank) {
        each_needed(q, first, count, at,
                    [&](std::size_t a, std::size_t b, std::size_t) { phi_[b] = mine[a]; });
        continue;
      }
      send[q].resize(at.back());
      double* to = send[q].data();
      each_needed(q, first, count, at,
                  [&](std::size_t a, std::size_t, std::size_t i) { to[i] = mine[a]; });
    }
  });
  const auto got = comm_->exchange(std::move(send));
  const EvenPieces pieces{g2, comm_->size()};
  parallel::agreed(*comm_, [&] {
    for (int q = 0; q < comm_->size(); ++q) {
      if (q == rank) continue;
      const auto at = offsets(rank, pieces.first(q), pieces.size(q));
      if (at.back() != got[q].size())
        throw Error(ErrorKind::kInternal,
                    strprintf("root potential of self-gravity: rank %d sent %zu values, %zu "
                              "expected",
                              q, got[q].size(), at.back()));
      const double* from = got[q].data();
      each_needed(rank, pieces.first(q), pieces.size(q), at,
                  [&](std::size_t, std::size_t b, std::size_t i) { phi_[b] = from[i]; });
    }
  });
}

RowPlan SelfGravity::density_rows(const mesh::Mesh& m, const SlabPoisson& solver) const {
  // scatter_root's moves as rows of a patch (kN cells along x): from this rank's own root
  // patches' densities ([own_root_patches' index][cells]) into the receivers' planes.
  const int n0 = n_[0], n1 = n_[1], rank = comm_->rank(), ranks = comm_->size();
  const int first = solver.first_plane(), planes = solver.planes();
  const std::vector<int> own = own_root_patches(m);
  std::vector<int> own_index(std::size_t(m.num_patches()), -1);
  for (std::size_t p = 0; p < own.size(); ++p) own_index[std::size_t(own[p])] = int(p);
  RowPlan plan;
  plan.width = kN;
  plan.source_size = std::int64_t(own.size()) * std::int64_t(mesh::kPatchCells);
  plan.destination_size = std::int64_t(planes) * n1 * n0;
  plan.send.resize(ranks);
  plan.receive.resize(ranks);
  std::size_t total = 0;
  for (int q = 0; q < ranks; ++q) {
    for (const PatchRun& r :
         patch_runs(m, *partition_, rank, solver.first_plane(q), solver.planes(q), total))
      for (int k = r.k0; k < r.k1; ++k)
        for (int j = 0; j < kN; ++j)
          plan.send[q].push_back(std::int64_t(own_index[std::size_t(r.patch)]) *
                                     std::int64_t(mesh::kPatchCells) +
                                 (k * kN + j) * kN);
    for (const PatchRun& r : patch_runs(m, *partition_, q, first, planes, total)) {
      const auto o = m.patch(r.patch).corner;
      for (int k = r.k0; k < r.k1; ++k)
        for (int j = 0; j < kN; ++j)
          plan.receive[q].push_back((std::int64_t(o[2] + k - first) * n1 + o[1] + j) * n0 + o[0]);
    }
  }
  return plan;
}

RowPlan SelfGravity::potential_rows(const mesh::Mesh& m, const SlabPoisson& solver) const {
  // scatter_potential's moves as rows of a box (kPotentialBox cells along x): from this
  // rank's ghosted planes into the readers' boxes (RootBoxes: box after box, in the order of
  // the families they hold).
  const int g0 = n_[0] + 2, g1 = n_[1] + 2, g2 = n_[2] + 2, rank = comm_->rank();
  const int ranks = comm_->size();
  const std::int64_t plane = std::int64_t(g1) * g0;
  constexpr int kBox = kPotentialBox;
  const auto holders = potential_boxes(m);
  const EvenPieces pieces{g2, ranks};
  // f(ghosted index of a row's first cell, its index in the reader's boxes) for the rows of
  // `reader`'s boxes in planes [lo, lo + count), box after box, plane after plane.
  auto rows = [&](int reader, int lo, int count, auto&& f) {
    for (std::size_t box = 0; box < holders[reader].size(); ++box) {
      const std::int64_t corner = static_cast<std::int64_t>(holders[reader][box]);
      const int t0 = int(corner / plane);
      if (corner % g0 + kBox > g0 || (corner % plane) / g0 + kBox > g1 || t0 + kBox > g2)
        throw Error(ErrorKind::kInternal,
                    strprintf("root potential of self-gravity: rank %d holds a box beyond the "
                              "grid",
                              reader));
      for (int t = std::max(t0, lo); t < std::min(t0 + kBox, lo + count); ++t)
        for (int b = 0; b < kBox; ++b)
          f(t * plane + corner % plane + std::int64_t(b) * g0,
            std::int64_t(box * RootBoxes::kBoxCells) + (std::int64_t(t - t0) * kBox + b) * kBox);
    }
  };
  const int first = solver.first_ghosted(), count = solver.ghosted_planes();
  if (first != pieces.first(rank) || count != pieces.size(rank))
    throw Error(ErrorKind::kInternal, "root potential of self-gravity: the slabs' planes moved");
  RowPlan plan;
  plan.width = kBox;
  plan.source_size = std::int64_t(count) * plane;
  plan.destination_size = std::int64_t(holders[rank].size() * RootBoxes::kBoxCells);
  plan.send.resize(ranks);
  plan.receive.resize(ranks);
  for (int q = 0; q < ranks; ++q) {
    rows(q, first, count,
         [&](std::int64_t a, std::int64_t) { plan.send[q].push_back(a - first * plane); });
    rows(rank, pieces.first(q), pieces.size(q),
         [&](std::int64_t, std::int64_t b) { plan.receive[q].push_back(b); });
  }
  return plan;
}

}  // namespace tessera::gravity
