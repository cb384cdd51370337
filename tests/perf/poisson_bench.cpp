// Root-level Poisson solve cost (scripts/bench --poisson): time per solve of the periodic
// and the isolated FFT solver (gravity/fft_poisson.hpp) on an N^3 grid, as a run calls it
// (rho in, phi with its ghost layer out; the Green's-function multiply included): FFTW with
// the threads OpenMP gives (OMP_NUM_THREADS), and cuFFT when a GPU is present, both with the
// copies between host and GPU ("cufft") and without them ("device": source fill, forward
// transform, multiply, backward transform, ghost gather).
//
//   tessera_poisson_bench [--cpu | --gpu] [N ...]      (default: both; 64 128 256)
//   mpirun -np R tessera_poisson_bench [--cpu | --gpu] [N ...]   (the slabs over R ranks)
//
// On one rank: "cufft" is the solve of the runs (SlabPoisson's passes on the GPU),
// "cufft3d" cuFFT's own 3D plans beside it (other bits).
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
#include "tessera/parallel/mpi.hpp"

using namespace tessera::gravity;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int run(int argc, char** argv);

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

// Several ranks (under mpirun): SlabPoisson over the ranks, FFTW slabs on the hosts and
// cuFFT slabs on the ranks' GPUs. "solve": the distributed solve (each rank its planes in,
// its ghosted planes out); "+gather": with the gather of the whole potential onto every
// rank, as a run does. The slowest rank's median of 5 after one untimed solve.
struct SlabTiming {
  double solve = -1, gathered = -1, device = -1;
  std::string routes;
};

SlabTiming time_slabs(std::array<int, 3> n, bool periodic, bool gpu,
                      tessera::parallel::Comm& comm) {
  SlabPoisson solver(n, 1.0 / n[0], periodic, comm, gpu);
  const std::size_t plane = std::size_t(n[0]) * n[1];
  std::vector<double> rho(std::max<std::size_t>(std::size_t(solver.planes()) * plane, 1));
  for (std::size_t c = 0; c < rho.size(); ++c)
    rho[c] = 1 + 0.5 * std::sin(0.001 * double(c + solver.first_plane() * plane));
  std::vector<double> phi(std::size_t(n[0] + 2) * (n[1] + 2) * (n[2] + 2));
  std::vector<double> solve, gathered, device;
  for (int r = 0; r < 6; ++r) {
    comm.max(0.0);
    auto t0 = std::chrono::steady_clock::now();
    solver.solve(rho.data(), 1.0);
    const double a = comm.max(seconds_since(t0));
    device.push_back(comm.max(solver.last_device_seconds()));
    t0 = std::chrono::steady_clock::now();
    solver.gather_ghosted(phi.data());
    const double b = a + comm.max(seconds_since(t0));
    if (r == 0) continue;
    solve.push_back(a), gathered.push_back(b);
  }
  for (auto* v : {&solve, &gathered, &device}) std::sort(v->begin(), v->end());
  return {solve[2], gathered[2], device[2], solver.routes()};
}

int slab_table(const std::vector<int>& sizes, bool cpu, bool gpu) {
  auto& comm = tessera::parallel::world_comm();
  const bool root = comm.rank() == 0;
  if (root)
    std::printf(
        "# root-level FFT Poisson solve in z-slabs over %d ranks, ms per solve (slowest rank, "
        "median of 5); FFTW with %d threads per rank%s\n"
        "%6s %-9s %12s %12s %12s %12s %12s\n",
        comm.size(), omp_get_max_threads(), gpu ? "; cuFFT on each rank's GPU" : "", "N",
        "boundary", "fftw_solve", "fftw_gather", "cufft_solve", "cufft_gather", "device_ms");
  std::string routes;
  for (const int n : sizes)
    for (const bool periodic : {true, false}) {
      SlabTiming f, c;
      if (cpu) f = time_slabs({n, n, n}, periodic, false, comm);
      if (gpu) c = time_slabs({n, n, n}, periodic, true, comm), routes = c.routes;
      auto col = [](double s) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.3f", 1e3 * s);
        return s < 0 ? std::string("-") : std::string(buf);
      };
      if (root)
        std::printf("%6d %-9s %12s %12s %12s %12s %12s\n", n, periodic ? "periodic" : "isolated",
                    col(f.solve).c_str(), col(f.gathered).c_str(), col(c.solve).c_str(),
                    col(c.gathered).c_str(), col(c.device).c_str());
      std::fflush(stdout);
    }
  if (root && gpu) std::printf("# GPU slabs: %s\n", routes.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  tessera::parallel::start_mpi();
  const int code = run(argc, argv);
  tessera::parallel::end_mpi(code, true);
  return code;
}

namespace {

int run(int argc, char** argv) {
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
  if (gpu) tessera::exec::select_cuda_device(tessera::parallel::node_rank());
  if (tessera::parallel::world_comm().size() > 1) return slab_table(sizes, cpu, gpu);
  std::printf(
      "# root-level FFT Poisson solve, ms per solve (median of 5); FFTW with %d threads%s\n",
      omp_get_max_threads(), gpu ? "; cuFFT on the GPU" : "");
  std::printf("%6s %-9s %12s %12s %12s %12s %12s\n", "N", "boundary", "fftw_ms", "cufft_ms",
              "device_ms", "cufft3d_ms", "device3d_ms");
  for (const int n : sizes) {
    const std::size_t cells = std::size_t(n) * n * n;
    std::vector<double> rho(cells), phi(std::size_t(n + 2) * (n + 2) * (n + 2));
    for (std::size_t c = 0; c < cells; ++c) rho[c] = 1 + 0.5 * std::sin(0.001 * double(c));
    const double h = 1.0 / n;
    for (const bool periodic : {true, false}) {
      double fftw_ms = -1;
      Timing cu, cu3;
      if (cpu)
        fftw_ms = 1e3 * time_solver(*make_fftw_poisson({n, n, n}, h, periodic), rho, phi).total;
      if (gpu) cu = time_solver(*make_cufft_poisson({n, n, n}, h, periodic), rho, phi);
      if (gpu) cu3 = time_solver(*make_cufft3d_poisson({n, n, n}, h, periodic), rho, phi);
      auto col = [](double ms) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.3f", ms);
        return ms < 0 ? std::string("-") : std::string(buf);
      };
      std::printf("%6d %-9s %12s %12s %12s %12s %12s\n", n, periodic ? "periodic" : "isolated",
                  col(fftw_ms).c_str(), col(gpu ? 1e3 * cu.total : -1).c_str(),
                  col(gpu ? 1e3 * cu.device : -1).c_str(), col(gpu ? 1e3 * cu3.total : -1).c_str(),
                  col(gpu ? 1e3 * cu3.device : -1).c_str());
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
