// Root-level Poisson solve cost (scripts/bench --poisson): time per solve of the periodic
// and the isolated FFT solver (gravity/fft_poisson.hpp) on an N^3 grid, as a run calls it
// (rho in, phi with its ghost layer out; the Green's-function multiply included): FFTW with
// the threads OpenMP gives (OMP_NUM_THREADS), and cuFFT when a GPU is present, both with the
// copies between host and GPU ("cufft") and without them ("device": source fill, forward
// transform, multiply, backward transform, ghost gather).
//
//   tessera_poisson_bench [--cpu | --gpu] [N ...]      (default: both; 64 128 256)
//
// Times are the median of 5 solves after one untimed solve; the setup (planning, and the
// Green's function's transform for isolated boundaries) is not included.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tessera/exec/executor.hpp"
#include "tessera/gravity/fft_poisson.hpp"

using namespace tessera::gravity;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Timing {
  double total = 0, device = 0;  // median seconds of a solve, and of its GPU part
};

Timing time_solver(RootPoissonSolver& solver, const std::vector<double>& rho,
                   std::vector<double>& phi) {
  solver.solve(rho.data(), 1.0, phi.data());
  std::vector<double> total, device;
  for (int r = 0; r < 5; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    solver.solve(rho.data(), 1.0, phi.data());
    total.push_back(seconds_since(t0));
    device.push_back(solver.last_device_seconds());
  }
  std::sort(total.begin(), total.end());
  std::sort(device.begin(), device.end());
  return {total[2], device[2]};
}

}  // namespace

int main(int argc, char** argv) {
  bool cpu = true, gpu = tessera::exec::cuda_device_available();
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--cpu") {
      gpu = false;
    } else if (a == "--gpu") {
      cpu = false;
    } else if (std::atoi(argv[i]) >= 2) {
      sizes.push_back(std::atoi(argv[i]));
    } else {
      std::fprintf(stderr, "usage: tessera_poisson_bench [--cpu | --gpu] [N ...] (N >= 2)\n");
      return 2;
    }
  }
  if (!gpu && !cpu) {
    std::fprintf(stderr, "--gpu: no CUDA device found\n");
    return 2;
  }
  if (sizes.empty()) sizes = {64, 128, 256};
  std::printf(
      "# root-level FFT Poisson solve, ms per solve (median of 5); FFTW with %d threads%s\n",
      omp_get_max_threads(), gpu ? "; cuFFT on the GPU" : "");
  std::printf("%6s %-9s %12s %12s %12s\n", "N", "boundary", "fftw_ms", "cufft_ms", "device_ms");
  for (const int n : sizes) {
    const std::size_t cells = std::size_t(n) * n * n;
    std::vector<double> rho(cells), phi(std::size_t(n + 2) * (n + 2) * (n + 2));
    for (std::size_t c = 0; c < cells; ++c) rho[c] = 1 + 0.5 * std::sin(0.001 * double(c));
    const double h = 1.0 / n;
    for (const bool periodic : {true, false}) {
      double fftw_ms = -1;
      Timing cu;
      if (cpu)
        fftw_ms = 1e3 * time_solver(*make_fftw_poisson({n, n, n}, h, periodic), rho, phi).total;
      if (gpu) cu = time_solver(*make_cufft_poisson({n, n, n}, h, periodic), rho, phi);
      auto col = [](double ms) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.3f", ms);
        return ms < 0 ? std::string("-") : std::string(buf);
      };
      std::printf("%6d %-9s %12s %12s %12s\n", n, periodic ? "periodic" : "isolated",
                  col(fftw_ms).c_str(), col(gpu ? 1e3 * cu.total : -1).c_str(),
                  col(gpu ? 1e3 * cu.device : -1).c_str());
      std::fflush(stdout);
    }
  }
  return 0;
}
