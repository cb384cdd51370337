// Unit tests of the relaxing-TVD group solver (kernels/relaxing_tvd.hpp, rtvd_group_cpu):
// a uniform moving state stays put bit for bit; the interior's change equals the fluxes
// on the group's outer planes (what refluxing relies on), per variable, for both sweep
// orders; the sibling planes hold the fluxes the interior update used; a linear advection
// of a density step against the hand-computed relaxing scheme in 1D.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/relaxing_tvd.hpp"
#include "kernels/rtvd_cpu.hpp"
#include "tessera/exec/group_solver.hpp"

namespace tessera::kernels {
namespace {

constexpr Real kGamma = Real(1.4);
constexpr int kN = box_size(kGhostRtvd), kN3 = box_cells(kGhostRtvd), kVars = 5;

RtvdParams params(Real coef, bool forward, int scalars = 0) {
  RtvdParams p;
  p.phys.adiabatic = {kGamma, Real(1e-10), Real(1e-12)};
  p.dt_over_dx = coef;
  p.scalars = scalars;
  p.forward = forward;
  return p;
}

// One group's buffers: adiabatic gas and `scalars` passive scalars.
struct GroupRun {
  explicit GroupRun(int scalars = 0) : nvar(kVars + scalars) {}
  int nvar;
  std::vector<Real> in = std::vector<Real>(std::size_t(nvar) * kN3);
  std::vector<Real> out = std::vector<Real>(std::size_t(nvar) * kGroupCells);
  std::vector<Real> planes = std::vector<Real>(std::size_t(kNumFluxPlanes) * nvar * kFaceCells);
  std::vector<Real> scratch = std::vector<Real>(rtvd_scratch_reals(nvar));
  GroupResult result{};
  void set(int i, int j, int k, Real rho, std::array<Real, 3> v, Real p) {
    const HydroAdiabatic::Vars u =
        HydroAdiabatic::prim_to_cons({{rho, v[0], v[1], v[2], p}}, {kGamma, Real(0), Real(0)});
    for (int q = 0; q < kVars; ++q) in[q * kN3 + (k * kN + j) * kN + i] = u[q];
  }
  void solve(const RtvdParams& p) {
    rtvd_group_cpu(Physics::kAdiabatic, TvdLimiter::kVanLeer, p, in.data(), out.data(),
                   planes.data(), &result, scratch.data());
  }
  Real in_interior(int q, int i, int j, int k) const {
    const int G = kGhostRtvd;
    return in[q * kN3 + ((k + G) * kN + j + G) * kN + i + G];
  }
  Real plane(int dir, int p, int q, int a, int b) const {
    return planes[(std::size_t(flux_plane(dir, p)) * nvar + q) * kFaceCells + a * kGroupSize + b];
  }
};

TEST(RelaxingTvd, UniformMovingStateStaysBitForBit) {
  for (bool forward : {true, false}) {
    GroupRun r;
    for (int k = 0; k < kN; ++k)
      for (int j = 0; j < kN; ++j)
        for (int i = 0; i < kN; ++i)
          r.set(i, j, k, Real(1.3), {Real(0.4), Real(-0.7), Real(0.2)}, 2);
    r.solve(params(Real(0.3), forward));
    for (int q = 0; q < kVars; ++q)
      for (int c = 0; c < kGroupCells; ++c)
        ASSERT_EQ(r.out[q * kGroupCells + c], r.in_interior(q, 0, 0, 0)) << q << " " << c;
    EXPECT_EQ(r.result.floored, 0);
    EXPECT_EQ(r.result.bad_cell, -1);
    // max |v_d| + c_s = 0.7 + sqrt(1.4 * 2 / 1.3)
    EXPECT_NEAR(r.result.max_speed, 0.7 + std::sqrt(1.4 * 2 / 1.3), 1e-14);
  }
}

// Cold gas streaming apart along one axis (uniform along the others) empties the two cell
// layers beside the centre within the step, and a sweep along that axis floors them
// (their pressure): the count is the same whichever sweep of the step floors (first,
// middle or last; forward or backward order), so the same along x, y and z. Before the
// sweeps' floors were counted only the last sweep's were: a tube along y reported none.
TEST(RelaxingTvd, FloorsOfEverySweepAreCountedAlongEveryAxis) {
  for (int dir = 0; dir < 3; ++dir)
    for (bool forward : {true, false}) {
      GroupRun r;
      for (int k = 0; k < kN; ++k)
        for (int j = 0; j < kN; ++j)
          for (int i = 0; i < kN; ++i) {
            const int pos[3] = {i, j, k};
            std::array<Real, 3> v{0, 0, 0};
            v[dir] = pos[dir] < kN / 2 ? Real(-2) : Real(2);
            r.set(i, j, k, Real(1), v, Real(1e-6));
          }
      r.solve(params(Real(0.1), forward));
      const char* axis = dir == 0 ? "x" : dir == 1 ? "y" : "z";
      EXPECT_EQ(r.result.bad_cell, -1) << axis;
      EXPECT_EQ(r.result.floored, 2 * kFaceCells) << axis << (forward ? " forward" : " backward");
    }
}

// Random smooth flow, different along every axis: the change of each variable summed over
// the interior is -dt/dx times the net flux through the outer planes, and the change of
// each half of the group (split at the sibling plane of each direction) likewise with the
// middle plane, so the middle planes are the fluxes the update used.
TEST(RelaxingTvd, InteriorChangeEqualsOuterAndSiblingPlaneFluxes) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (bool forward : {true, false}) {
    GroupRun r;
    for (int k = 0; k < kN; ++k)
      for (int j = 0; j < kN; ++j)
        for (int i = 0; i < kN; ++i) {
          const double x = i / double(kN), y = j / double(kN), z = k / double(kN);
          r.set(i, j, k, Real(1 + 0.3 * std::sin(5 * x + 2 * y) + 0.02 * u(rng)),
                {Real(0.5 * std::cos(3 * y) + 0.1 * u(rng)), Real(0.3 * x - 0.2 * z),
                 Real(0.4 * std::sin(4 * z + x))},
                Real(1 + 0.2 * std::cos(3 * z + y) + 0.02 * u(rng)));
        }
    const Real coef = Real(0.2);
    r.solve(params(coef, forward));
    ASSERT_EQ(r.result.floored, 0);
    for (int q = 0; q < kVars; ++q)
      for (int dir = 0; dir < 3; ++dir)
        for (int half = 0; half < 2; ++half) {
          // Cells with coordinate dir in [8 half, 8 half + 8): their change is the
          // difference of the planes at 8 half and 8 half + 8 along dir, plus the
          // transverse outer planes over their extent.
          double change = 0, scale = 0;
          for (int k = 0; k < kGroupSize; ++k)
            for (int j = 0; j < kGroupSize; ++j)
              for (int i = 0; i < kGroupSize; ++i) {
                const int pos[3] = {i, j, k};
                if (pos[dir] / kPatchSize != half) continue;
                const Real before = r.in_interior(q, i, j, k);
                change += r.out[q * kGroupCells + (k * kGroupSize + j) * kGroupSize + i] - before;
                scale = std::max(scale, std::fabs(double(before)));
              }
          double net = 0;
          for (int d = 0; d < 3; ++d)
            for (int a = 0; a < kGroupSize; ++a)
              for (int b = 0; b < kGroupSize; ++b) {
                // (a, b): the transverse coordinates of plane d (FullStep's layout).
                int pos[3];
                pos[d == 2 ? 1 : 2] = a;
                pos[d == 0 ? 1 : 0] = b;
                if (d != dir) {
                  if (pos[dir] / kPatchSize != half) continue;
                  net += r.plane(d, 2, q, a, b) - r.plane(d, 0, q, a, b);
                } else {
                  net += r.plane(d, half + 1, q, a, b) - r.plane(d, half, q, a, b);
                }
              }
          EXPECT_NEAR(change, -coef * net, 1e-12 * scale * kGroupCells)
              << "variable " << q << " direction " << dir << " half " << half
              << (forward ? " forward" : " backward");
        }
  }
}

// A passive scalar's step advected at v = 1 along x through uniform gas: the gas stays
// uniform, so every cell has the same freezing speed c and the scalar's sweep along x is
// the relaxing scheme for linear advection, computed here by hand (eqs. 8-14 of Schive et
// al. 2010 with the van Leer limiter) for a row of the group; the transverse sweeps see a
// uniform row and change nothing.
TEST(RelaxingTvd, AdvectedScalarStepAgainstTheOneDimensionalScheme) {
  GroupRun r(1);
  const Real rho = Real(1.2), v = 1, p = 1;
  std::vector<Real> s(kN);
  for (int i = 0; i < kN; ++i) s[i] = i < 9 ? Real(2) : (i < 14 ? Real(1.5) : Real(0.25));
  for (int k = 0; k < kN; ++k)
    for (int j = 0; j < kN; ++j)
      for (int i = 0; i < kN; ++i) {
        r.set(i, j, k, rho, {v, 0, 0}, p);
        r.in[kVars * kN3 + (k * kN + j) * kN + i] = rho * s[i];
      }
  const Real coef = Real(0.25);
  r.solve(params(coef, true, 1));
  const Real cs = std::sqrt(kGamma * p / rho);
  const Real c = cs + std::sqrt(v * v + kRtvdSmoothing * kRtvdSmoothing * cs * cs);
  std::vector<Real> u(kN), fr(kN), fl(kN), frh(kN), flh(kN);
  for (int i = 0; i < kN; ++i) {
    u[i] = rho * s[i];
    fr[i] = Real(0.5) * (c * u[i] + u[i] * v);
    fl[i] = Real(0.5) * (c * u[i] - u[i] * v);
  }
  for (int i = 1; i < kN - 1; ++i) {
    const Real half = u[i] - Real(0.5) * coef * ((fr[i] - fl[i + 1]) - (fr[i - 1] - fl[i]));
    frh[i] = Real(0.5) * (c * half + half * v);
    flh[i] = Real(0.5) * (c * half - half * v);
  }
  auto vanleer = [](Real a, Real b) { return a * b > 0 ? 2 * a * b / (a + b) : Real(0); };
  auto face = [&](int i) {  // the low face of cell i
    const Real right =
        frh[i - 1] + vanleer((frh[i - 1] - frh[i - 2]) / 2, (frh[i] - frh[i - 1]) / 2);
    const Real left = flh[i] - vanleer((flh[i] - flh[i - 1]) / 2, (flh[i + 1] - flh[i]) / 2);
    return right - left;
  };
  bool moved = false;
  for (int i = kGhostRtvd; i < kGhostRtvd + kGroupSize; ++i) {
    const Real got =
        r.out[kVars * kGroupCells + (5 * kGroupSize + 7) * kGroupSize + i - kGhostRtvd];
    const Real want = u[i] - coef * (face(i + 1) - face(i));
    EXPECT_NEAR(got, want, 1e-14) << "cell " << i;
    moved = moved || std::fabs(got - u[i]) > 1e-3;
  }
  EXPECT_TRUE(moved);
  // The gas stayed uniform.
  for (int c2 = 0; c2 < kGroupCells; ++c2) ASSERT_EQ(r.out[c2], rho);
}

}  // namespace
}  // namespace tessera::kernels
