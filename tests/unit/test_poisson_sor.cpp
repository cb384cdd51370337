// Red-black SOR of one patch group (kernels/poisson_sor.hpp, gravity/sor_solver.hpp):
// against a potential the 7-point Laplacian differentiates exactly, and the unlimited
// prolongation that gives the refined levels' ghost layer (mesh/prolongation.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/poisson_sor.hpp"
#include "tessera/gravity/sor_solver.hpp"
#include "tessera/mesh/prolongation.hpp"

namespace tessera {
namespace {

constexpr int kN = kernels::kSorBox;  // 18
constexpr int kN3 = kN * kN * kN;
constexpr int kG = kernels::kGroupSize;

// A quadratic with every second derivative different and a cross term, in box
// coordinates (ghost cell 0 at -1): its 7-point Laplacian is exactly 2 + 4 + 6 = 12 at
// every cell, so SOR must reproduce it to the tolerance.
double exact(int i, int j, int k) {
  const double x = i - 7.3, y = j - 4.1, z = k - 10.6;
  return 0.01 * (x * x + 2 * y * y + 3 * z * z + 1.5 * x * y) - 3.0;
}

struct Solved {
  std::vector<Real> out;
  kernels::GroupResult result;
};

// The solve of a group whose ghost layer is the exact potential and whose interior starts
// at `start`; rho such that 4 pi G h^2 (rho - mean) = 0.12 with scale 0.5, mean 0.25.
Solved solve(double start, kernels::SorParams p, bool near = false) {
  std::vector<Real> in(2 * kN3);
  for (int k = 0; k < kN; ++k)
    for (int j = 0; j < kN; ++j)
      for (int i = 0; i < kN; ++i) {
        const int b = (k * kN + j) * kN + i;
        const bool ghost = i == 0 || j == 0 || k == 0 || i == kN - 1 || j == kN - 1 || k == kN - 1;
        in[b] = Real(0.12 / 0.5 + 0.25);
        in[kN3 + b] = Real(ghost || near ? exact(i, j, k) + (ghost ? 0.0 : start) : start);
      }
  gravity::SorSolver solver(p);
  solver.set_level(Real(0.5), Real(0.25));
  std::vector<Real> scratch(solver.host_scratch_reals());
  Solved s;
  s.out.assign(kernels::kGroupCells, Real(0));
  solver.solve_host(in.data(), s.out.data(), nullptr, &s.result, scratch.data());
  return s;
}

TEST(PoissonSor, ReachesTheExactDiscreteSolutionFromAColdStart) {
  kernels::SorParams p;
  p.tolerance = Real(1e-12);
  const Solved s = solve(0.0, p);
  double worst = 0;
  for (int k = 0; k < kG; ++k)
    for (int j = 0; j < kG; ++j)
      for (int i = 0; i < kG; ++i)
        worst =
            std::max(worst, std::fabs(s.out[(k * kG + j) * kG + i] - exact(i + 1, j + 1, k + 1)));
  std::printf("SOR from zero: %d iterations, max error %.3e\n", s.result.iterations, worst);
  EXPECT_EQ(s.result.unconverged, 0);
  EXPECT_EQ(s.result.bad_cell, -1);
  // The residual's sum fell below 1e-12 of the source's; the error follows within the
  // discrete Green's function's gain (~ (16 / pi)^2).
  EXPECT_LT(worst, 1e-9);
  // Optimal over-relaxation converges in O(n) sweeps: measured 87 from zero.
  EXPECT_LT(s.result.iterations, 150);
}

TEST(PoissonSor, AWarmStartConvergesFasterAndOverRelaxationBeatsGaussSeidel) {
  kernels::SorParams p;
  p.tolerance = Real(1e-10);
  const Solved cold = solve(0.0, p);
  const Solved warm = solve(1e-4, p, true);  // the solution, off by 1e-4
  p.omega = Real(1.0);
  const Solved gs = solve(0.0, p);
  std::printf("SOR iterations: cold %d, warm %d, Gauss-Seidel %d%s\n", cold.result.iterations,
              warm.result.iterations, gs.result.iterations,
              gs.result.unconverged ? " (limit)" : "");
  EXPECT_LT(warm.result.iterations, cold.result.iterations);
  EXPECT_GT(gs.result.iterations, 3 * cold.result.iterations);
}

TEST(PoissonSor, ReportsWhenTheIterationsRunOut) {
  kernels::SorParams p;
  p.max_iterations = 5;
  const Solved s = solve(0.0, p);
  EXPECT_EQ(s.result.iterations, 5);
  EXPECT_EQ(s.result.unconverged, 1);
}

TEST(PoissonSor, OptimalOmegaOfAPatchGroup) {
  EXPECT_NEAR(kernels::sor_optimal_omega(16), 1.6895, 1e-4);
}

// Unlimited (kLinear) prolongation keeps the central slope at an extremum where the
// limited one flattens: second order for the potential's ghost values.
TEST(Prolongation, LinearKeepsTheCentralSlopeAtAnExtremum) {
  mesh::CoarseBox box;
  box.lo = {-1, -1, -1};
  box.n = 3;
  box.nvar = 2;
  box.data.assign(2 * 27, Real(0));
  box.prolongation = {mesh::Prolongation::kLinear, mesh::Prolongation::kLimitedLinear};
  // f(i) = (i - 0.3)^2 along x: 1.69, 0.09, 0.49 (a minimum in the middle cell).
  for (int v = 0; v < 2; ++v)
    for (int k = 0; k < 3; ++k)
      for (int j = 0; j < 3; ++j)
        for (int i = 0; i < 3; ++i) {
          const double x = (i - 1) - 0.3;
          box.at(v, i, j, k) = Real(x * x);
        }
  std::vector<Real> fine(2 * 8);
  mesh::prolong_region(box, {0, 0, 0}, {2, 2, 2}, fine.data(), 2, {0, 0, 0});
  // Central slope (0.49 - 1.69) / 2 = -0.6: children 0.09 +- 0.15; limited: 0.09 both.
  EXPECT_NEAR(fine[0], 0.09 + 0.15, 1e-12);
  EXPECT_NEAR(fine[1], 0.09 - 0.15, 1e-12);
  EXPECT_NEAR(fine[8 + 0], 0.09, 1e-12);
  EXPECT_NEAR(fine[8 + 1], 0.09, 1e-12);
  // prolong_cell agrees.
  EXPECT_NEAR(mesh::prolong_cell(box, 0, {0, 0, 0}), 0.09 + 0.15, 1e-12);
}

}  // namespace
}  // namespace tessera
