// The root level's density between the ranks of a self-gravitating run
// (docs/architecture.md, "Self-gravity without refinement on ranks"): to the z-slabs of the
// distributed FFT, or gathered whole on every rank.
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/parallel.hpp"
#include "tessera/gravity/fft_poisson.hpp"
#include "tessera/gravity/self_gravity.hpp"

namespace tessera::gravity {

namespace {
constexpr int kN = mesh::kPatchSize;
}  // namespace

void SelfGravity::scatter_root(const mesh::Mesh& m, const SlabPoisson& solver,
                               std::vector<double>& out) const {
  const int n0 = n_[0], n1 = n_[1], rank = comm_->rank();
  const int first = solver.first_plane(), planes = solver.planes();
  // The cells of rank `owner`'s root patches in canonical order that lie in planes
  // [lo, lo + count), their cells in patch order: f(patch, cell index, z).
  auto each_cell = [&](int owner, int lo, int count, auto&& f) {
    for (const int g : m.groups(0)) {
      if (!partition_->owns(owner, g)) continue;
      for (int c = 0; c < mesh::kFamilySize; ++c) {
        const auto& o = m.patch(g + c).corner;
        for (int k = 0; k < kN; ++k) {
          if (o[2] + k < lo || o[2] + k >= lo + count) continue;
          for (int j = 0; j < kN; ++j)
            for (int i = 0; i < kN; ++i)
              f(g + c, (k * kN + j) * kN + i,
                (std::size_t(o[2] + k - lo) * n1 + o[1] + j) * n0 + o[0] + i);
        }
      }
    }
  };
  std::vector<std::vector<double>> send(comm_->size());
  for (int q = 0; q < comm_->size(); ++q)
    each_cell(rank, solver.first_plane(q), solver.planes(q), [&](int p, int a, std::size_t) {
      const Real* u = m.current(p);
      send[q].push_back(source_field_ >= 0
                            ? double(u[a]) +
                                  double(u[std::size_t(source_field_) * mesh::kPatchCells + a])
                            : double(u[a]));
    });
  const auto got = comm_->exchange(std::move(send));
  out.assign(std::size_t(planes) * n1 * n0, 0.0);
  // Agreed: a rank that finds a wrong count stops every rank here, none waits in the solve.
  parallel::agreed(*comm_, [&] {
    for (int q = 0; q < comm_->size(); ++q) {
      std::size_t at = 0;
      each_cell(q, first, planes, [&](int, int, std::size_t to) {
        if (at >= got[q].size())
          throw Error(ErrorKind::kInternal,
                      strprintf("root density of self-gravity: rank %d sent too few values", q));
        out[to] = got[q][at++];
      });
      if (at != got[q].size())
        throw Error(ErrorKind::kInternal,
                    strprintf("root density of self-gravity: rank %d sent too many values", q));
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
        const auto& o = m.patch(g + c).corner;
        for (int k = 0; k < kN; ++k)
          for (int j = 0; j < kN; ++j)
            for (int i = 0; i < kN; ++i)
              f(field[(std::size_t(o[2] + k) * n1 + o[1] + j) * n0 + o[0] + i]);
      }
    }
  };
  std::vector<double> mine;
  each_cell(rank, [&](double v) { mine.push_back(v); });
  const auto got = comm_->exchange(std::vector<std::vector<double>>(comm_->size(), mine));
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

void SelfGravity::scatter_potential(const mesh::Mesh& m, const SlabPoisson& solver) {
  const int g0 = n_[0] + 2, g1 = n_[1] + 2, g2 = n_[2] + 2, rank = comm_->rank();
  const std::size_t plane = std::size_t(g1) * g0;
  // The root families each rank holds (its own and its buffer copies, whose potential
  // field solve() writes too).
  std::vector<double> held;
  for (const int g : m.groups(0))
    if (m.holds(g)) held.push_back(g);
  auto holders = comm_->exchange(std::vector<std::vector<double>>(comm_->size(), held));
  holders[rank] = std::move(held);
  // The cells of the ghosted grid that rank `reader` reads, in ghosted planes
  // [lo, lo + count), as indices into phi_ in a fixed order (duplicates allowed): the 18^3
  // box around each root family it holds, which its kicks read. The boxes cover exterior()'s
  // reads as well: a refined level reads the layer outside the domain next to the root
  // patches its ghost values are interpolated from, which the rank holds.
  auto each_needed = [&](int reader, int lo, int count, auto&& f) {
    const int hi = lo + count;
    for (const double family : holders[reader]) {
      const int g = static_cast<int>(family);
      if (g < 0 || g + mesh::kFamilySize > m.num_patches())
        throw Error(
            ErrorKind::kInternal,
            strprintf("root potential of self-gravity: rank %d holds no family %d", reader, g));
      std::array<int, 3> c = m.patch(g).corner;
      for (int p = 1; p < mesh::kFamilySize; ++p)
        for (int d = 0; d < 3; ++d) c[d] = std::min(c[d], m.patch(g + p).corner[d]);
      // Ghosted index = cell index + 1: the box's cells -1 .. 2 kN of the family.
      for (int t = std::max(c[2], lo); t < std::min(c[2] + 2 * kN + 2, hi); ++t)
        for (int b = c[1]; b < c[1] + 2 * kN + 2; ++b)
          for (int a = c[0]; a < c[0] + 2 * kN + 2; ++a) f(t * plane + std::size_t(b) * g0 + a);
    }
  };
  const int first = solver.first_ghosted();
  const double* mine = solver.ghosted();
  std::vector<std::vector<double>> send(comm_->size());
  parallel::agreed(*comm_, [&] {
    for (int q = 0; q < comm_->size(); ++q) {
      if (q == rank) continue;
      each_needed(q, first, solver.ghosted_planes(),
                  [&](std::size_t a) { send[q].push_back(mine[a - first * plane]); });
    }
    each_needed(rank, first, solver.ghosted_planes(),
                [&](std::size_t a) { phi_[a] = mine[a - first * plane]; });
  });
  const auto got = comm_->exchange(std::move(send));
  const EvenPieces pieces{g2, comm_->size()};
  parallel::agreed(*comm_, [&] {
    for (int q = 0; q < comm_->size(); ++q) {
      if (q == rank) continue;
      std::size_t at = 0;
      each_needed(rank, pieces.first(q), pieces.size(q), [&](std::size_t a) {
        if (at >= got[q].size())
          throw Error(ErrorKind::kInternal,
                      strprintf("root potential of self-gravity: rank %d sent too few values", q));
        phi_[a] = got[q][at++];
      });
      if (at != got[q].size())
        throw Error(ErrorKind::kInternal,
                    strprintf("root potential of self-gravity: rank %d sent too many values", q));
    }
  });
}

}  // namespace tessera::gravity
