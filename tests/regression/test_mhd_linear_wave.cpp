// Linear MHD waves (problems/mhd_linear_wave) oblique to the grid, one period, on n x n x 16
// cells with n = 32 and 64: 22.6 and 45.3 cells per wavelength along k = 2 pi (1, 1, 0).
//
// The exact solution after one period is the initial state, which the test takes from the
// problem itself (Problem::initial_state of each cell: the 3-point Gauss averages that set
// up the run). The error is that of Gardiner & Stone 2008: the L1 error of every conserved
// variable (density, momentum, energy, field, psi) and the Euclidean norm of that vector,
// here relative to the amplitude. The Riemann solver is HLL explicitly (the thresholds are
// HLL's), the limiter the parameter file's MC.
//
// vl2 with MC: order >= 1.9 for all four waves (measured 2.02 to 2.38). rk2 with MC: order
// >= 1.6 for the fast wave (measured 1.70; Alfven 1.68, slow 2.19, entropy 1.70,
// docs/validation.md): with SSP-RK2 every stage's limited reconstruction clips the slopes
// at the extrema, which at these resolutions costs about 0.3 in order (1.84 to 1.88 from
// 45 to 91 cells per wavelength; the acoustic wave's rk2 shows the same,
// test_acoustic_wave.cpp). rk2 with the mc_ep limiter, which keeps smooth extrema: order
// >= 1.9 for all four waves (over half a period); vl2 with mc_ep for the fast wave.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/physics_mhd.hpp"
#include "run_problem.hpp"

