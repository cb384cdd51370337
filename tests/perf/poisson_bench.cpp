// Root-level Poisson solve cost (scripts/bench --poisson): time per solve of the periodic
// and the isolated FFT solver (gravity/fft_poisson.hpp) on an N^3 grid, with the threads
// OpenMP gives (OMP_NUM_THREADS), the Green's-function multiply and the copies included.
//
//   tessera_poisson_bench [N ...]      (default: 64 128 256)
//
// Times are the median of 5 solves after one untimed solve; the setup (planning, and the
// Green's function's transform for isolated boundaries) is reported separately.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tessera/gravity/fft_poisson.hpp"

using namespace tessera::gravity;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <class Solve>
double median_seconds(Solve&& solve) {
  solve();
  std::vector<double> t;
  for (int r = 0; r < 5; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    solve();
    t.push_back(seconds_since(t0));
  }
  std::sort(t.begin(), t.end());
  return t[2];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {64, 128, 256};
  std::printf("# FFT Poisson solve on the CPU (FFTW), %d threads; ms per solve (median of 5)\n",
              omp_get_max_threads());
  std::printf("%6s %10s %14s %12s %14s %12s\n", "N", "cells", "periodic_ms", "setup_ms",
              "isolated_ms", "setup_ms");
  for (const int n : sizes) {
    if (n < 2) {
      std::fprintf(stderr, "grid size %d: expected at least 2\n", n);
      return 2;
    }
    const std::size_t cells = std::size_t(n) * n * n;
    std::vector<double> rho(cells), phi(cells), ghosted(std::size_t(n + 2) * (n + 2) * (n + 2));
    for (std::size_t c = 0; c < cells; ++c) rho[c] = 1 + 0.5 * std::sin(0.001 * double(c));
    const double h = 1.0 / n;
    auto t0 = std::chrono::steady_clock::now();
    PeriodicFftPoisson periodic({n, n, n}, h);
    const double periodic_setup = seconds_since(t0);
    const double periodic_s = median_seconds([&] { periodic.solve(rho.data(), 1.0, phi.data()); });
    t0 = std::chrono::steady_clock::now();
    IsolatedFftPoisson isolated({n, n, n}, h);
    const double isolated_setup = seconds_since(t0);
    const double isolated_s =
        median_seconds([&] { isolated.solve(rho.data(), 1.0, ghosted.data()); });
    std::printf("%6d %10zu %14.2f %12.2f %14.2f %12.2f\n", n, cells, 1e3 * periodic_s,
                1e3 * periodic_setup, 1e3 * isolated_s, 1e3 * isolated_setup);
  }
  return 0;
}
