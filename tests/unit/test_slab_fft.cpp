// Unit tests of the root Poisson solve cut into slabs over ranks (src/gravity/slab_fft.cpp,
// SlabPoisson in src/gravity/fft_poisson.cpp): on 2, 3, 4 and 7 virtual ranks (7 ranks for
// 6 planes leave some ranks without planes or rows), periodic and isolated, the gathered
// potential has the bits of the one-rank solve; the transform itself equals the direct
// DFT; an even input's mirrored planes give the transform of the whole input.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <numbers>
#include <random>
#include <vector>

#include "tessera/gravity/fft_poisson.hpp"
#include "tessera/gravity/slab_fft.hpp"
#include "tessera/parallel/virtual_ranks.hpp"

namespace tessera::gravity {
namespace {

using parallel::Comm;
using parallel::SerialComm;
using parallel::VirtualRanks;

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

std::vector<double> random_density(const std::array<int, 3>& n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  std::vector<double> rho(std::size_t(n[0]) * n[1] * n[2]);
  for (double& r : rho) r = u(rng);
  return rho;
}

// The ghosted potential and the subtracted mean of a SlabPoisson over `comm`, every rank
// giving its planes of `rho`.
std::vector<double> slab_solve(const std::array<int, 3>& n, bool periodic,
                               const std::vector<double>& rho, Comm& comm, double* mean) {
  SlabPoisson solver(n, 0.1, periodic, comm);
  const std::size_t plane = std::size_t(n[0]) * n[1];
  const std::vector<double> mine(rho.begin() + solver.first_plane() * plane,
                                 rho.begin() + (solver.first_plane() + solver.planes()) * plane);
  *mean = solver.solve(mine.data(), 4 * std::numbers::pi);
  std::vector<double> phi(std::size_t(n[0] + 2) * (n[1] + 2) * (n[2] + 2));
  solver.gather_ghosted(phi.data());
  return phi;
}

void expect_rank_independent(bool periodic) {
  // Three different lengths, so that a transposed axis or a wrong piece fails.
  const std::array<int, 3> n = {10, 12, 6};
  const auto rho = random_density(n, periodic ? 3 : 4);
  SerialComm one;
  double mean1 = 0;
  const auto serial = slab_solve(n, periodic, rho, one, &mean1);
  for (const int ranks : {2, 3, 4, 7}) {
    VirtualRanks vr(ranks);
    std::vector<std::vector<double>> got(ranks);
    std::vector<double> means(ranks);
    vr.run([&](Comm& comm) {
      got[comm.rank()] = slab_solve(n, periodic, rho, comm, &means[comm.rank()]);
    });
    for (int r = 0; r < ranks; ++r) {
      EXPECT_TRUE(same_bits(got[r], serial)) << ranks << " ranks, rank " << r;
      EXPECT_EQ(std::memcmp(&means[r], &mean1, sizeof(double)), 0) << ranks << " ranks";
    }
  }
  // The whole-array solvers are the same solve.
  std::vector<double> whole(serial.size());
  make_fftw_poisson(n, 0.1, periodic)->solve(rho.data(), 4 * std::numbers::pi, whole.data());
  EXPECT_TRUE(same_bits(whole, serial));
}

TEST(SlabPoisson, PeriodicSolveHasTheBitsOfOneRankOnAnyRankCount) {
  expect_rank_independent(true);
}

TEST(SlabPoisson, IsolatedSolveHasTheBitsOfOneRankOnAnyRankCount) {
  expect_rank_independent(false);
}

// The spectrum of a 3-rank transform against the direct DFT of the whole grid.
TEST(SlabFft3d, EqualsTheDirectTransform) {
  const std::array<int, 3> m = {6, 5, 4};
  const auto x = random_density(m, 7);
  const int nh = m[0] / 2 + 1;
  auto direct = [&](int i, int j, int k) {
    std::complex<double> s = 0;
    for (int c = 0; c < m[2]; ++c)
      for (int b = 0; b < m[1]; ++b)
        for (int a = 0; a < m[0]; ++a) {
          const double phase = -2 * std::numbers::pi *
                               (double(i) * a / m[0] + double(j) * b / m[1] + double(k) * c / m[2]);
          s += x[(std::size_t(c) * m[1] + b) * m[0] + a] * std::polar(1.0, phase);
        }
    return s;
  };
  VirtualRanks vr(3);
  std::vector<double> worst(3, 0.0);
  vr.run([&](Comm& comm) {
    SlabFft3d fft(m, m[2], {0, 1, 2, 3}, comm);
    const std::size_t plane = std::size_t(m[0]) * m[1];
    std::copy_n(x.begin() + fft.in_first() * plane, fft.in_count() * plane, fft.input());
    fft.forward();
    for (int j = 0; j < fft.y_count(); ++j)
      for (int k = 0; k < m[2]; ++k)
        for (int i = 0; i < nh; ++i) {
          const auto got = fft.spectrum()[(std::size_t(j) * m[2] + k) * nh + i];
          worst[comm.rank()] =
              std::max(worst[comm.rank()], std::abs(got - direct(i, fft.y_first() + j, k)));
        }
    // Backwards: the input times the number of cells (unnormalised).
    fft.backward();
    for (int t = 0; t < fft.out_count(); ++t)
      for (std::size_t c = 0; c < plane; ++c)
        worst[comm.rank()] = std::max(worst[comm.rank()],
                                      std::fabs(fft.output()[t * plane + c] / (m[0] * m[1] * m[2]) -
                                                x[(fft.out_first() + t) * plane + c]));
  });
  for (const double w : worst) EXPECT_LT(w, 1e-12);
}

// An input even along z given by its planes 0 .. m2/2, the rest mirrored: the spectrum of
// the whole input, bit for bit.
TEST(SlabFft3d, MirroredPlanesGiveTheTransformOfTheWholeEvenInput) {
  const std::array<int, 3> m = {6, 4, 8};
  auto x = random_density(m, 9);
  const std::size_t plane = std::size_t(m[0]) * m[1];
  for (int z = m[2] / 2 + 1; z < m[2]; ++z)
    std::copy_n(x.begin() + (m[2] - z) * plane, plane, x.begin() + z * plane);
  VirtualRanks vr(2);
  std::vector<int> same(2, 0);
  vr.run([&](Comm& comm) {
    SlabFft3d whole(m, m[2], {}, comm), half(m, m[2] / 2 + 1, {}, comm);
    std::copy_n(x.begin() + whole.in_first() * plane, whole.in_count() * plane, whole.input());
    std::copy_n(x.begin() + half.in_first() * plane, half.in_count() * plane, half.input());
    whole.forward();
    half.forward(true);
    same[comm.rank()] = std::memcmp(whole.spectrum(), half.spectrum(),
                                    whole.spectrum_size() * sizeof(std::complex<double>)) == 0;
  });
  EXPECT_EQ(same, std::vector<int>({1, 1}));
}

}  // namespace
}  // namespace tessera::gravity
