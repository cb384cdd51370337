// Red-black successive over-relaxation of the Poisson equation on one patch group
// (Schive et al. 2010 §2.3, eqs. 19-20; Press et al. 2007 §20.5): the potential of a
// refined level, solved group by group with the inhomogeneous Dirichlet boundary of its
// ghost layer (interpolated from the coarser level's potential, or a sibling's).
//
// The discrete equation is the 7-point Laplacian's, as the root level's FFT solve uses:
//   phi(i-1) + phi(i+1) + ... (6 neighbours) - 6 phi(i) = 4 pi G h^2 (rho(i) - rho_mean).
// One iteration updates the "even" cells ((i + j + k) even), then the "odd" ones with the
// even cells' new values (red-black ordering: each colour depends only on the other);
// a cell moves by omega R / 6, R its residual before the update (eq. 20). The iteration
// stops when the sum of |R| over a sweep is at most `tolerance` times the sum of the
// source |4 pi G h^2 (rho - rho_mean)| over the group (eq. 19's criterion: the residual
// against the source), or after max_iterations.
//
// Host and device update cells with the same function (sor_cell; the device runs a block
// per group, src/gravity/sor_solver_cuda.cu), and within a colour the updates are
// independent, so a sweep gives the same values in any order; the device reduces the
// residual sums in another order, so the sweep at which it stops may differ at round-off.
#pragma once

#include <cmath>

#include "kernels/group_layout.hpp"

namespace tessera::kernels {

struct SorParams {
  Real source_scale = 0;  // 4 pi G h^2
  Real mean = 0;          // rho_mean: the root level's mean density (periodic), else 0
  Real omega = Real(1.69);
  Real tolerance = Real(1e-10);
  int max_iterations = 500;
};

// The over-relaxation parameter that makes red-black SOR converge fastest for the Dirichlet
// problem on an n^3 grid: 2 / (1 + sin(pi / (n + 1))) (Press et al. 2007 eq. 20.5.19 with
// the Jacobi radius cos(pi / (n + 1))); 1.69 for a 16^3 group.
inline double sor_optimal_omega(int n) {
  return 2.0 / (1.0 + std::sin(3.14159265358979323846 / (n + 1)));
}

// Box with one ghost layer: 18^3.
inline constexpr int kSorBox = box_size(1);

// One cell's update (eq. 20) in `phi` (an 18^3 box) with the cell's source s (in units of
// the Laplacian: 4 pi G h^2 (rho - mean)): returns |R| before the update and adds |phi| after
// it to *size (the residual's round-off scale).
TESSERA_HD inline Real sor_cell(Real* phi, Real s, int i, int j, int k, Real omega, Real* size) {
  constexpr int n = kSorBox;
  const int b = ((k + 1) * n + (j + 1)) * n + (i + 1);
  const Real r = (phi[b - 1] + phi[b + 1]) + (phi[b - n] + phi[b + n]) +
                 (phi[b - n * n] + phi[b + n * n]) - Real(6) * phi[b] - s;
  const Real v = phi[b] + omega * r * Real(1.0 / 6.0);
  phi[b] = v;
  *size += v < 0 ? -v : v;
  return r < 0 ? -r : r;
}

// When a sweep's residual sum is small enough: at most `tolerance` times the source's sum
// |4 pi G h^2 (rho - mean)|, or within 64 round-offs of the 6 |phi| each residual adds
// up (where the source vanishes, in vacuum, only round-off bounds the residual).
TESSERA_HD inline bool sor_converged(Real residual, Real source_norm, Real phi_size,
                                     Real tolerance) {
  constexpr Real eps = sizeof(Real) == 4 ? Real(1.1920929e-7) : Real(2.220446049250313e-16);
  return residual <= tolerance * source_norm + Real(64 * 6) * eps * phi_size;
}

// The whole relaxation on one thread: returns the iterations taken; *converged tells
// whether the criterion was met (else max_iterations ran out).
inline int sor_relax_host(Real* phi, const Real* src, const SorParams& p, bool* converged) {
  Real norm = 0;
  for (int c = 0; c < kGroupCells; ++c) norm += src[c] < 0 ? -src[c] : src[c];
  for (int it = 1; it <= p.max_iterations; ++it) {
    Real residual = 0, size = 0;
    for (int colour = 0; colour < 2; ++colour)
      for (int k = 0; k < kGroupSize; ++k)
        for (int j = 0; j < kGroupSize; ++j)
          for (int i = (j + k + colour) & 1; i < kGroupSize; i += 2)
            residual +=
                sor_cell(phi, src[(k * kGroupSize + j) * kGroupSize + i], i, j, k, p.omega, &size);
    if (sor_converged(residual, norm, size, p.tolerance)) {
      *converged = true;
      return it;
    }
  }
  *converged = false;
  return p.max_iterations;
}

}  // namespace tessera::kernels
