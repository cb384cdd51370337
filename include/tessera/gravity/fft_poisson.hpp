// Root-level Poisson solver with FFTs, periodic boundaries (docs/architecture.md,
// "Self-gravity"): the discrete equation of the 7-point Laplacian,
//   (1/h^2) sum over the 6 face neighbours of (phi_nb - phi) = 4 pi G (rho - mean rho),
// solved exactly (to round-off) by dividing the transform of the right-hand side by the
// Laplacian's eigenvalues, -(4/h^2) sum_d sin^2(pi k_d / n_d) (the Green's function of the
// discrete operator; Hockney & Eastwood 1981, ch. 6). The mean density is subtracted first
// (the periodic "Jeans swindle": a periodic potential exists only for zero net source),
// and the potential has zero mean. FFTW (real-to-complex) on the CPU, with its OpenMP
// threads; the transforms are planned once per grid shape.
#pragma once

#include <array>
#include <memory>

namespace tessera::gravity {

class PeriodicFftPoisson {
 public:
  // A grid of n[0] x n[1] x n[2] cubic cells of width h; `threads` FFTW threads.
  PeriodicFftPoisson(std::array<int, 3> n, double h, int threads);
  ~PeriodicFftPoisson();
  PeriodicFftPoisson(const PeriodicFftPoisson&) = delete;
  PeriodicFftPoisson& operator=(const PeriodicFftPoisson&) = delete;

  // phi from rho, both [n2][n1][n0] (x fastest); four_pi_g = 4 pi G. Returns the mean
  // density that was subtracted. rho and phi may be the same array.
  double solve(const double* rho, double four_pi_g, double* phi);

  const std::array<int, 3>& shape() const { return n_; }

 private:
  struct Plans;
  std::array<int, 3> n_;
  std::unique_ptr<Plans> plans_;
};

}  // namespace tessera::gravity
