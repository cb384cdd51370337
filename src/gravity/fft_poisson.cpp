#include "tessera/gravity/fft_poisson.hpp"

#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <numbers>
#include <string>
#include <vector>

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

void check_shape(const std::array<int, 3>& n) {
  for (int d = 0; d < 3; ++d)
    if (n[d] < 1)
      throw Error(ErrorKind::kInternal,
                  "FFT grid of " + std::to_string(n[d]) + " cells along axis " + std::to_string(d));
}

}  // namespace

// One plan per pass and direction, each for the rows of one plane (x, y) or one column
// plane (z); FFTW's new-array execute functions run them on any plane, from any thread.
struct RealFft3d::Plans {
  fftw_plan x_forward = nullptr, x_backward = nullptr;
  fftw_plan y_forward = nullptr, y_backward = nullptr;
  fftw_plan z_forward = nullptr, z_backward = nullptr;
  ~Plans() {
    std::lock_guard lock(planner_mutex());
    for (fftw_plan p : {x_forward, x_backward, y_forward, y_backward, z_forward, z_backward})
      if (p) fftw_destroy_plan(p);
  }
};

RealFft3d::RealFft3d(std::array<int, 3> n) : n_(n), plans_(std::make_unique<Plans>()) {
  check_shape(n);
  real_ = static_cast<double*>(fftw_malloc(sizeof(double) * cells()));
  spec_ = reinterpret_cast<std::complex<double>*>(fftw_malloc(sizeof(fftw_complex) * modes()));
  if (!real_ || !spec_) {
    fftw_free(real_);
    fftw_free(spec_);
    throw Error(ErrorKind::kResources,
                "out of memory for the FFT buffers of " + std::to_string(cells()) + " cells");
  }
  const int n0 = n[0], n1 = n[1], n2 = n[2], nh = n0 / 2 + 1;
  auto* spec = reinterpret_cast<fftw_complex*>(spec_);
  // Serial plans (one thread each), estimated (no array is touched while planning) and
  // unaligned (a plane's offset need not keep FFTW's SIMD alignment).
  const unsigned flags = FFTW_ESTIMATE | FFTW_UNALIGNED;
  Plans& p = *plans_;
  {
    std::lock_guard lock(planner_mutex());
    init_threads_once();
    fftw_plan_with_nthreads(1);
    // x: n1 rows of one z-plane, contiguous.
    p.x_forward =
        fftw_plan_many_dft_r2c(1, &n0, n1, real_, nullptr, 1, n0, spec, nullptr, 1, nh, flags);
    p.x_backward =
        fftw_plan_many_dft_c2r(1, &n0, n1, spec, nullptr, 1, nh, real_, nullptr, 1, n0, flags);
    // y: the nh columns of one z-plane, stride nh.
    p.y_forward = fftw_plan_many_dft(1, &n1, nh, spec, nullptr, nh, 1, spec, nullptr, nh, 1,
                                     FFTW_FORWARD, flags);
    p.y_backward = fftw_plan_many_dft(1, &n1, nh, spec, nullptr, nh, 1, spec, nullptr, nh, 1,
                                      FFTW_BACKWARD, flags);
    // z: the nh columns of one y-plane, stride n1 nh.
    p.z_forward = fftw_plan_many_dft(1, &n2, nh, spec, nullptr, n1 * nh, 1, spec, nullptr, n1 * nh,
                                     1, FFTW_FORWARD, flags);
    p.z_backward = fftw_plan_many_dft(1, &n2, nh, spec, nullptr, n1 * nh, 1, spec, nullptr, n1 * nh,
                                      1, FFTW_BACKWARD, flags);
  }
  for (fftw_plan q :
       {p.x_forward, p.x_backward, p.y_forward, p.y_backward, p.z_forward, p.z_backward})
    if (!q) throw Error(ErrorKind::kInternal, "FFTW could not plan the 3D transform passes");
}

RealFft3d::~RealFft3d() {
  plans_.reset();
  fftw_free(real_);
  fftw_free(spec_);
}

