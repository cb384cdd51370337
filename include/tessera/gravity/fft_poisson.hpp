// Root-level Poisson solvers with FFTs (docs/architecture.md, "Self-gravity").
//
// Transforms. RealFft3d computes the 3D real-to-complex transform as three passes of 1D
// transforms (x: r2c, then y and z: c2c), each pass a single FFTW plan executed on every
// plane of the grid from an OpenMP loop. Every row is thus transformed by the same plan
// whatever the number of threads, so the results are the same bits for any thread count
// (FFTW's own threaded 3D plans split the work, and may choose the algorithm, by the thread
// count) — runs restart bit for bit with a different run.threads and agree across thread
// counts.
//
// PeriodicFftPoisson: the discrete equation of the 7-point Laplacian,
//   (1/h^2) sum over the 6 face neighbours of (phi_nb - phi) = 4 pi G (rho - mean rho),
// solved exactly (to round-off) by dividing the transform of the right-hand side by the
// Laplacian's eigenvalues, -(4/h^2) sum_d sin^2(pi k_d / n_d) (the Green's function of the
// discrete operator; Hockney & Eastwood 1981, ch. 6). The mean density is subtracted first
// (the periodic "Jeans swindle": a periodic potential exists only for zero net source),
// and the potential has zero mean.
//
// IsolatedFftPoisson: vacuum boundaries, phi(x_i) = sum_j G(x_i - x_j) rho_j h^3 with the
// free-space Green's function -G / |r|, computed as a cyclic convolution on the grid
// doubled along every axis with the density zero-padded (Hockney & Eastwood 1981 §6.5.2,
// the doubling-up method). The Green's function is sampled at cell-centre separations;
// at r = 0 it is the potential at the centre of a uniform cube cell due to its own mass,
// -G rho C h^2 = -G (rho h^3) C / h with C = int_{[-1/2,1/2]^3} dV / |r| =
// 3 ln(2 + sqrt 3) - pi / 2 = 2.38008 (kCubeSelfPotential). Its transform is computed once.
// Memory: the doubled grid's real array, its spectrum and the Green's transform, about
// 8 n^3 (1 + 1 + 1/2) doubles.
#pragma once

#include <array>
#include <complex>
#include <memory>
#include <vector>

namespace tessera::gravity {

// int over the unit cube [-1/2, 1/2]^3 of dV / |r|: 8 (1/4) ((3/2) ln(2 + sqrt 3) - pi/4),
// from the integral of 1/|r| over the unit cube with a corner at the origin.
inline constexpr double kCubeSelfPotential = 2.380077363979553;

// Real-to-complex 3D transform of an n[0] x n[1] x n[2] grid (x fastest), unnormalised,
// with the same bits for any number of OpenMP threads.
class RealFft3d {
 public:
  explicit RealFft3d(std::array<int, 3> n);
  ~RealFft3d();
  RealFft3d(const RealFft3d&) = delete;
  RealFft3d& operator=(const RealFft3d&) = delete;

  // The real array [n2][n1][n0] and the spectrum [n2][n1][n0/2 + 1] (both owned).
  double* real() { return real_; }
  std::complex<double>* spectrum() { return spec_; }
  std::size_t cells() const { return std::size_t(n_[0]) * n_[1] * n_[2]; }
  std::size_t modes() const { return std::size_t(n_[0] / 2 + 1) * n_[1] * n_[2]; }
  const std::array<int, 3>& shape() const { return n_; }
  // real -> spectrum (real is kept), and spectrum -> real (the spectrum is overwritten).
  void forward();
  void backward();

