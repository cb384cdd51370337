#include "tessera/gravity/fft_poisson.hpp"

#include <fftw3.h>

#include <cmath>
#include <mutex>
#include <numbers>
#include <string>

#include "tessera/core/error.hpp"

namespace tessera::gravity {

namespace {

// FFTW's planner is not thread-safe, and its thread support is initialised once.
std::mutex& planner_mutex() {
  static std::mutex m;
  return m;
}

void init_threads_once() {
  static const bool ok = fftw_init_threads() != 0;
  if (!ok) throw Error(ErrorKind::kInternal, "FFTW could not start its threads");
}

}  // namespace

struct PeriodicFftPoisson::Plans {
  double* real = nullptr;        // [n2][n1][n0]
  fftw_complex* spec = nullptr;  // [n2][n1][n0/2 + 1]
  double* inv_eigen = nullptr;   // 1 / eigenvalue per spectral cell (0 for k = 0)
  fftw_plan forward = nullptr, backward = nullptr;
  ~Plans() {
    std::lock_guard lock(planner_mutex());
    if (forward) fftw_destroy_plan(forward);
    if (backward) fftw_destroy_plan(backward);
    fftw_free(real);
    fftw_free(spec);
    fftw_free(inv_eigen);
  }
};

PeriodicFftPoisson::PeriodicFftPoisson(std::array<int, 3> n, double h, int threads)
    : n_(n), plans_(std::make_unique<Plans>()) {
  for (int d = 0; d < 3; ++d)
    if (n[d] < 1)
      throw Error(ErrorKind::kInternal, "FFT Poisson grid of " + std::to_string(n[d]) +
                                            " cells along axis " + std::to_string(d));
  if (!(h > 0)) throw Error(ErrorKind::kInternal, "FFT Poisson grid with a cell width <= 0");
  const std::size_t cells = std::size_t(n[0]) * n[1] * n[2];
  const int nh = n[0] / 2 + 1;
  const std::size_t modes = std::size_t(nh) * n[1] * n[2];
  Plans& p = *plans_;
  p.real = static_cast<double*>(fftw_malloc(sizeof(double) * cells));
  p.spec = static_cast<fftw_complex*>(fftw_malloc(sizeof(fftw_complex) * modes));
  p.inv_eigen = static_cast<double*>(fftw_malloc(sizeof(double) * modes));
  if (!p.real || !p.spec || !p.inv_eigen)
    throw Error(ErrorKind::kInternal, "out of memory for the FFT Poisson buffers");
  {
    std::lock_guard lock(planner_mutex());
    init_threads_once();
    fftw_plan_with_nthreads(threads < 1 ? 1 : threads);
    // FFTW's dimensions are row-major: z, y, x (x fastest, halved by the r2c transform).
    p.forward = fftw_plan_dft_r2c_3d(n[2], n[1], n[0], p.real, p.spec, FFTW_ESTIMATE);
    p.backward = fftw_plan_dft_c2r_3d(n[2], n[1], n[0], p.spec, p.real, FFTW_ESTIMATE);
  }
  if (!p.forward || !p.backward)
    throw Error(ErrorKind::kInternal, "FFTW could not plan the Poisson transforms");
  // Eigenvalues of the 7-point Laplacian on a periodic grid: for the mode
  // exp(2 pi i k.x / n), (phi_{j+1} - 2 phi_j + phi_{j-1}) / h^2 = -(4/h^2) sin^2(pi k / n)
  // phi_j per axis. The c2r transform is unnormalised: 1/cells folded in here.
  auto s2 = [](int k, int m) {
    const double s = std::sin(std::numbers::pi * k / m);
    return s * s;
  };
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < nh; ++i) {
        const double lambda = -4.0 / (h * h) * (s2(i, n[0]) + s2(j, n[1]) + s2(k, n[2]));
        const std::size_t m = (std::size_t(k) * n[1] + j) * nh + i;
        p.inv_eigen[m] = (i == 0 && j == 0 && k == 0) ? 0.0 : 1.0 / (lambda * double(cells));
      }
}

PeriodicFftPoisson::~PeriodicFftPoisson() = default;

double PeriodicFftPoisson::solve(const double* rho, double four_pi_g, double* phi) {
  Plans& p = *plans_;
  const std::size_t cells = std::size_t(n_[0]) * n_[1] * n_[2];
  const std::size_t modes = std::size_t(n_[0] / 2 + 1) * n_[1] * n_[2];
  double sum = 0;
#pragma omp parallel for reduction(+ : sum)
  for (std::size_t c = 0; c < cells; ++c) sum += rho[c];
  const double mean = sum / double(cells);
#pragma omp parallel for
  for (std::size_t c = 0; c < cells; ++c) p.real[c] = four_pi_g * (rho[c] - mean);
  fftw_execute(p.forward);
#pragma omp parallel for
  for (std::size_t m = 0; m < modes; ++m) {
    p.spec[m][0] *= p.inv_eigen[m];
    p.spec[m][1] *= p.inv_eigen[m];
  }
  fftw_execute(p.backward);
#pragma omp parallel for
  for (std::size_t c = 0; c < cells; ++c) phi[c] = p.real[c];
  return mean;
}

}  // namespace tessera::gravity