void RealFft3d::forward() {
  const int n1 = n_[1], n2 = n_[2], nh = n_[0] / 2 + 1;
  auto* spec = reinterpret_cast<fftw_complex*>(spec_);
  const Plans& p = *plans_;
#pragma omp parallel for schedule(static)
  for (int k = 0; k < n2; ++k)
    fftw_execute_dft_r2c(p.x_forward, real_ + std::size_t(k) * n1 * n_[0],
                         spec + std::size_t(k) * n1 * nh);
#pragma omp parallel for schedule(static)
  for (int k = 0; k < n2; ++k) {
    fftw_complex* plane = spec + std::size_t(k) * n1 * nh;
    fftw_execute_dft(p.y_forward, plane, plane);
  }
#pragma omp parallel for schedule(static)
  for (int j = 0; j < n1; ++j) {
    fftw_complex* plane = spec + std::size_t(j) * nh;
    fftw_execute_dft(p.z_forward, plane, plane);
  }
}

void RealFft3d::backward() {
  const int n1 = n_[1], n2 = n_[2], nh = n_[0] / 2 + 1;
  auto* spec = reinterpret_cast<fftw_complex*>(spec_);
  const Plans& p = *plans_;
#pragma omp parallel for schedule(static)
  for (int j = 0; j < n1; ++j) {
    fftw_complex* plane = spec + std::size_t(j) * nh;
    fftw_execute_dft(p.z_backward, plane, plane);
  }
#pragma omp parallel for schedule(static)
  for (int k = 0; k < n2; ++k) {
    fftw_complex* plane = spec + std::size_t(k) * n1 * nh;
    fftw_execute_dft(p.y_backward, plane, plane);
  }
#pragma omp parallel for schedule(static)
  for (int k = 0; k < n2; ++k)
    fftw_execute_dft_c2r(p.x_backward, spec + std::size_t(k) * n1 * nh,
                         real_ + std::size_t(k) * n1 * n_[0]);
}

double grid_mean(const double* values, std::array<int, 3> n) {
  const std::size_t plane = std::size_t(n[0]) * n[1];
  std::vector<double> sums(n[2], 0.0);
#pragma omp parallel for schedule(static)
  for (int k = 0; k < n[2]; ++k) {
    double s = 0;
    for (std::size_t c = 0; c < plane; ++c) s += values[k * plane + c];
    sums[k] = s;
  }
  double sum = 0;
  for (const double s : sums) sum += s;
  return sum / (double(plane) * n[2]);
}

std::vector<double> periodic_multipliers(std::array<int, 3> n, double h) {
  check_shape(n);
  if (!(h > 0)) throw Error(ErrorKind::kInternal, "FFT Poisson grid with a cell width <= 0");
  const int nh = n[0] / 2 + 1;
  std::vector<double> inv(std::size_t(nh) * n[1] * n[2]);
  // Eigenvalues of the 7-point Laplacian on a periodic grid: for the mode
  // exp(2 pi i k.x / n), (phi_{j+1} - 2 phi_j + phi_{j-1}) / h^2 = -(4/h^2) sin^2(pi k / n)
  // phi_j per axis. The backward transform is unnormalised: 1/cells folded in here.
  auto s2 = [](int k, int m) {
    const double s = std::sin(std::numbers::pi * k / m);
    return s * s;
  };
  const double cells = double(n[0]) * n[1] * n[2];
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < nh; ++i) {
        const double lambda = -4.0 / (h * h) * (s2(i, n[0]) + s2(j, n[1]) + s2(k, n[2]));
        const std::size_t m = (std::size_t(k) * n[1] + j) * nh + i;
        inv[m] = (i == 0 && j == 0 && k == 0) ? 0.0 : 1.0 / (lambda * cells);
      }
  return inv;
}

