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