 private:
  struct Plans;
  std::array<int, 3> n_;
  double* real_ = nullptr;
  std::complex<double>* spec_ = nullptr;
  std::unique_ptr<Plans> plans_;
};

// The mean of a grid [n2][n1][n0]: the planes summed in parallel, then added in order (the
// same bits for any thread count).
double grid_mean(const double* values, std::array<int, 3> n);

// What multiplies each mode of the real-to-complex spectrum (layout of RealFft3d, the
// backward transform's 1/cells folded in). Periodic: 1 / (eigenvalue of the 7-point
// Laplacian), 0 for the mean. Isolated: the transform of the free-space Green's function
// per unit G and unit density, -h^3 / |r| (the cube's -C h^2 at r = 0), on the doubled grid
// 2n[0] x 2n[1] x 2n[2] (real, since it is even).
std::vector<double> periodic_multipliers(std::array<int, 3> n, double h);
std::vector<double> isolated_multipliers(std::array<int, 3> n, double h);

class PeriodicFftPoisson {
 public:
  // A grid of n[0] x n[1] x n[2] cubic cells of width h.
  PeriodicFftPoisson(std::array<int, 3> n, double h);
  ~PeriodicFftPoisson();
  PeriodicFftPoisson(const PeriodicFftPoisson&) = delete;
  PeriodicFftPoisson& operator=(const PeriodicFftPoisson&) = delete;

  // phi from rho, both [n2][n1][n0] (x fastest); four_pi_g = 4 pi G. Returns the mean
  // density that was subtracted. rho and phi may be the same array.
  double solve(const double* rho, double four_pi_g, double* phi);

  const std::array<int, 3>& shape() const { return fft_.shape(); }

 private:
  RealFft3d fft_;
  std::vector<double> inv_eigen_;  // periodic_multipliers
};

class IsolatedFftPoisson {
 public:
  // A grid of n[0] x n[1] x n[2] cubic cells of width h.
  IsolatedFftPoisson(std::array<int, 3> n, double h);
  ~IsolatedFftPoisson();
  IsolatedFftPoisson(const IsolatedFftPoisson&) = delete;
  IsolatedFftPoisson& operator=(const IsolatedFftPoisson&) = delete;

  // phi from rho; rho is [n2][n1][n0] (x fastest). phi is written on the grid extended by
  // one cell on every side, [n2 + 2][n1 + 2][n0 + 2], x fastest, cell (i, j, k) of the
  // domain at ((k + 1) (n1 + 2) + j + 1) (n0 + 2) + i + 1. The ghost layer holds the free-
  // space potential at those cell centres outside the domain: the doubled grid's cyclic
  // convolution is exact for separations from -n_d to n_d cells, which covers them.
  // four_pi_g = 4 pi G.
  void solve(const double* rho, double four_pi_g, double* phi_ghosted);

  const std::array<int, 3>& shape() const { return n_; }

 private:
  std::array<int, 3> n_;
  RealFft3d fft_;                  // on the doubled grid
  std::vector<double> green_hat_;  // isolated_multipliers
};

// The root-level solve as a run uses it: phi with one ghost layer, [n2 + 2][n1 + 2][n0 + 2]
// (periodic images, or the free-space potential outside the domain), from rho [n2][n1][n0].
class RootPoissonSolver {
 public:
  virtual ~RootPoissonSolver() = default;
  // Returns the mean density subtracted (periodic; 0 for isolated boundaries).
  virtual double solve(const double* rho, double four_pi_g, double* phi_ghosted) = 0;
  // "FFTW" or "cuFFT".
  virtual const char* library() const = 0;
  // The GPU's time of the last solve without the copies between host and GPU, in seconds
  // (the benchmark's "device" column); 0 on the CPU.
  virtual double last_device_seconds() const { return 0; }
};

// FFTW on the CPU (the solvers above).
std::unique_ptr<RootPoissonSolver> make_fftw_poisson(std::array<int, 3> n, double h, bool periodic);
// cuFFT on the current GPU (real-to-complex, double precision), with the same multipliers;
// throws Error(kInput) in a build without the CUDA backend.
std::unique_ptr<RootPoissonSolver> make_cufft_poisson(std::array<int, 3> n, double h,
                                                      bool periodic);

}  // namespace tessera::gravity