namespace {

// e^{-x} I_n(x) for n = 0 .. out.size() - 1 (x >= 0): Miller's backward recurrence
// I_{n-1} = I_{n+1} + (2n / x) I_n from far above, normalised with
// e^{-x} (I_0 + 2 sum_{n>=1} I_n) = 1 (Abramowitz & Stegun 9.6.26, 9.6.37), rescaled on the
// way down so that nothing overflows.
void scaled_bessel_i(double x, std::vector<double>& out) {
  const int want = static_cast<int>(out.size());
  if (x == 0) {
    std::fill(out.begin(), out.end(), 0.0);
    out[0] = 1;
    return;
  }
  // e^{-x} I_n(x) falls like exp(-n^2 / 2x) beyond n ~ x: start where it is below 1e-30.
  const int start =
      want + 30 + static_cast<int>(std::sqrt(140.0 * x)) + static_cast<int>(x > 50 ? 0 : x);
  double above = 0, cur = 1e-280, sum = 0;
  for (int n = start; n >= 1; --n) {
    const double below = above + (2.0 * n / x) * cur;  // I_{n-1}
    if (n < want) out[n] = cur;
    sum += 2 * cur;
    above = cur;
    cur = below;
    if (std::fabs(cur) > 1e250) {  // rescale everything kept so far
      const double f = 1e-250;
      cur *= f, above *= f, sum *= f;
      for (int k = n; k < want; ++k) out[k] *= f;
    }
  }
  out[0] = cur;
  sum += cur;
  for (double& v : out) v /= sum;
}

}  // namespace

std::vector<double> lattice_green_table(int r) {
  // G(a, b, c) = int_0^inf e^{-6t} I_a(2t) I_b(2t) I_c(2t) dt (the simple cubic lattice's
  // Green's function, e.g. Joyce 1971; sum over the 6 neighbours of G - 6 G = -delta), by
  // 16-point Gauss-Legendre on [0, 1/2] and on geometric panels up to T = 2e5, plus the
  // tail from the large-argument expansion e^{-x} I_n(x) ~ (1 - (4n^2 - 1) / 8x) / sqrt(2 pi x).
  static const double xg[8] = {0.0950125098376374, 0.2816035507792589, 0.4580167776572274,
                               0.6178762444026438, 0.7554044083550030, 0.8656312023878318,
                               0.9445750230732326, 0.9894009349916499};
  static const double wg[8] = {0.1894506104550685, 0.1826034150449236, 0.1691565193950025,
                               0.1495959888165767, 0.1246289712555339, 0.0951585116824928,
                               0.0622535239386479, 0.0271524594117541};
  const int n = r + 1;
  std::vector<double> g(std::size_t(n) * n * n, 0.0);
  std::vector<std::pair<double, double>> nodes;  // (t, weight)
  auto panel = [&](double a, double b) {
    const double mid = 0.5 * (a + b), half = 0.5 * (b - a);
    for (int k = 0; k < 8; ++k)
      for (const double sgn : {-1.0, 1.0})
        nodes.push_back({mid + sgn * half * xg[k], half * wg[k]});
  };
  const double t_end = 2e5;
  panel(0, 0.5);
  for (double a = 0.5; a < t_end; a *= 1.25) panel(a, std::min(a * 1.25, t_end));
  std::vector<double> iv(n);
  std::vector<double> table(nodes.size() * n);
  for (std::size_t q = 0; q < nodes.size(); ++q) {
    scaled_bessel_i(2 * nodes[q].first, iv);
    std::copy(iv.begin(), iv.end(), table.begin() + q * n);
  }
  const double c0 = std::pow(4 * std::numbers::pi, -1.5);
#pragma omp parallel for schedule(dynamic)
  for (int c = 0; c < n; ++c)
    for (int b = 0; b <= c; ++b)
      for (int a = 0; a <= b; ++a) {
        double sum = 0;
        for (std::size_t q = 0; q < nodes.size(); ++q) {
          const double* t = table.data() + q * n;
          sum += nodes[q].second * t[a] * t[b] * t[c];
        }
        const double mu = (4.0 * a * a - 1) + (4.0 * b * b - 1) + (4.0 * c * c - 1);
        sum += c0 * (2 / std::sqrt(t_end) - mu / 16 * (2.0 / 3) * std::pow(t_end, -1.5));
        const int perm[6][3] = {{a, b, c}, {a, c, b}, {b, a, c}, {b, c, a}, {c, a, b}, {c, b, a}};
        for (const auto& p : perm) g[(std::size_t(p[2]) * n + p[1]) * n + p[0]] = sum;
      }
  return g;
}

