#include "problems/mhd_linear_wave/mhd_eigenmodes.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tessera::problems {

MhdWave parse_mhd_wave(const std::string& name) {
  if (name == "fast") return MhdWave::kFast;
  if (name == "alfven") return MhdWave::kAlfven;
  if (name == "slow") return MhdWave::kSlow;
  if (name == "entropy") return MhdWave::kEntropy;
  throw std::invalid_argument("unknown MHD wave '" + name + "'");
}

const char* mhd_wave_name(MhdWave wave) {
  switch (wave) {
    case MhdWave::kFast:
      return "fast";
    case MhdWave::kAlfven:
      return "alfven";
    case MhdWave::kSlow:
      return "slow";
    case MhdWave::kEntropy:
      return "entropy";
  }
  return "?";
}

MhdSpeeds mhd_speeds(const MhdBackground& b) {
  MhdSpeeds s;
  const double a2 = b.gamma * b.p / b.rho;
  const double bn2 = b.B[0] * b.B[0] / b.rho;
  const double b2 = (b.B[0] * b.B[0] + b.B[1] * b.B[1] + b.B[2] * b.B[2]) / b.rho;
  // Roots of the characteristic polynomial c^4 - (a^2 + b^2) c^2 + a^2 c_a^2 = 0; the
  // slow speed from c_f^2 c_s^2 = a^2 c_a^2, which keeps it accurate when c_s << c_f.
  const double sum = a2 + b2;
  const double root = std::sqrt(std::max(0.0, sum * sum - 4 * a2 * bn2));
  const double cf2 = 0.5 * (sum + root);
  s.a = std::sqrt(a2);
  s.ca = std::sqrt(bn2);
  s.cf = std::sqrt(cf2);
  s.cs = std::sqrt(a2 * bn2 / cf2);
  return s;
}

MhdEigenmode mhd_eigenmode(const MhdBackground& b, MhdWave wave) {
  if (!(b.rho > 0) || !(b.p > 0) || !(b.gamma > 1))
    throw std::invalid_argument("the background needs rho > 0, p > 0 and gamma > 1");
  const double bt = std::hypot(b.B[1], b.B[2]);
  if (b.B[0] == 0 || bt == 0)
    throw std::invalid_argument(
        "the background field must have components both along and across the wave vector");
  const MhdSpeeds s = mhd_speeds(b);
  const double sqrt_rho = std::sqrt(b.rho);
  const double sgn = b.B[0] > 0 ? 1.0 : -1.0;
  // Direction of the transverse field and the normalisation factors of Roe & Balsara 1996
  // (SIAM J. Appl. Math. 56, 57, §2; also Ryu & Jones 1995, ApJ 442, 228, §2):
  const double beta1 = b.B[1] / bt, beta2 = b.B[2] / bt;
  // alpha_f^2 = (a^2 - c_s^2) / (c_f^2 - c_s^2), alpha_s^2 = (c_f^2 - a^2) / (c_f^2 - c_s^2),
  // which keep the eigenvectors bounded where two waves nearly coincide.
  const double df = s.cf * s.cf - s.cs * s.cs;
  const double alpha_f = std::sqrt(std::max(0.0, s.a * s.a - s.cs * s.cs) / df);
  const double alpha_s = std::sqrt(std::max(0.0, s.cf * s.cf - s.a * s.a) / df);

  // Primitive eigenvectors (rho, v_n, v_t1, v_t2, p, B_t1, B_t2) of the forward waves in
  // Roe & Balsara's form, in units without 4 pi. In the frame of the flow a wave of speed c
  // satisfies c drho = rho dv_n, c dp = gamma p dv_n, c rho dv_n = dp + B_t.dB_t,
  // c rho dv_t = -B_n dB_t and c dB_t = B_t dv_n - B_n dv_t; for the magnetosonic waves
  // dB_t = B_t c dv_n / (c^2 - c_a^2), and the identities (c^2 - a^2)(c^2 - c_a^2) =
  // c^2 b_t^2 (b_t^2 = B_t^2 / rho) and c_f c_s = a c_a turn that into the forms below.
  MhdEigenmode m;
  auto& r = m.primitive;
  const double gp = b.gamma * b.p;
  switch (wave) {
    case MhdWave::kFast:
      m.speed = s.cf;
      r = {b.rho * alpha_f,
           alpha_f * s.cf,
           -alpha_s * s.cs * beta1 * sgn,
           -alpha_s * s.cs * beta2 * sgn,
           alpha_f * gp,
           alpha_s * sqrt_rho * s.a * beta1,
           alpha_s * sqrt_rho * s.a * beta2};
      break;
    case MhdWave::kSlow:
      m.speed = s.cs;
      r = {b.rho * alpha_s,
           alpha_s * s.cs,
           alpha_f * s.cf * beta1 * sgn,
           alpha_f * s.cf * beta2 * sgn,
           alpha_s * gp,
           -alpha_f * sqrt_rho * s.a * beta1,
           -alpha_f * sqrt_rho * s.a * beta2};
      break;
    case MhdWave::kAlfven:
      // Transverse, incompressible: dB_t normal to B_t with |dB_t| = sqrt(rho), so that
      // dv_t = -sgn(B_n) dB_t / sqrt(rho).
      m.speed = s.ca;
      r = {0, 0, sgn * beta2, -sgn * beta1, 0, -sqrt_rho * beta2, sqrt_rho * beta1};
      break;
    case MhdWave::kEntropy:
      m.speed = 0;
      r = {1, 0, 0, 0, 0, 0, 0};
      break;
  }

  // dU = (dU/dW) dW about the background, whose transverse velocity is zero:
  // d(rho v) = v drho + rho dv, dE = dp / (gamma - 1) + v^2/2 drho + rho v.dv + B.dB.
  const double v[3] = {b.vn, 0, 0};
  auto& u = m.conserved;
  u[0] = r[0];
  for (int d = 0; d < 3; ++d) u[1 + d] = v[d] * r[0] + b.rho * r[1 + d];
  u[4] = r[4] / (b.gamma - 1) + 0.5 * b.vn * b.vn * r[0] + b.rho * b.vn * r[1] + b.B[1] * r[5] +
         b.B[2] * r[6];
  u[5] = 0;
  u[6] = r[5];
  u[7] = r[6];
  return m;
}

}  // namespace tessera::problems
