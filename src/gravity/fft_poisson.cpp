#include "tessera/gravity/fft_poisson.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "src/gravity/device_slab.hpp"
#include "tessera/core/error.hpp"
#include "tessera/exec/executor.hpp"

namespace tessera::gravity {

namespace {

void check_shape(const std::array<int, 3>& n) {
  for (int d = 0; d < 3; ++d)
    if (n[d] < 1)
      throw Error(ErrorKind::kInternal,
                  "FFT grid of " + std::to_string(n[d]) + " cells along axis " + std::to_string(d));
}

}  // namespace

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

namespace {

// The periodic multiplier of mode (i, j, k). Eigenvalues of the 7-point Laplacian on a
// periodic grid: for the mode exp(2 pi i k.x / n),
// (phi_{j+1} - 2 phi_j + phi_{j-1}) / h^2 = -(4/h^2) sin^2(pi k / n) phi_j per axis. The
// backward transform is unnormalised: 1/cells folded in here.
double periodic_multiplier(int i, int j, int k, const std::array<int, 3>& n, double h) {
  if (i == 0 && j == 0 && k == 0) return 0.0;
  auto s2 = [](int q, int m) {
    const double s = std::sin(std::numbers::pi * q / m);
    return s * s;
  };
  const double cells = double(n[0]) * n[1] * n[2];
  const double lambda = -4.0 / (h * h) * (s2(i, n[0]) + s2(j, n[1]) + s2(k, n[2]));
  return 1.0 / (lambda * cells);
}

void check_width(double h) {
  if (!(h > 0)) throw Error(ErrorKind::kInternal, "FFT Poisson grid with a cell width <= 0");
}

}  // namespace

std::vector<double> periodic_multipliers(std::array<int, 3> n, double h) {
  check_shape(n);
  check_width(h);
  const int nh = n[0] / 2 + 1;
  std::vector<double> inv(std::size_t(nh) * n[1] * n[2]);
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < nh; ++i)
        inv[(std::size_t(k) * n[1] + j) * nh + i] = periodic_multiplier(i, j, k, n, h);
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

// The isolated Green's function's multipliers of this rank's modes, by a forward transform
// with `fft` (the doubled grid of n, its input planes 0 .. n[2]; a collective). G is even
// along z, so the planes beyond are the mirror images of those (SlabFft3d::forward).
std::vector<double> green_multipliers(SlabFft3d& fft, std::array<int, 3> n, double h) {
  check_width(h);
  const auto& m = fft.shape();
  static const std::vector<double> near = lattice_green_table(kLatticeGreenExact);
  // Index a along an axis is the separation a for a <= n, a - 2n beyond (so index n is the
  // separation +-n, both |r| = n h).
  double* g = fft.input();
  const int first = fft.in_first();
#pragma omp parallel for schedule(static)
  for (int z = 0; z < fft.in_count(); ++z)
    for (int b = 0; b < m[1]; ++b)
      for (int a = 0; a < m[0]; ++a) {
        const int c = first + z;
        const int s[3] = {a <= n[0] ? a : a - m[0], b <= n[1] ? b : b - m[1],
                          c <= n[2] ? c : c - m[2]};
        const int x = std::abs(s[0]), y = std::abs(s[1]), w = std::abs(s[2]);
        // -4 pi h^2 G_L(s): the potential per unit G of a cell of unit density, the 7-point
        // operator's own (-h^2 / |s| far away).
        const double lgf =
            std::max({x, y, w}) <= kLatticeGreenExact
                ? near[(std::size_t(w) * (kLatticeGreenExact + 1) + y) * (kLatticeGreenExact + 1) +
                       x]
                : lattice_green_far(x, y, w);
        g[(std::size_t(z) * m[1] + b) * m[0] + a] = -4 * std::numbers::pi * h * h * lgf;
      }
  fft.forward(true);
  // G is even in every axis, so its transform is real; the backward transform's 1/cells
  // is folded in.
  std::vector<double> out(fft.spectrum_size());
  const std::complex<double>* spec = fft.spectrum();
  const double inv_cells = 1.0 / (double(m[0]) * m[1] * m[2]);
  for (std::size_t k = 0; k < out.size(); ++k) out[k] = spec[k].real() * inv_cells;
  return out;
}

// The z-planes of the transform grid (m2 planes) that the ghosted potential's planes
// t = 0 .. n2 + 1 (k = t - 1) come from: the periodic images, or the cyclic convolution's
// cells -1 .. n2 of the doubled grid.
std::vector<int> ghosted_plane_list(int n2, int m2) {
  std::vector<int> z(n2 + 2);
  for (int t = 0; t < n2 + 2; ++t) z[t] = (t - 1 + m2) % m2;
  return z;
}

// The input planes: the density's (periodic), or those and plane n2, the doubled grid's
// planes that its Green's function is the mirror image of beyond (isolated; plane n2 is zero
// in the density's padding).
int input_planes(int n2, bool periodic) {
  return periodic ? n2 : n2 + 1;
}

std::array<int, 3> transform_shape(std::array<int, 3> n, bool periodic) {
  check_shape(n);
  return periodic ? n : std::array<int, 3>{2 * n[0], 2 * n[1], 2 * n[2]};
}

}  // namespace