double lattice_green_far(int a, int b, int c) {
  const double x = a, y = b, z = c;
  const double r2 = x * x + y * y + z * z, r = std::sqrt(r2);
  const double quartic = (x * x * x * x + y * y * y * y + z * z * z * z) / (r2 * r2);
  return 1 / (4 * std::numbers::pi * r) + (5 * quartic - 3) / (32 * std::numbers::pi * r2 * r);
}

namespace {

// The isolated Green's function's multipliers, transformed with `fft` (on the doubled grid
// of n; its real array is overwritten).
std::vector<double> green_multipliers(RealFft3d& fft, std::array<int, 3> n, double h) {
  if (!(h > 0)) throw Error(ErrorKind::kInternal, "FFT Poisson grid with a cell width <= 0");
  const auto& m = fft.shape();
  static const std::vector<double> near = lattice_green_table(kLatticeGreenExact);
  // Index a along an axis is the separation a for a <= n, a - 2n beyond (so index n is the
  // separation +-n, both |r| = n h).
  double* g = fft.real();
#pragma omp parallel for schedule(static)
  for (int c = 0; c < m[2]; ++c)
    for (int b = 0; b < m[1]; ++b)
      for (int a = 0; a < m[0]; ++a) {
        const int s[3] = {a <= n[0] ? a : a - m[0], b <= n[1] ? b : b - m[1],
                          c <= n[2] ? c : c - m[2]};
        const int x = std::abs(s[0]), y = std::abs(s[1]), z = std::abs(s[2]);
        // -4 pi h^2 G_L(s): the potential per unit G of a cell of unit density, the 7-point
        // operator's own (-h^2 / |s| far away).
        const double lgf =
            std::max({x, y, z}) <= kLatticeGreenExact
                ? near[(std::size_t(z) * (kLatticeGreenExact + 1) + y) * (kLatticeGreenExact + 1) +
                       x]
                : lattice_green_far(x, y, z);
        g[(std::size_t(c) * m[1] + b) * m[0] + a] = -4 * std::numbers::pi * h * h * lgf;
      }
  fft.forward();
  // G is even in every axis, so its transform is real; the backward transform's 1/cells
  // is folded in.
  std::vector<double> out(fft.modes());
  const std::complex<double>* spec = fft.spectrum();
  const double inv_cells = 1.0 / double(fft.cells());
  for (std::size_t k = 0; k < out.size(); ++k) out[k] = spec[k].real() * inv_cells;
  return out;
}

}  // namespace

std::vector<double> isolated_multipliers(std::array<int, 3> n, double h) {
  check_shape(n);
  RealFft3d fft({2 * n[0], 2 * n[1], 2 * n[2]});
  return green_multipliers(fft, n, h);
}

PeriodicFftPoisson::PeriodicFftPoisson(std::array<int, 3> n, double h)
    : fft_(n), inv_eigen_(periodic_multipliers(n, h)) {}

PeriodicFftPoisson::~PeriodicFftPoisson() = default;

double PeriodicFftPoisson::solve(const double* rho, double four_pi_g, double* phi) {
  const auto& n = fft_.shape();
  const std::size_t cells = fft_.cells(), modes = fft_.modes();
  const double mean = grid_mean(rho, n);
  double* real = fft_.real();
#pragma omp parallel for schedule(static)
  for (std::size_t c = 0; c < cells; ++c) real[c] = four_pi_g * (rho[c] - mean);
  fft_.forward();
  std::complex<double>* spec = fft_.spectrum();
#pragma omp parallel for schedule(static)
  for (std::size_t m = 0; m < modes; ++m) spec[m] *= inv_eigen_[m];
  fft_.backward();
#pragma omp parallel for schedule(static)
  for (std::size_t c = 0; c < cells; ++c) phi[c] = real[c];
  return mean;
}

