// The MHD eigenvectors of the linear-wave problem against the solver's own flux: for each
// wave, A R = lambda R with A = dF/dU the Jacobian of kernels::MhdGlm::flux, taken by
// central differences along R (no Jacobian is written down, so a wrong sign or factor in
// either the eigenvector or the flux shows up).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kernels/physics_mhd.hpp"
#include "problems/mhd_linear_wave/mhd_eigenmodes.hpp"

namespace tessera::problems {
namespace {

using kernels::MhdGlm;

// max_v |(F(U + eps R) - F(U - eps R)) / (2 eps) - lambda R| / max_v |lambda R|, together
// with lambda = vn + speed.
double eigen_residual(const MhdBackground& b, MhdWave wave) {
  const MhdEigenmode m = mhd_eigenmode(b, wave);
  const MhdGlm::Params prm{Real(b.gamma), Real(1e-300), Real(1e-300), Real(3), Real(1)};
  MhdGlm::Vars w0;
  w0[MhdGlm::kRho] = b.rho;
  w0[MhdGlm::kVelX] = b.vn;
  w0[MhdGlm::kVelX + 1] = w0[MhdGlm::kVelX + 2] = 0;
  w0[MhdGlm::kPres] = b.p;
  for (int d = 0; d < 3; ++d) w0[MhdGlm::kBx + d] = b.B[d];
  w0[MhdGlm::kPsi] = 0;
  const MhdGlm::Vars u0 = MhdGlm::prim_to_cons(w0, prm);
  // Relative step 1e-5: truncation error ~1e-10, round-off ~1e-16 / 1e-5.
  const double eps = 1e-5;
  auto flux_at = [&](double s) {
    MhdGlm::Vars u = u0;
    for (int v = 0; v < 8; ++v) u[v] += Real(s * m.conserved[v]);
    return MhdGlm::flux(MhdGlm::cons_to_prim(u, prm), u, prm);
  };
  const MhdGlm::Vars fp = flux_at(eps), fm = flux_at(-eps);
  const double lambda = b.vn + m.speed;
  double worst = 0, scale = 0;
  for (int v = 0; v < MhdGlm::kNumVars; ++v) {
    const double r = v < 8 ? m.conserved[v] : 0.0;  // psi is not perturbed
    const double ar = (double(fp[v]) - double(fm[v])) / (2 * eps);
    worst = std::max(worst, std::fabs(ar - lambda * r));
    scale = std::max(scale, std::fabs(lambda * r) + std::fabs(r));
  }
  return worst / scale;
}

const MhdWave kWaves[] = {MhdWave::kFast, MhdWave::kAlfven, MhdWave::kSlow, MhdWave::kEntropy};

// The background of the linear-wave test (Gardiner & Stone 2008): c_f = 2, c_a = 1, c_s = 1/2.
TEST(MhdEigenmodes, SpeedsOfTheLinearWaveBackground) {
  MhdBackground b;
  b.rho = 1, b.p = 0.6, b.gamma = 5.0 / 3.0, b.B = {1, std::sqrt(2.0), 0.5};
  const MhdSpeeds s = mhd_speeds(b);
  EXPECT_NEAR(s.a, 1.0, 1e-14);
  EXPECT_NEAR(s.cf, 2.0, 1e-14);
  EXPECT_NEAR(s.ca, 1.0, 1e-14);
  EXPECT_NEAR(s.cs, 0.5, 1e-14);
}

TEST(MhdEigenmodes, RightEigenvectorsOfTheFluxJacobian) {
  MhdBackground test;
  test.rho = 1, test.p = 0.6, test.gamma = 5.0 / 3.0, test.B = {1, std::sqrt(2.0), 0.5};
  // A state without special values: a flow along n, negative B_n, sound speed between c_s
  // and c_a, unequal transverse components.
  MhdBackground generic;
  generic.rho = 1.7, generic.p = 0.35, generic.gamma = 1.4, generic.vn = -0.8;
  generic.B = {-0.9, 0.4, -1.3};
  for (const MhdBackground& b : {test, generic})
    for (const MhdWave wave : kWaves) {
      const double res = eigen_residual(b, wave);
      std::printf("%-7s wave (rho %.2g, B_n %+.2g): |A R - lambda R| / |lambda R| = %.2e\n",
                  mhd_wave_name(wave), b.rho, b.B[0], res);
      EXPECT_LT(res, 1e-8) << mhd_wave_name(wave);
    }
}

// Distinct waves, non-trivial vectors: the check above would pass R = 0.
TEST(MhdEigenmodes, EigenvectorsAreIndependent) {
  MhdBackground b;
  b.B = {1, std::sqrt(2.0), 0.5};
  for (const MhdWave wave : kWaves) {
    const auto r = mhd_eigenmode(b, wave).conserved;
    double n = 0;
    for (double x : r) n += x * x;
    EXPECT_GT(n, 0.1) << mhd_wave_name(wave);
  }
  // The Alfven wave is incompressible; the others are not.
  EXPECT_EQ(mhd_eigenmode(b, MhdWave::kAlfven).primitive[0], 0.0);
  EXPECT_GT(mhd_eigenmode(b, MhdWave::kSlow).primitive[0], 0.0);
  EXPECT_GT(mhd_eigenmode(b, MhdWave::kFast).primitive[0], 0.0);
}

TEST(MhdEigenmodes, DegenerateFieldsAreRefused) {
  MhdBackground b;
  b.B = {1, 0, 0};
  EXPECT_THROW(mhd_eigenmode(b, MhdWave::kFast), std::invalid_argument);
  b.B = {0, 1, 0};
  EXPECT_THROW(mhd_eigenmode(b, MhdWave::kSlow), std::invalid_argument);
}

}  // namespace
}  // namespace tessera::problems
