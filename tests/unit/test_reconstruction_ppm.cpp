// Unit tests of the piecewise-parabolic reconstruction (kernels/reconstruction_ppm.hpp).
#include "kernels/reconstruction_ppm.hpp"
#include "kernels/reconstruction_ppm_char.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <random>
#include <vector>

namespace tessera::kernels {
namespace {

// Exact average over cell [j, j+1] of f(x) = c0 + c1 x + c2 x^2 + c3 x^3.
double cubic_average(const double (&c)[4], int j) {
  auto prim = [&](double x) {
    return c[0] * x + c[1] * x * x / 2 + c[2] * x * x * x / 3 + c[3] * x * x * x * x / 4;
  };
  return prim(j + 1) - prim(j);
}

double cubic_at(const double (&c)[4], double x) {
  return c[0] + x * (c[1] + x * (c[2] + x * c[3]));
}

TEST(ReconstructionPpm, FaceValuesOfACubicAreExact) {
  // The interpolant is fourth order: from the averages of a cubic it gives the cubic's
  // point value at the face. Monotone data without extrema, so no limiter acts, and the
  // parabola keeps both edges (each within a factor 2 of the other about the average).
  const double c[4] = {1.0, 0.3, 0.02, 0.001};
  for (int j = 3; j < 12; ++j) {
    Real a[6];
    for (int k = 0; k < 6; ++k) a[k] = Real(cubic_average(c, j - 3 + k));
    Real left, right;
    ReconPpm::face_values(a, true, left, right);  // face between cells j-1 and j: x = j
    EXPECT_NEAR(left, cubic_at(c, j), 1e-13) << j;
    EXPECT_NEAR(right, cubic_at(c, j), 1e-13) << j;
  }
}

TEST(ReconstructionPpm, MonotoneDataGiveMonotoneParabolas) {
  // Random monotone sequences: every edge lies between the cell and its neighbour across
  // that face, and no parabola has its extremum inside the cell (|a - a-| <= 2 |a+ - a|
  // and the reverse, Colella & Woodward 1984 eq. 1.10).
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<Real> step(0, 1), coin(0, 1);
  for (int n = 0; n < 20000; ++n) {
    Real a[5];
    a[0] = step(rng);
    const Real sign = coin(rng) < 0.5 ? -1 : 1;
    for (int k = 1; k < 5; ++k)
      a[k] = a[k - 1] + sign * (coin(rng) < 0.2 ? 0 : step(rng) * step(rng) * 3);
    Real minus, plus;
    ReconPpm::cell_faces(a[0], a[1], a[2], a[3], a[4], false, minus, plus);
    const Real tol = 1e-14 * (1 + std::fabs(a[0]) + std::fabs(a[4]));
    EXPECT_GE(minus, std::min(a[1], a[2]) - tol) << n;
    EXPECT_LE(minus, std::max(a[1], a[2]) + tol) << n;
    EXPECT_GE(plus, std::min(a[2], a[3]) - tol) << n;
    EXPECT_LE(plus, std::max(a[2], a[3]) + tol) << n;
    EXPECT_LE(std::fabs(a[2] - minus), 2 * std::fabs(plus - a[2]) + tol) << n;
    EXPECT_LE(std::fabs(plus - a[2]), 2 * std::fabs(a[2] - minus) + tol) << n;
  }
}

TEST(ReconstructionPpm, AStepStaysSharpAndBounded) {
  // A jump between cells 2 and 3 of a[0..5]: the faces of the flat cells on each side
  // keep their values, so the Riemann problem at the jump sees the two states exactly.
  const Real a[6] = {0.125, 0.125, 0.125, 1, 1, 1};
  Real left, right;
  ReconPpm::face_values(a, true, left, right);
  EXPECT_EQ(left, Real(0.125));
  EXPECT_EQ(right, Real(1));
}

TEST(ReconstructionPpm, KeepsASmoothExtremum) {
  // Averages of cos over cells of 12 per wavelength with its maximum inside cell 0: the
  // TVD limiters flatten that cell (MC slope 0), the extremum-preserving parabola keeps
  // its edges close to the function's values at the faces: within 1e-2 (measured 6.4e-3
  // and 4.5e-3: the interpolation error ~ h^4 / 30 and the smooth-extremum scaling, which
  // here takes a few percent off the parabola's curvature), where the flattened cell's
  // edges would miss by 6e-2 and 2e-2.
  const double h = 2 * std::numbers::pi / 12, shift = 0.3 * h;
  auto avg = [&](int i) {  // average of cos(x - shift) over [(i - 1/2) h, (i + 1/2) h]
    return (std::sin((i + 0.5) * h - shift) - std::sin((i - 0.5) * h - shift)) / h;
  };
  Real minus, plus;
  ReconPpm::cell_faces(avg(-2), avg(-1), avg(0), avg(1), avg(2), false, minus, plus);
  EXPECT_EQ(LimiterMc::slope(Real(avg(0) - avg(-1)), Real(avg(1) - avg(0))), 0);
  EXPECT_NEAR(minus, std::cos(-0.5 * h - shift), 1e-2);
  EXPECT_NEAR(plus, std::cos(0.5 * h - shift), 1e-2);
  // Without the smooth-extremum test (a flattened extremum) both would be avg(0).
  EXPECT_GT(std::fabs(plus - minus), 0.05);
}

// The L1 error of a sine wave advected once around a periodic line (u_t + u_x = 0, upwind
// fluxes from PPM's left states, SSP-RK3 at Courant 0.1, whose time error stays below the
// reconstruction's at these resolutions) on n cells, relative to the amplitude.
double advected_sine_error(int n) {
  const double two_pi = 2 * std::numbers::pi, h = 1.0 / n, amp = 0.1;
  auto average = [&](int i, double t) {  // of 1 + amp sin(2 pi (x - t)) over cell i
    return 1 + amp * (std::cos(two_pi * (i * h - t)) - std::cos(two_pi * ((i + 1) * h - t))) /
                   (two_pi * h);
  };
  auto rhs = [&](const std::vector<double>& u, std::vector<double>& r) {
    std::vector<double> flux(n + 1);
    for (int f = 0; f <= n; ++f) {  // face f - 1/2: cells f-3 .. f+2
      Real a[6], left, right;
      for (int s = 0; s < 6; ++s) a[s] = Real(u[((f - 3 + s) % n + n) % n]);
      ReconPpm::face_values(a, true, left, right);
      flux[f] = left;
    }
    for (int i = 0; i < n; ++i) r[i] = -(flux[i + 1] - flux[i]) / h;
  };
  std::vector<double> u(n), r(n), u1(n), u2(n);
  for (int i = 0; i < n; ++i) u[i] = average(i, 0);
  const int steps = 10 * n;  // Courant 0.1 to t = 1
  const double dt = 1.0 / steps;
  for (int s = 0; s < steps; ++s) {  // SSP-RK3 (Shu & Osher 1988)
    rhs(u, r);
    for (int i = 0; i < n; ++i) u1[i] = u[i] + dt * r[i];
    rhs(u1, r);
    for (int i = 0; i < n; ++i) u2[i] = 0.75 * u[i] + 0.25 * (u1[i] + dt * r[i]);
    rhs(u2, r);
    for (int i = 0; i < n; ++i) u[i] = (u[i] + 2 * (u2[i] + dt * r[i])) / 3;
  }
  double error = 0;
  for (int i = 0; i < n; ++i) error += std::fabs(u[i] - average(i, 1.0)) * h;
  return error / amp;
}

TEST(ReconstructionPpm, AdvectedSineConvergesAtFourthOrder) {
  // PPM's own order in space: every cell of a sine of 16 to 64 cells per wavelength is
  // smooth, so the extremum-preserving limiter (Colella & Sekora 2008) must leave the
  // fourth-order interpolant alone, extrema included. Measured: 1.92e-4, 1.22e-5, 7.71e-7
  // on 32, 64, 128 cells (orders 3.98, 3.97, 3.99). Flattening every extremum (Colella &
  // Woodward 1984) measured orders 2.07 to 2.16; C = 1 instead of 1.25, 3.51 to 3.84.
  double previous = advected_sine_error(16);
  for (int n = 32; n <= 128; n *= 2) {
    const double error = advected_sine_error(n);
    const double order = std::log2(previous / error);
    std::printf("n = %3d: error/A %.4e, order %.3f\n", n, error, order);
    EXPECT_GT(order, 3.9) << n;
    previous = error;
  }
  EXPECT_LT(previous, 1e-6);
}

// The characteristic projections (reconstruction_ppm_char.hpp) diagonalise the primitive
// equations' Jacobian A along the normal: left(A x) = diag(lambda) left(x) for every x,
// with the waves ordered by speed (adiabatic: u - c, u (entropy), u, u (shear), u + c;
// isothermal: u - c, u, u, u + c), and right(left(x)) = x. That pins every row and column.
// Adiabatic: rho_t + u rho_x + rho u_x = 0, u_t + u u_x + p_x / rho = 0, v_t + u v_x = 0,
// w_t + u w_x = 0, p_t + gamma p u_x + u p_x = 0; isothermal: u_t + u u_x + c^2 rho_x / rho = 0.
TEST(ReconstructionPpmChar, ProjectionsDiagonaliseTheJacobian) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> pos(0.2, 3.0), any(-1.0, 1.0);
  const Real gamma = Real(5) / 3, ciso = Real(0.7);
  const HydroAdiabatic::Params pa{gamma, Real(1e-10), Real(1e-10)};
  const HydroIsothermal::Params pi{ciso, Real(1e-10)};
  for (int trial = 0; trial < 50; ++trial) {
    const HydroAdiabatic::Vars w{Real(pos(gen)), Real(any(gen)), Real(any(gen)), Real(any(gen)),
                                 Real(pos(gen))};
    const Characteristics<HydroAdiabatic> ch(w, pa);
    HydroAdiabatic::Vars x;
    for (int v = 0; v < 5; ++v) x[v] = Real(any(gen));
    const Real rho = w[0], u = w[1], p = w[4], c = HydroAdiabatic::sound_speed(w, pa);
    const HydroAdiabatic::Vars ax{u * x[0] + rho * x[1], u * x[1] + x[4] / rho, u * x[2], u * x[3],
                                  gamma * p * x[1] + u * x[4]};
    const Real lambda[5] = {u - c, u, u, u, u + c};
    const HydroAdiabatic::Vars l = ch.left(x), lax = ch.left(ax), back = ch.right(l);
    for (int v = 0; v < 5; ++v) {
      EXPECT_NEAR(lax[v], lambda[v] * l[v], 1e-12) << trial << " wave " << v;
      EXPECT_NEAR(back[v], x[v], 1e-13) << trial << " " << v;
    }

    const HydroIsothermal::Vars wi{Real(pos(gen)), Real(any(gen)), Real(any(gen)), Real(any(gen))};
    const Characteristics<HydroIsothermal> ci(wi, pi);
    HydroIsothermal::Vars xi;
    for (int v = 0; v < 4; ++v) xi[v] = Real(any(gen));
    const Real ri = wi[0], ui = wi[1];
    const HydroIsothermal::Vars axi{ui * xi[0] + ri * xi[1], ciso * ciso * xi[0] / ri + ui * xi[1],
                                    ui * xi[2], ui * xi[3]};
    const Real lambda_i[4] = {ui - ciso, ui, ui, ui + ciso};
    const HydroIsothermal::Vars li = ci.left(xi), laxi = ci.left(axi), backi = ci.right(li);
    for (int v = 0; v < 4; ++v) {
      EXPECT_NEAR(laxi[v], lambda_i[v] * li[v], 1e-12) << trial << " wave " << v;
      EXPECT_NEAR(backi[v], xi[v], 1e-13) << trial << " " << v;
    }
  }
}

// Where no limiter acts, limiting in characteristic variables changes nothing: from the
// averages of cubics both give the cubics' values at the faces. Every primitive is a
// multiple of one monotone cubic plus a constant, so every characteristic field (a linear
// combination at the cell's own state) is too, and no limiter acts in either.
TEST(ReconstructionPpmChar, SmoothDataGiveTheInterpolantsEdges) {
  const HydroAdiabatic::Params p{Real(1.4), Real(1e-10), Real(1e-10)};
  const double base[5] = {1.0, 0.1, -0.2, 0.3, 2.0}, scale[5] = {1.0, 0.5, -0.7, 0.2, 1.3};
  double c[5][4];
  for (int v = 0; v < 5; ++v) {
    const double shape[4] = {0.0, 0.3, 0.02, 0.001};
    for (int k = 0; k < 4; ++k) c[v][k] = scale[v] * shape[k];
    c[v][0] = base[v];
  }
  for (int j = 3; j < 10; ++j) {
    HydroAdiabatic::Vars w[6];
    for (int k = 0; k < 6; ++k)
      for (int v = 0; v < 5; ++v) w[k][v] = Real(cubic_average(c[v], j - 3 + k));
    HydroAdiabatic::Vars left, right;
    ReconPpmChar::face_states<HydroAdiabatic>(w[0], w[1], w[2], w[3], w[4], w[5], p, left, right);
    for (int v = 0; v < 5; ++v) {
      EXPECT_NEAR(left[v], cubic_at(c[v], j), 1e-12) << j << " " << v;
      EXPECT_NEAR(right[v], cubic_at(c[v], j), 1e-12) << j << " " << v;
    }
  }
}

TEST(ReconstructionPpm, FlattensAnExtremumOfDataThatAreNotSmooth) {
  // A one-cell spike: second differences of both signs around it, so its parabola is
  // flattened to the cell value (no new extremum on the faces).
  Real minus, plus;
  ReconPpm::cell_faces(1, 1, 5, 1, 1, false, minus, plus);
  EXPECT_EQ(minus, Real(5));
  EXPECT_EQ(plus, Real(5));
}

TEST(ReconstructionPpm, PositiveVariablesFallBackToTheCellValue) {
  // A smooth-looking minimum near zero whose parabola reaches below zero at its left face:
  // as a signed variable the edge is negative, as a positive one the cell is constant.
  const Real a[5] = {1.05, 0.05, 0.01, 1.0, 2.95};
  Real minus, plus;
  ReconPpm::cell_faces(a[0], a[1], a[2], a[3], a[4], false, minus, plus);
  EXPECT_LT(minus, 0);
  ReconPpm::cell_faces(a[0], a[1], a[2], a[3], a[4], true, minus, plus);
  EXPECT_EQ(minus, a[2]);
  EXPECT_EQ(plus, a[2]);
}

}  // namespace
}  // namespace tessera::kernels