IsolatedFftPoisson::IsolatedFftPoisson(std::array<int, 3> n, double h)
    : n_(n), fft_({2 * n[0], 2 * n[1], 2 * n[2]}) {
  green_hat_ = green_multipliers(fft_, n, h);
}

IsolatedFftPoisson::~IsolatedFftPoisson() = default;

void IsolatedFftPoisson::solve(const double* rho, double four_pi_g, double* phi) {
  const auto& m = fft_.shape();
  const int n0 = n_[0], n1 = n_[1], n2 = n_[2];
  double* real = fft_.real();
#pragma omp parallel for schedule(static)
  for (int k = 0; k < m[2]; ++k)
    for (int j = 0; j < m[1]; ++j) {
      double* row = real + (std::size_t(k) * m[1] + j) * m[0];
      const bool inside = k < n2 && j < n1;
      for (int i = 0; i < m[0]; ++i)
        row[i] = inside && i < n0 ? rho[(std::size_t(k) * n1 + j) * n0 + i] : 0.0;
    }
  fft_.forward();
  std::complex<double>* spec = fft_.spectrum();
  const double g_const = four_pi_g / (4 * std::numbers::pi);
  const std::size_t modes = fft_.modes();
#pragma omp parallel for schedule(static)
  for (std::size_t k = 0; k < modes; ++k) spec[k] *= g_const * green_hat_[k];
  fft_.backward();
  // Cells -1 .. n of the domain: -1 is the doubled grid's last cell (cyclic convolution).
#pragma omp parallel for schedule(static)
  for (int k = -1; k <= n2; ++k)
    for (int j = -1; j <= n1; ++j)
      for (int i = -1; i <= n0; ++i) {
        const int a = (i + m[0]) % m[0], b = (j + m[1]) % m[1], c = (k + m[2]) % m[2];
        phi[(std::size_t(k + 1) * (n1 + 2) + (j + 1)) * (n0 + 2) + (i + 1)] =
            real[(std::size_t(c) * m[1] + b) * m[0] + a];
      }
}

namespace {

class FftwPeriodic final : public RootPoissonSolver {
 public:
  FftwPeriodic(std::array<int, 3> n, double h)
      : n_(n), solver_(n, h), phi_(std::size_t(n[0]) * n[1] * n[2]) {}
  double solve(const double* rho, double four_pi_g, double* out) override {
    const double mean = solver_.solve(rho, four_pi_g, phi_.data());
    const int n0 = n_[0], n1 = n_[1], n2 = n_[2];
    // The ghost layer from the periodic images.
#pragma omp parallel for schedule(static)
    for (int k = -1; k <= n2; ++k)
      for (int j = -1; j <= n1; ++j)
        for (int i = -1; i <= n0; ++i) {
          const int a = (i + n0) % n0, b = (j + n1) % n1, c = (k + n2) % n2;
          out[(std::size_t(k + 1) * (n1 + 2) + (j + 1)) * (n0 + 2) + (i + 1)] =
              phi_[(std::size_t(c) * n1 + b) * n0 + a];
        }
    return mean;
  }
  const char* library() const override {
    return "FFTW";
  }

 private:
  std::array<int, 3> n_;
  PeriodicFftPoisson solver_;
  std::vector<double> phi_;
};

class FftwIsolated final : public RootPoissonSolver {
 public:
  FftwIsolated(std::array<int, 3> n, double h) : solver_(n, h) {}
  double solve(const double* rho, double four_pi_g, double* out) override {
    solver_.solve(rho, four_pi_g, out);
    return 0;
  }
  const char* library() const override { return "FFTW"; }

 private:
  IsolatedFftPoisson solver_;
};

}  // namespace

std::unique_ptr<RootPoissonSolver> make_fftw_poisson(std::array<int, 3> n, double h,
                                                     bool periodic) {
  if (periodic) return std::make_unique<FftwPeriodic>(n, h);
  return std::make_unique<FftwIsolated>(n, h);
}

}  // namespace tessera::gravity