namespace tessera {
namespace {

using kernels::MhdGlm;

// Phase speeds along k of the background rho = 1, p = 3/5, B = (1, sqrt 2, 1/2), gamma =
// 5/3 (c_f = 2, c_a = 1, c_s = 1/2); the entropy wave moves with the flow, v = 1.
double wave_speed(const std::string& wave) {
  return wave == "fast" ? 2.0 : wave == "alfven" ? 1.0 : wave == "slow" ? 0.5 : 1.0;
}

struct WaveError {
  double norm = 0;         // |(L1_v)_v| / A
  std::vector<double> l1;  // per variable, / A
  long steps = 0;
  double seconds = 0;
};

// Runs one wave for `periods` periods on n x n x 16 cells; the error against the initial
// state shifted along k by the distance the wave travels beyond whole periods (none for a
// whole number of periods).
WaveError wave_error(const std::string& wave, int n, const std::string& integrator,
                     const std::string& limiter, double periods = 1,
                     const std::vector<std::string>& extra = {}) {
  const double wavelength = 1 / std::sqrt(2.0);
  const double t_end = periods * wavelength / wave_speed(wave);
  char t_text[64], z_text[64];
  std::snprintf(t_text, sizeof t_text, "run.t_end=%.17g", t_end);
  std::snprintf(z_text, sizeof z_text, "mesh.xmax=[1,1,%.17g]", 16.0 / n);
  const std::string nx = std::to_string(n);
  std::vector<std::string> ov = {
      "mesh.nx=[" + nx + "," + nx + ",16]",
      z_text,
      t_text,
      "problem.wave=" + wave,
      "problem.periods=" + std::to_string(periods),
      "hydro.integrator=" + integrator,
      limiter == "ppm" ? "hydro.reconstruction=ppm" : "hydro.limiter=" + limiter,
      "hydro.riemann=hll",
      "run.log_interval=1000000"};
  if (wave == "entropy") ov.push_back("problem.vflow=1");
  ov.insert(ov.end(), extra.begin(), extra.end());
  const auto start = std::chrono::steady_clock::now();
  auto sim = testing::run_problem("mhd_linear_wave/mhd_linear_wave.toml", ov);
  WaveError out;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.steps = sim->step();
  EXPECT_DOUBLE_EQ(sim->time(), t_end);
  const double amp = sim->params().real("problem.amplitude");
  // The wave is a function of k.x - |k| c t: the exact state is the initial one a distance
  // c t (mod the wavelength) back along k = (1, 1, 0) / sqrt 2.
  const double shift = (periods - std::floor(periods)) * wavelength / std::sqrt(2.0);
  const int nvar = MhdGlm::kNumVars;
  out.l1.assign(nvar, 0.0);
  long cells = 0;
  std::vector<Real> exact(sim->mesh().nvar());
  testing::for_each_cell(*sim, [&](std::array<double, 3> x, double h, const double* u) {
    x[0] -= shift, x[1] -= shift;
    sim->problem().initial_state(CellBox::around(x, h), exact.data());
    for (int v = 0; v < nvar; ++v) out.l1[v] += std::fabs(u[v] - exact[v]);
    ++cells;
  });
  for (auto& e : out.l1) {
    e /= double(cells) * amp;
    out.norm += e * e;
  }
  out.norm = std::sqrt(out.norm);
  return out;
}

// Order from 32 to 64 at least min_order, error at 64 below max_e64 (after `periods`). The
// whole-period error is blind to two faults: a wave that never moved (no fluxes) is exact there,
// and one that only decays converges too; and, as c_f : c_a : c_s = 4 : 2 : 1 here, after a slow
// period every other wave (either direction) is back at its start, so a wrong slow eigenvector, a
// mixture of waves, is back too (a sign flipped in its v_t measured order 2.26 and error/A 1.17e-2,
// within the bounds). The half-period error (n = 32, vl2 runs), against the initial wave moved by
// half a wavelength, sees both: 1.14 for that eigenvector, about 2 for a wave at rest,
// against 1.3e-2 to 2.6e-2 measured.
void check_wave(const std::string& wave, const std::string& integrator, const std::string& limiter,
                double min_order, double max_e64, double max_half = 0, double periods = 1) {
  const WaveError e32 = wave_error(wave, 32, integrator, limiter, periods);
  const WaveError e64 = wave_error(wave, 64, integrator, limiter, periods);
  const double order = std::log2(e32.norm / e64.norm);
  std::printf(
      "%-7s wave (%s, %s): error/A 32: %.4e (%ld steps, %.1f s), 64: %.4e (%ld steps, %.1f "
      "s), order %.3f\n  L1/A per variable at 64 (rho, mx, my, mz, E, Bx, By, Bz, psi):",
      wave.c_str(), integrator.c_str(), limiter.c_str(), e32.norm, e32.steps, e32.seconds, e64.norm,
      e64.steps, e64.seconds, order);
  for (double v : e64.l1) std::printf(" %.2e", v);
  std::printf("\n");
  EXPECT_GE(order, min_order) << wave << " " << integrator;
  EXPECT_LT(e64.norm, max_e64) << wave << " " << integrator;
  if (max_half > 0) {
    const WaveError half = wave_error(wave, 32, integrator, limiter, 0.5);
    std::printf("  half a period, 32: error/A %.4e (%.1f s)\n", half.norm, half.seconds);
    EXPECT_LT(half.norm, max_half) << wave << " " << integrator;
  }
}

// Measured error/A at 64 (bounds about 1.5x): vl2 fast 6.07e-3, Alfven 6.32e-3, slow
// 9.40e-3, entropy 4.73e-3; rk2 fast 2.10e-2, Alfven 9.19e-3. After half a period at 32
// (vl2): fast 1.48e-2, Alfven 1.54e-2, slow 2.64e-2, entropy 1.34e-2.
TEST(MhdLinearWave, Vl2FastWaveSecondOrder) {
  check_wave("fast", "vl2", "mc", 1.9, 9e-3, 2.2e-2);
}
TEST(MhdLinearWave, Vl2AlfvenWaveSecondOrder) {
  check_wave("alfven", "vl2", "mc", 1.9, 9.5e-3, 2.3e-2);
}
TEST(MhdLinearWave, Vl2SlowWaveSecondOrder) {
  check_wave("slow", "vl2", "mc", 1.9, 1.4e-2, 4e-2);
}
TEST(MhdLinearWave, Vl2EntropyWaveSecondOrder) {
  check_wave("entropy", "vl2", "mc", 1.9, 7e-3, 2e-2);
}
TEST(MhdLinearWave, Rk2FastWaveConverges) {
  check_wave("fast", "rk2", "mc", 1.6, 3.2e-2);
}

// rk2 with the mc_ep slopes (reconstruction.hpp), which do not clip smooth extrema, over
// half a period (against the initial wave moved by half a wavelength: it also sees a wave
// that never moved, which a whole period cannot, and costs half): measured order 2.00
// (fast), 2.18 (Alfven), 2.57 (slow), 2.20 (entropy), error/A at 64 6.32e-3, 2.76e-3,
// 3.33e-3, 2.77e-3 (bounds about 1.5x; over a whole period the orders were the same, 2.00
// to 2.56); vl2 fast (whole period) 2.26, 4.16e-3.
TEST(MhdLinearWave, Rk2McEpFastWaveSecondOrder) {
  check_wave("fast", "rk2", "mc_ep", 1.9, 9.5e-3, 0, 0.5);
}
TEST(MhdLinearWave, Rk2McEpAlfvenWaveSecondOrder) {
  check_wave("alfven", "rk2", "mc_ep", 1.9, 4.2e-3, 0, 0.5);
}
TEST(MhdLinearWave, Rk2McEpSlowWaveSecondOrder) {
  check_wave("slow", "rk2", "mc_ep", 1.9, 5.0e-3, 0, 0.5);
}
TEST(MhdLinearWave, Rk2McEpEntropyWaveSecondOrder) {
  check_wave("entropy", "rk2", "mc_ep", 1.9, 4.2e-3, 0, 0.5);
}
TEST(MhdLinearWave, Vl2McEpFastWaveSecondOrder) {
  check_wave("fast", "vl2", "mc_ep", 1.9, 6.2e-3);
}

// PPM (reconstruction_ppm.hpp), rk2 over half a period as mc_ep above: error/A at 64
// 2.368e-3 (fast), 3.338e-4 (Alfven), 8.533e-5 (slow), 1.921e-4 (entropy): 2.7, 8.3, 39
// and 14 times below mc_ep's. Orders 1.97, 1.88, 1.38, 1.77 (entropy: no test of its own;
// the slow wave's shows the same growth): the slow and entropy waves'
// errors fall by only 2.6 and 3.4 from 32 to 64, because PPM's unlimited face values are a
// centred scheme whose modes SSP-RK2 amplifies a little every step (docs/validation.md,
// "PPM reconstruction": the slow wave at 128 cells reaches 6.3e-3 by half a period; with
// the Courant number halved the growth slows, it does not stop). The bounds below hold
// what the scheme gives today: a change that makes the growth faster fails them. Bounds:
// 1.5x the errors, orders 0.07 to 0.08 below the measured. vl2 (fast, whole period), whose
// predictor takes the mc_ep slopes with PPM (mol_stages.hpp): 4.70e-3, order 1.936 (with a
// donor-cell predictor 1.174e-2; mc_ep's own 4.16e-3).
TEST(MhdLinearWave, Rk2PpmFastWaveSecondOrder) {
  check_wave("fast", "rk2", "ppm", 1.9, 3.6e-3, 0, 0.5);
}
TEST(MhdLinearWave, Rk2PpmAlfvenWaveSecondOrder) {
  check_wave("alfven", "rk2", "ppm", 1.8, 5e-4, 0, 0.5);
}
TEST(MhdLinearWave, Rk2PpmSlowWaveSecondOrder) {
  check_wave("slow", "rk2", "ppm", 1.3, 1.3e-4, 0, 0.5);
}
TEST(MhdLinearWave, Vl2PpmFastWaveSecondOrder) {
  check_wave("fast", "vl2", "ppm", 1.9, 7e-3);
}

// PPM's order in space on the MHD waves. With vl2 the error is the sum of PPM's spatial
// error (fourth order on smooth waves: the unlimited interpolant, as
// ReconstructionPpm.AdvectedSineConvergesAtFourthOrder) and the integrator's second-order
// time error, which grows with (k c_wave dt)^2; at the default Courant number 0.4 the two
// are of like size on 32 to 64 cells and partly cancel, so the orders measured there are
// uneven (slow wave 0.83 from 32 to 64, 1.69 from 64 to 128; docs/validation.md). At
// Courant 0.1 the time error is 16 times smaller than at 0.4, and that of the waves slower
// than the fast one (which sets the step) a quarter to a sixteenth of the fast wave's, so
// their spatial order shows: measured from 16 to 32 cells, half
// a period, orders 4.10 (slow), 4.52 (Alfven), 4.30 (entropy), error/A at 32 1.926e-4,
// 1.193e-4, 1.446e-4 (bounds about 1.5x). With every extremum flattened (Colella &
// Woodward's limiter instead of Colella & Sekora's) it measured orders 1.76 to 2.22 and
// errors 76 to 146 times larger.
TEST(MhdLinearWave, Vl2PpmWavesConvergeAtFourthOrderInSpaceAtSmallCourant) {
  const struct {
    const char* wave;
    double max_e32;
  } cases[] = {{"slow", 2.9e-4}, {"alfven", 1.8e-4}, {"entropy", 2.2e-4}};
  for (const auto& c : cases) {
    const WaveError e16 = wave_error(c.wave, 16, "vl2", "ppm", 0.5, {"hydro.cfl=0.1"});
    const WaveError e32 = wave_error(c.wave, 32, "vl2", "ppm", 0.5, {"hydro.cfl=0.1"});
    const double order = std::log2(e16.norm / e32.norm);
    std::printf(
        "%-7s wave (vl2, ppm, Courant 0.1): error/A 16: %.4e, 32: %.4e (%.1f s), order %.3f\n",
        c.wave, e16.norm, e32.norm, e32.seconds, order);
    EXPECT_GE(order, 3.8) << c.wave;
    EXPECT_LT(e32.norm, c.max_e32) << c.wave;
  }
}

// PPM's unlimited face values are a centred scheme; SSP-RK2 amplifies its modes every step,
// the vl2 predictor-corrector does not (docs/validation.md, "PPM reconstruction"). The slow
// wave on 32 cells, after half a period and after two: a stable scheme's error grows as the
// time, 4 times. Measured: vl2 1.279e-4 and 5.282e-4 (4.13 times); rk2 2.227e-4 and
// 4.930e-2 (221 times, and its mode keeps growing with more steps). Before the vl2
// predictor used the mc_ep slopes with PPM (donor cell): 2.461e-2 after half a period.
TEST(MhdLinearWave, Vl2PpmSlowWaveErrorGrowsOnlyWithTheTime) {
  const WaveError half = wave_error("slow", 32, "vl2", "ppm", 0.5);
  const WaveError two = wave_error("slow", 32, "vl2", "ppm", 2);
  std::printf(
      "slow wave (vl2, ppm), 32: error/A after P/2 %.4e (%.1f s), after 2P %.4e (%.1f s): "
      "%.2f times\n",
      half.norm, half.seconds, two.norm, two.seconds, two.norm / half.norm);
  EXPECT_LT(half.norm, 2e-4);
  EXPECT_LT(two.norm, 4.5 * half.norm);
}

}  // namespace
}  // namespace tessera