std::vector<double> isolated_multipliers(std::array<int, 3> n, double h) {
  parallel::SerialComm one;
  const auto m = transform_shape(n, false);
  SlabFft3d fft(m, input_planes(n[2], false), {}, one);
  const std::vector<double> local = green_multipliers(fft, n, h);
  // One rank's spectrum is laid out [j][k][i]; the whole grid's is [k][j][i].
  const std::size_t nh = m[0] / 2 + 1;
  std::vector<double> out(local.size());
  for (std::size_t j = 0; j < std::size_t(m[1]); ++j)
    for (std::size_t k = 0; k < std::size_t(m[2]); ++k)
      std::copy_n(local.begin() + (j * m[2] + k) * nh, nh, out.begin() + (k * m[1] + j) * nh);
  return out;
}

SlabPoisson::SlabPoisson(std::array<int, 3> n, double h, bool periodic, parallel::Comm& comm,
                         bool gpu, const std::string& route)
    : n_(n), periodic_(periodic), comm_(comm), out_{n[2] + 2, comm.size()} {
  const auto m = transform_shape(n, periodic);
  // A build without the GPU's code stops before the (large) set-up below.
  if (gpu && !exec::cuda_backend_built())
    throw Error(ErrorKind::kInput,
                "the Poisson solve on the GPU (cuFFT) was requested from a build without the "
                "CUDA backend");
  if (!gpu)
    fft_ = std::make_unique<SlabFft3d>(m, input_planes(n[2], periodic),
                                       ghosted_plane_list(n[2], m[2]), comm);
  std::vector<double> mult;
  if (periodic) {
    check_width(h);
    const EvenPieces rows{m[1], comm.size()};
    const std::size_t nh = m[0] / 2 + 1, row = std::size_t(n[2]) * nh;
    mult.resize(std::size_t(rows.size(comm.rank())) * row);
    for (std::size_t l = 0; l < mult.size(); ++l)
      mult[l] = periodic_multiplier(int(l % nh), rows.first(comm.rank()) + int(l / row),
                                    int((l % row) / nh), n, h);
  } else if (fft_) {
    mult = green_multipliers(*fft_, n, h);
  } else {
    // The Green's function's transform on the host (FFTW, once), forward only.
    SlabFft3d green(m, input_planes(n[2], false), {}, comm);
    mult = green_multipliers(green, n, h);
  }
  if (gpu)
    device_ = make_device_slab_solve(
        {n, m, input_planes(n[2], periodic), ghosted_plane_list(n[2], m[2]), periodic, route}, mult,
        comm);
  else
    multipliers_ = std::move(mult);
  ghosted_.resize(std::size_t(ghosted_planes()) * (n[1] + 2) * (n[0] + 2));
}

SlabPoisson::~SlabPoisson() = default;

