// The 3D real-to-complex transform of the root Poisson solve, cut into slabs over the ranks
// of a Comm (docs/architecture.md, "Self-gravity on several ranks").
//
// Three passes of 1D transforms, as in FFTW's own MPI transforms (slab decomposition): x
// (real-to-complex) and y on whole z-planes, a transpose (one message per rank pair), z on
// whole y-rows, and the same backwards. Each pass runs one FFTW plan on every plane or row
// of a rank, and a plane or row has the same layout in memory whatever the number of ranks
// (a y-row's z columns are always the contiguous block [m2][m0/2 + 1]). Every 1D transform
// is thus computed by the same plan on the same numbers for any rank and thread count, and
// the result has the same bits on one rank as on N: runs stay independent of the rank
// count. (FFTW's MPI plans would choose their algorithm, and their local layout, by the
// rank count.)
//
// Real space: the z-planes [0, data_planes) hold the input, cut in even contiguous pieces
// over the ranks (the other planes are zero: the isolated solve's zero padding, which is
// never transformed); the backward transform returns an arbitrary list of z-planes
// (out_planes, duplicates allowed), cut in even pieces too. Spectrum: the m1 y-rows cut in
// even pieces, a rank's rows laid out [j - y_first][k][i], i < m0 / 2 + 1.
#pragma once

#include <array>
#include <complex>
#include <cstddef>
#include <memory>
#include <vector>

#include "tessera/parallel/comm.hpp"

namespace tessera::gravity {

// `count` items cut into `ranks` contiguous pieces whose sizes differ by one at most.
struct EvenPieces {
  int count = 0;
  int ranks = 1;
  int first(int r) const { return static_cast<int>(static_cast<long long>(count) * r / ranks); }
  int size(int r) const { return first(r + 1) - first(r); }
};

class SlabFft3d {
 public:
  // The m[0] x m[1] x m[2] transform (x fastest) over comm's ranks; a collective (every rank
  // constructs it). data_planes <= m[2]; out_planes: z indices in [0, m[2]).
  SlabFft3d(std::array<int, 3> m, int data_planes, std::vector<int> out_planes,
            parallel::Comm& comm);
  ~SlabFft3d();
  SlabFft3d(const SlabFft3d&) = delete;
  SlabFft3d& operator=(const SlabFft3d&) = delete;

  const std::array<int, 3>& shape() const { return m_; }
  int half() const { return m_[0] / 2 + 1; }
  parallel::Comm& comm() const { return comm_; }

  // This rank's input planes: z in [in_first(), in_first() + in_count()), as
  // [plane][m1][m0] in input(). forward() reads them (and leaves them).
  int in_first() const { return in_.first(rank_); }
  int in_count() const { return in_.size(rank_); }
  double* input() { return input_; }
  // This rank's spectrum rows: y in [y_first(), y_first() + y_count()), [row][m2][half()].
  int y_first() const { return rows_.first(rank_); }
  int y_count() const { return rows_.size(rank_); }
  std::complex<double>* spectrum() { return spec_; }
  std::size_t spectrum_size() const { return std::size_t(y_count()) * m_[2] * half(); }
  // This rank's output planes: out_planes[out_first() .. out_first() + out_count()), as
  // [plane][m1][m0] in output(), written by backward().
  int out_first() const { return out_.first(rank_); }
  int out_count() const { return out_.size(rank_); }
  const double* output() const { return output_; }

  // Collectives: input -> spectrum; spectrum -> output (the spectrum is overwritten).
  // even_in_z: the grid's planes beyond the input are the mirror images of the input's
  // (plane z = plane m2 - z, which needs data_planes > m2 / 2), not zero: their x and y
  // passes, the same transforms of the same numbers, are copied instead of computed.
  void forward(bool even_in_z = false);
  void backward();

 private:
  struct Plans;
  std::array<int, 3> m_;
  int data_planes_;
  std::vector<int> out_planes_;
  parallel::Comm& comm_;
  int rank_, ranks_;
  EvenPieces in_, rows_, out_;
  double* input_ = nullptr;                 // [in_count][m1][m0]
  std::complex<double>* planes_ = nullptr;  // x/y passes: [max(in, out count)][m1][half]
  std::complex<double>* spec_ = nullptr;    // [y_count][m2][half]
  double* output_ = nullptr;                // [out_count][m1][m0]
  std::unique_ptr<Plans> plans_;
};

}  // namespace tessera::gravity
