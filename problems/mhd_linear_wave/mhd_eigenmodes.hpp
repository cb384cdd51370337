// Right eigenvectors of the one-dimensional ideal MHD equations about a uniform state: the
// seven linear waves (fast, Alfven, slow magnetosonic pairs and the entropy wave) that the
// linear-wave problem sets up and that the unit test checks against the flux Jacobian of
// the solver (kernels/physics_mhd.hpp). Units: magnetic pressure B^2/2.
#pragma once

#include <array>
#include <string>

namespace tessera::problems {

// A uniform state in the frame of the wave: the normal direction n is the first axis, the
// two transverse axes t1, t2 complete a right-handed basis.
struct MhdBackground {
  double rho = 1;
  double p = 0.6;
  double gamma = 5.0 / 3.0;
  double vn = 0;                     // flow velocity along n (the transverse flow is 0)
  std::array<double, 3> B{1, 0, 0};  // (B_n, B_t1, B_t2)
};

enum class MhdWave { kFast, kAlfven, kSlow, kEntropy };

MhdWave parse_mhd_wave(const std::string& name);  // "fast", "alfven", "slow", "entropy"
const char* mhd_wave_name(MhdWave wave);

// The characteristic speeds relative to the flow: c_f >= c_a >= c_s >= 0 with
// c_f,s^2 = (a^2 + b^2 +- sqrt((a^2 + b^2)^2 - 4 a^2 c_a^2)) / 2, c_a^2 = B_n^2 / rho,
// b^2 = B^2 / rho, a the sound speed (Miyoshi & Kusano 2005, J. Comput. Phys. 208, 315, eq. 3).
struct MhdSpeeds {
  double a = 0, ca = 0, cf = 0, cs = 0;
};
MhdSpeeds mhd_speeds(const MhdBackground& b);

// One forward-moving eigenmode (eigenvalue vn + speed, speed >= 0).
struct MhdEigenmode {
  double speed = 0;  // relative to the flow: c_f, c_a, c_s or 0
  // Primitive perturbation (rho, v_n, v_t1, v_t2, p, B_t1, B_t2); B_n is not perturbed.
  std::array<double, 7> primitive{};
  // Conserved perturbation in the solver's order (rho, rho v_n, rho v_t1, rho v_t2, E,
  // B_n, B_t1, B_t2): dU/dW times the primitive one.
  std::array<double, 8> conserved{};
};

// Throws std::invalid_argument for a state whose eigenvectors this normalisation does not
// define: B_n = 0 or B_t = 0 (degenerate waves), or a non-positive density or pressure.
MhdEigenmode mhd_eigenmode(const MhdBackground& b, MhdWave wave);

}  // namespace tessera::problems