int SlabPoisson::first_plane(int r) const {
  return EvenPieces{input_planes(n_[2], periodic_), comm_.size()}.first(r);
}

int SlabPoisson::planes(int r) const {
  const EvenPieces in{input_planes(n_[2], periodic_), comm_.size()};
  return std::max(0, std::min(in.first(r + 1), n_[2]) - in.first(r));
}

const char* SlabPoisson::library() const {
  return device_ ? "cuFFT" : "FFTW";
}

double SlabPoisson::last_device_seconds() const {
  return device_ ? device_->last_device_seconds() : 0.0;
}

std::string SlabPoisson::routes() const {
  return device_ ? device_->routes() : std::string();
}

double SlabPoisson::solve(const double* rho, double four_pi_g, double* ghosted_out) {
  double* const ghosted = ghosted_out ? ghosted_out : ghosted_.data();
  const int n0 = n_[0], n1 = n_[1], n2 = n_[2], planes = this->planes();
  const std::size_t plane = std::size_t(n0) * n1;
  double mean = 0;
  if (periodic_) {
    // The mean as grid_mean forms it: each plane summed in order, then the planes in order.
    std::vector<double> sums(planes, 0.0);
#pragma omp parallel for schedule(static)
    for (int z = 0; z < planes; ++z) {
      double s = 0;
      for (std::size_t c = 0; c < plane; ++c) s += rho[z * plane + c];
      sums[z] = s;
    }
    parallel::Comm& comm = comm_;
    const auto all = comm.allgather(sums);
    double sum = 0;
    for (const auto& q : all)
      for (const double s : q) sum += s;
    mean = sum / (double(plane) * n2);
  }
  if (device_) {
    device_->solve(rho, planes, four_pi_g, mean, four_pi_g / (4 * std::numbers::pi), ghosted);
    return mean;
  }
  const auto& m = fft_->shape();
  double* real = fft_->input();
#pragma omp parallel for schedule(static)
  for (int z = 0; z < fft_->in_count(); ++z)
    for (int j = 0; j < m[1]; ++j) {
      double* row = real + (std::size_t(z) * m[1] + j) * m[0];
      if (z >= planes || j >= n1) {  // the isolated solve's zero padding
        std::fill_n(row, m[0], 0.0);
        continue;
      }
      const double* from = rho + (std::size_t(z) * n1 + j) * n0;
      if (periodic_)
        for (int i = 0; i < m[0]; ++i) row[i] = four_pi_g * (from[i] - mean);
      else
        for (int i = 0; i < m[0]; ++i) row[i] = i < n0 ? from[i] : 0.0;
    }
  fft_->forward();
  std::complex<double>* spec = fft_->spectrum();
  const std::size_t modes = fft_->spectrum_size();
  if (periodic_) {
#pragma omp parallel for schedule(static)
    for (std::size_t k = 0; k < modes; ++k) spec[k] *= multipliers_[k];
  } else {
    const double g_const = four_pi_g / (4 * std::numbers::pi);
#pragma omp parallel for schedule(static)
    for (std::size_t k = 0; k < modes; ++k) spec[k] *= g_const * multipliers_[k];
  }
  fft_->backward();
  // Cells -1 .. n of every axis: the periodic images, or (isolated) the doubled grid's cells
  // (-1 is its last cell: cyclic convolution).
  const double* out = fft_->output();
#pragma omp parallel for schedule(static)
  for (int t = 0; t < fft_->out_count(); ++t)
    for (int j = -1; j <= n1; ++j)
      for (int i = -1; i <= n0; ++i) {
        const int a = (i + m[0]) % m[0], b = (j + m[1]) % m[1];
        ghosted[(std::size_t(t) * (n1 + 2) + (j + 1)) * (n0 + 2) + (i + 1)] =
            out[(std::size_t(t) * m[1] + b) * m[0] + a];
      }
  return mean;
}

