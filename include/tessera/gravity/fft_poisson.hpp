// Root-level Poisson solvers with FFTs (docs/architecture.md, "Self-gravity").
//
// Transforms: SlabFft3d (slab_fft.hpp), three passes of 1D transforms with the same bits
// for any number of threads and of ranks. SlabPoisson is the root solve over the ranks of a
// Comm; PeriodicFftPoisson and IsolatedFftPoisson are the same solve on one rank, over whole
// arrays.
//
// PeriodicFftPoisson: the discrete equation of the 7-point Laplacian,
//   (1/h^2) sum over the 6 face neighbours of (phi_nb - phi) = 4 pi G (rho - mean rho),
// solved exactly (to round-off) by dividing the transform of the right-hand side by the
// Laplacian's eigenvalues, -(4/h^2) sum_d sin^2(pi k_d / n_d) (the Green's function of the
// discrete operator; Hockney & Eastwood 1981, ch. 6). The mean density is subtracted first
// (the periodic "Jeans swindle": a periodic potential exists only for zero net source),
// and the potential has zero mean.
//
// IsolatedFftPoisson: vacuum boundaries, phi(x_i) = -4 pi G h^2 sum_j G_L(i - j) rho_j with
// G_L the Green's function of the 7-point Laplacian on the infinite lattice (the simple
// cubic lattice Green's function: sum over the 6 neighbours of G_L minus 6 G_L = -delta;
// G_L(0) = 0.2527..., G_L(s) -> 1 / (4 pi |s|)), computed as a cyclic convolution on the
// grid doubled along every axis with the density zero-padded (Hockney & Eastwood 1981
// §6.5.2, the doubling-up method). With the lattice's own Green's function (instead of
// -G / |r| sampled at cell centres) the discrete equation of the periodic solver holds in
// every cell to round-off, with vacuum beyond the grid, so the root level solves the same
// operator as the refined levels' SOR (which the potential correction relies on). G_L is
// integrated for separations up to kLatticeGreenExact per axis (lattice_green_table) and
// taken from its large-distance expansion beyond (lattice_green_far, relative error
// ~1e-6 there). Its transform is computed once.
// Memory: the input and output planes, the transposed spectrum and the Green's transform
// of the doubled grid, about 24 n^3 doubles in all, divided evenly among the ranks.
#pragma once

#include <array>
#include <complex>
#include <memory>
#include <string>
#include <vector>

#include "tessera/gravity/slab_fft.hpp"
#include "tessera/parallel/comm.hpp"

namespace tessera::gravity {

// The simple cubic lattice Green's function G_L(a, b, c) for 0 <= a, b, c <= r, as a table
// [c][b][a] ((r+1)^3), from its integral representation
// int_0^inf e^{-6t} I_a(2t) I_b(2t) I_c(2t) dt (to about 1e-10).
std::vector<double> lattice_green_table(int r);
// Its large-distance expansion to O(|s|^-5): 1 / (4 pi r) + (5 sum s_d^4 / r^4 - 3) / (32 pi r^3).
double lattice_green_far(int a, int b, int c);
// Separations up to this (per axis) use the integrated table, larger ones the expansion.
inline constexpr int kLatticeGreenExact = 48;

// The mean of a grid [n2][n1][n0]: the planes summed in parallel, then added in order (the
// same bits for any thread count).
double grid_mean(const double* values, std::array<int, 3> n);

// What multiplies each mode of the real-to-complex spectrum ([k][j][i], i < n[0]/2 + 1; the
// backward transform's 1/cells folded in). Periodic: 1 / (eigenvalue of the 7-point
// Laplacian), 0 for the mean. Isolated: the transform of the free-space Green's function
// per unit G and unit density, -h^3 / |r| (the cube's -C h^2 at r = 0), on the doubled grid
// 2n[0] x 2n[1] x 2n[2] (real, since it is even).
std::vector<double> periodic_multipliers(std::array<int, 3> n, double h);
std::vector<double> isolated_multipliers(std::array<int, 3> n, double h);

// The root solve over the ranks of a Comm, in slabs of z-planes (slab_fft.hpp): the same
// bits for any rank count. Periodic: the solve of PeriodicFftPoisson below; isolated: that of
// IsolatedFftPoisson (the doubled grid's zero-padded planes are never transformed forward,
// and only the planes the ghosted potential needs backward). With gpu, each rank solves its
// slab on its GPU (cuFFT, the same passes; src/gravity/slab_poisson_cuda.cu): the same bits
// on any rank count too, though not FFTW's; `route` (mpi.device_exchange) says how the
// transposes travel between the ranks of one host.
class DeviceSlabSolve;
class SlabPoisson {
 public:
  // n[0] x n[1] x n[2] cubic cells of width h; a collective (every rank constructs it).
  SlabPoisson(std::array<int, 3> n, double h, bool periodic, parallel::Comm& comm, bool gpu = false,
              const std::string& route = "auto");
  ~SlabPoisson();
  SlabPoisson(const SlabPoisson&) = delete;
  SlabPoisson& operator=(const SlabPoisson&) = delete;