void SlabPoisson::gather_ghosted(double* phi) const {
  parallel::Comm& comm = comm_;
  const std::size_t plane = std::size_t(n_[1] + 2) * (n_[0] + 2);
  const EvenPieces pieces{n_[2] + 2, comm.size()};
  if (comm.size() == 1) {
    std::copy(ghosted_.begin(), ghosted_.end(), phi);
    return;
  }
  const auto got = comm.allgather(ghosted_);
  // Agreed: a rank that finds a wrong count stops every rank here.
  parallel::agreed(comm, [&] {
    for (int q = 0; q < comm.size(); ++q) {
      if (got[q].size() != std::size_t(pieces.size(q)) * plane)
        throw Error(ErrorKind::kInternal,
                    "root potential of rank " + std::to_string(q) + ": wrong number of values");
      std::copy(got[q].begin(), got[q].end(), phi + pieces.first(q) * plane);
    }
  });
}

PeriodicFftPoisson::PeriodicFftPoisson(std::array<int, 3> n, double h)
    : solver_(n, h, true, comm_) {}

PeriodicFftPoisson::~PeriodicFftPoisson() = default;

double PeriodicFftPoisson::solve(const double* rho, double four_pi_g, double* phi) {
  const auto& n = solver_.shape();
  const double mean = solver_.solve(rho, four_pi_g);
  const double* g = solver_.ghosted();
#pragma omp parallel for schedule(static)
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i)
        phi[(std::size_t(k) * n[1] + j) * n[0] + i] =
            g[(std::size_t(k + 1) * (n[1] + 2) + j + 1) * (n[0] + 2) + i + 1];
  return mean;
}

IsolatedFftPoisson::IsolatedFftPoisson(std::array<int, 3> n, double h)
    : solver_(n, h, false, comm_) {}

IsolatedFftPoisson::~IsolatedFftPoisson() = default;

void IsolatedFftPoisson::solve(const double* rho, double four_pi_g, double* phi) {
  solver_.solve(rho, four_pi_g);
  solver_.gather_ghosted(phi);
}

void SlabPoisson::solve_on_device(const double* device_rho, double four_pi_g, double mean,
                                  double* device_ghosted) {
  if (!device_) throw Error(ErrorKind::kInternal, "the root solve from GPU memory needs the GPU");
  device_->solve_on_device(device_rho, planes(), four_pi_g, periodic_ ? mean : 0.0,
                           four_pi_g / (4 * std::numbers::pi), device_ghosted);
}

void RootPoissonSolver::solve_on_device(const double*, double, double, double*) {
  throw Error(
      ErrorKind::kInternal,
      std::string("the root solve from GPU memory was asked of the ") + library() + " solver");
}

namespace {

// The whole root grid on this process (one rank, or every rank of a gathered solve): the
// same solve as SlabPoisson's on several ranks, on the host or the GPU.
class WholeRoot final : public RootPoissonSolver {
 public:
  WholeRoot(std::array<int, 3> n, double h, bool periodic, bool gpu)
      : gpu_(gpu), solver_(n, h, periodic, comm_, gpu) {}
  // One rank: its ghosted planes are the whole extended grid, written straight to `out`.
  double solve(const double* rho, double four_pi_g, double* out) override {
    return solver_.solve(rho, four_pi_g, out);
  }
  const char* library() const override { return solver_.library(); }
  double last_device_seconds() const override { return solver_.last_device_seconds(); }
  bool on_device() const override { return gpu_; }
  void solve_on_device(const double* rho, double four_pi_g, double mean, double* phi) override {
    solver_.solve_on_device(rho, four_pi_g, mean, phi);
  }

 private:
  bool gpu_;
  parallel::SerialComm comm_;
  SlabPoisson solver_;
};

}  // namespace

std::unique_ptr<RootPoissonSolver> make_fftw_poisson(std::array<int, 3> n, double h,
                                                     bool periodic) {
  return std::make_unique<WholeRoot>(n, h, periodic, false);
}

std::unique_ptr<RootPoissonSolver> make_cufft_poisson(std::array<int, 3> n, double h,
                                                      bool periodic) {
  return std::make_unique<WholeRoot>(n, h, periodic, true);
}

}  // namespace tessera::gravity