  // The density planes this rank gives: z in [first_plane(), first_plane() + planes()).
  int first_plane() const { return first_plane(comm_.rank()); }
  int planes() const { return planes(comm_.rank()); }
  // Those of rank r.
  int first_plane(int r) const;
  int planes(int r) const;
  // A collective: the potential from this rank's density planes, [planes()][n1][n0], with
  // four_pi_g = 4 pi G. Returns the mean density subtracted (periodic; 0 when isolated).
  // The ghosted planes go to ghosted(), or to `ghosted_out` when given (then ghosted() and
  // gather_ghosted() do not hold them).
  double solve(const double* rho_planes, double four_pi_g, double* ghosted_out = nullptr);
  // The potential of the last solve on the grid extended by one cell on every side
  // ([n2 + 2][n1 + 2][n0 + 2], as IsolatedFftPoisson::solve writes it), this rank's planes
  // t (= k + 1) in [first_ghosted(), first_ghosted() + ghosted_planes()).
  int first_ghosted() const { return out_.first(comm_.rank()); }
  int ghosted_planes() const { return out_.size(comm_.rank()); }
  const double* ghosted() const { return ghosted_.data(); }
  // A collective: every rank's ghosted planes, into the whole extended grid on every rank.
  void gather_ghosted(double* phi_ghosted) const;
  // On the GPU (a device-resident run; a collective): the solve of this rank's density
  // planes in GPU memory ([planes()][n1][n0]) into its ghosted potential planes in GPU
  // memory ([ghosted_planes()][n1 + 2][n0 + 2]), `mean` the density's mean as solve() forms
  // it (periodic; ignored when isolated). The same bits as solve().
  void solve_on_device(const double* device_rho, double four_pi_g, double mean,
                       double* device_ghosted);

  const std::array<int, 3>& shape() const { return n_; }
  bool periodic() const { return periodic_; }
  // "FFTW" or "cuFFT"; the GPU's time of the last solve (0 on the host); how the GPU
  // transposes travel (empty on the host).
  const char* library() const;
  double last_device_seconds() const;
  std::string routes() const;

 private:
  std::array<int, 3> n_;
  bool periodic_;
  parallel::Comm& comm_;
  EvenPieces out_;                           // the ghosted planes over the ranks
  std::unique_ptr<SlabFft3d> fft_;           // on the host
  std::unique_ptr<DeviceSlabSolve> device_;  // or on the GPU
  std::vector<double> multipliers_;  // of this rank's modes (periodic_ or isolated_multipliers)
  std::vector<double> ghosted_;
};

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

  const std::array<int, 3>& shape() const { return solver_.shape(); }

 private:
  parallel::SerialComm comm_;
  SlabPoisson solver_;
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

  const std::array<int, 3>& shape() const { return solver_.shape(); }

 private:
  parallel::SerialComm comm_;
  SlabPoisson solver_;
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
  // Whether solve_on_device works (make_cufft_poisson's solver).
  virtual bool on_device() const { return false; }
  // The solve from GPU memory to GPU memory (SlabPoisson::solve_on_device).
  virtual void solve_on_device(const double* device_rho, double four_pi_g, double mean,
                               double* device_phi_ghosted);
};

// FFTW on the CPU (the solvers above).
std::unique_ptr<RootPoissonSolver> make_fftw_poisson(std::array<int, 3> n, double h, bool periodic);
// cuFFT on the current GPU: SlabPoisson's GPU solve on one rank (the same bits as on N);
// throws Error(kInput) in a build without the CUDA backend.
std::unique_ptr<RootPoissonSolver> make_cufft_poisson(std::array<int, 3> n, double h,
                                                      bool periodic);
// cuFFT's own 3D plans on the current GPU (the benchmark's reference for the slab passes;
// other bits than make_cufft_poisson's).
std::unique_ptr<RootPoissonSolver> make_cufft3d_poisson(std::array<int, 3> n, double h,
                                                        bool periodic);

}  // namespace tessera::gravity
