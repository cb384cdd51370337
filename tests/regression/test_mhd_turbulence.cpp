// Decaying supersonic MHD turbulence (problems/mhd_turbulence) at 32^3: the initial state is
// the one the parameters describe (rms Mach number, zero momentum, plasma beta, a velocity
// spectrum E(k) ∝ k^-2 over [kmin, kmax] and nothing outside it), a seed gives the same
// state bit for bit and another seed another one, a few steps of the periodic run conserve
// mass, momentum, energy and magnetic flux to round-off, and the problem refuses the
// settings that make it meaningless.
#include <fftw3.h>
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "run_problem.hpp"
#include "tessera/evolve/schema.hpp"
#include "tessera/mesh/geometry.hpp"
#include "tessera/problem/problem.hpp"

namespace tessera {
namespace {

const std::string kFile =
    std::string(TESSERA_SOURCE_DIR) + "/problems/mhd_turbulence/mhd_turbulence.toml";
constexpr int kN = 32;

Params turbulence_params(std::vector<std::string> overrides = {}) {
  overrides.insert(overrides.begin(), "mesh.nx=[32,32,32]");
  overrides.push_back("output.enabled=false");
  overrides.push_back(testing::backend_override());
  set_log_quiet(true);
  return load_run_params(kFile, overrides);
}

// The initial state of a run, initialised but not advanced.
std::unique_ptr<evolve::Simulation> initial_run(std::vector<std::string> overrides = {}) {
  auto sim = std::make_unique<evolve::Simulation>(turbulence_params(std::move(overrides)));
  sim->initialize();
  return sim;
}

// The root-grid velocity of a uniform 32^3 run, as v[d][(k * n + j) * n + i].
std::array<std::vector<double>, 3> root_velocity(const evolve::Simulation& sim) {
  std::array<std::vector<double>, 3> v;
  for (auto& c : v) c.assign(std::size_t(kN) * kN * kN, 0.0);
  const double h = 1.0 / kN;
  testing::for_each_cell(sim, [&](std::array<double, 3> x, double dx, const double* u) {
    EXPECT_EQ(dx, h);
    std::size_t idx = 0;
    for (int d = 2; d >= 0; --d) idx = idx * kN + std::size_t(std::floor(x[d] / h));
    for (int d = 0; d < 3; ++d) v[d][idx] = u[1 + d] / u[0];
  });
  return v;
}

TEST(MhdTurbulence, InitialStateHasTheRequestedMachNumberMomentumAndBeta) {
  auto sim = initial_run();
  const auto& p = sim->params();
  const double rho0 = p.real("problem.rho0"), cs = p.real("problem.cs");
  const double mach = p.real("problem.mach"), beta = p.real("problem.beta");
  const auto& model = sim->model();
  double volume = 0, v2 = 0, mom_abs = 0, worst_beta = 0;
  std::array<double, 3> mom{};
  std::vector<Real> w(model.num_vars());
  std::vector<Real> u(model.num_vars());
  testing::for_each_cell(*sim, [&](std::array<double, 3>, double h, const double* c) {
    const double dv = h * h * h;
    volume += dv;
    EXPECT_EQ(c[0], rho0);
    double m2 = 0;
    for (int d = 0; d < 3; ++d) {
      mom[d] += c[1 + d] * dv;
      mom_abs += std::fabs(c[1 + d]) * dv;
      m2 += c[1 + d] * c[1 + d];
    }
    v2 += m2 / (c[0] * c[0]) * dv;
    for (int v = 0; v < model.num_vars(); ++v) u[v] = Real(c[v]);
    model.to_primitive(u.data(), 1, w.data());
    const double b2 = c[5] * c[5] + c[6] * c[6] + c[7] * c[7];
    worst_beta = std::max(worst_beta, std::fabs(2 * double(w[4]) / b2 / beta - 1));
  });
  const double rms_mach = std::sqrt(v2 / volume) / cs;
  std::printf(
      "mhd_turbulence 32^3: rms Mach %.15g (problem.mach %g), |sum rho v dV| / sum "
      "rho |v| dV = %.3e %.3e %.3e, largest |beta / problem.beta - 1| = %.3e\n",
      rms_mach, mach, mom[0] / mom_abs, mom[1] / mom_abs, mom[2] / mom_abs, worst_beta);
  EXPECT_NEAR(rms_mach / mach, 1.0, 1e-10);
  for (int d = 0; d < 3; ++d) EXPECT_LT(std::fabs(mom[d]) / mom_abs, 1e-13) << "axis " << d;
  EXPECT_LT(worst_beta, 1e-10);
}

// The shell-averaged power of the initial velocity, from an FFT of the root grid: P(k) =
// <|v_k|^2> over each shell of equal |k| (integer |k|^2, so the envelope is constant within a
// shell), and the slope of the 1D spectrum E(k) = 4 pi k^2 P(k) from a least-squares fit of
// log P against log k weighted by the shell's mode count. Also the fraction of the power
// outside [kmin, kmax], which must be round-off.
struct SpectrumFit {
  double slope_1d = 0;
  double outside_fraction = 0;
  int shells = 0;
  // <|v_k|^2 |k|^4> over the plane k_x = 0, which the r2c layout holds with both v_k and
  // v_-k, relative to that over the other modes: 1 for an isotropic spectrum (the plane
  // made Hermitian as the problem does; about 1/2 when FFTW is left to discard half of it).
  double plane_ratio = 0;
};

SpectrumFit velocity_spectrum(const evolve::Simulation& sim) {
  const auto v = root_velocity(sim);
  const double kmin = sim.params().real("problem.kmin"), kmax = sim.params().real("problem.kmax");
  const int nh = kN / 2 + 1;
  std::vector<double> in(std::size_t(kN) * kN * kN);
  // std::complex<double> has fftw_complex's layout (FFTW manual §4.1.1).
  std::vector<std::complex<double>> out(std::size_t(kN) * kN * nh);
  fftw_plan plan = fftw_plan_dft_r2c_3d(kN, kN, kN, in.data(),
                                        reinterpret_cast<fftw_complex*>(out.data()), FFTW_ESTIMATE);
  std::map<int, std::pair<double, double>> shells;  // |k|^2 -> (modes, power)
  double inside = 0, outside = 0;
  double plane[2] = {0, 0}, rest[2] = {0, 0};  // sum of |v_k|^2 |k|^4, modes
  std::vector<double> power(out.size(), 0.0);
  for (int d = 0; d < 3; ++d) {
    in = v[d];
    fftw_execute(plan);
    for (std::size_t c = 0; c < out.size(); ++c) power[c] += std::norm(out[c]);
  }
  fftw_destroy_plan(plan);
  for (int iz = 0; iz < kN; ++iz)
    for (int iy = 0; iy < kN; ++iy)
      for (int ix = 0; ix < nh; ++ix) {
        const int kx = ix, ky = iy <= kN / 2 ? iy : iy - kN, kz = iz <= kN / 2 ? iz : iz - kN;
        const int k2 = kx * kx + ky * ky + kz * kz;
        // The r2c half holds v_-k implicitly for 0 < kx < N/2.
        const double weight = (ix == 0 || 2 * ix == kN) ? 1.0 : 2.0;
        const double pw = power[(std::size_t(iz) * kN + iy) * nh + ix];
        const double k = std::sqrt(double(k2));
        if (k >= kmin && k <= kmax) {
          inside += weight * pw;
          auto& s = shells[k2];
          s.first += weight;
          s.second += weight * pw;
          double* side = ix == 0 ? plane : rest;
          side[0] += pw * double(k2) * double(k2);
          side[1] += 1;
        } else {
          outside += weight * pw;
        }
      }
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [k2, s] : shells) {
    if (s.second <= 0) continue;  // the Nyquist-only shell, left out by construction
    const double x = 0.5 * std::log(double(k2)), y = std::log(s.second / s.first);
    sw += s.first, sx += s.first * x, sy += s.first * y;
    sxx += s.first * x * x, sxy += s.first * x * y;
  }
  SpectrumFit fit;
  fit.slope_1d = (sw * sxy - sx * sy) / (sw * sxx - sx * sx) + 2;
  fit.outside_fraction = outside / (inside + outside);
  fit.shells = int(shells.size());
  fit.plane_ratio = (plane[0] / plane[1]) / (rest[0] / rest[1]);
  return fit;
}

// Measured with seed 1 at 32^3: 1D slopes -2.02 (kmin 1, kmax 8) and -2.08 (2 .. 6), plane
// ratios 1.03 and 0.99. Over seeds 1..20 the slopes are -1.98 +- 0.05 and -1.95 +- 0.09
// (the log of a shell's mean power is biased low by about 1 / (2 modes), most in the small
// shells of small k) and the ratios 0.99 +- 0.06 and 0.98 +- 0.10. The bounds catch an
// envelope a quarter of a power off (E ∝ k^-1.5: slope -1.52) and a plane k_x = 0 left
// non-Hermitian (ratio 0.53).
TEST(MhdTurbulence, InitialVelocitySpectrumIsKToTheMinusTwoInsideTheShell) {
  for (const auto& [shell, overrides] :
       std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"1..8", {}}, {"2..6", {"problem.kmin=2", "problem.kmax=6"}}}) {
    auto sim = initial_run(overrides);
    const SpectrumFit fit = velocity_spectrum(*sim);
    std::printf(
        "mhd_turbulence 32^3, shell %s: 1D spectral slope %.4f over %d shells, power "
        "outside the shell %.3e, power of the plane k_x = 0 / the rest %.3f\n",
        shell.c_str(), fit.slope_1d, fit.shells, fit.outside_fraction, fit.plane_ratio);
    EXPECT_NEAR(fit.slope_1d, -2.0, 0.15) << "shell " << shell;
    EXPECT_NEAR(fit.plane_ratio, 1.0, 0.25) << "shell " << shell;
    EXPECT_LT(fit.outside_fraction, 1e-20) << "shell " << shell;
  }
}

// initial_state of every root cell, as bytes.
std::vector<Real> root_state(const Params& params) {
  const auto problem = create_problem(params);
  const physics::Model model(params);
  const int nvar = model.num_vars();
  const double h = 1.0 / kN;
  std::vector<Real> out(std::size_t(kN) * kN * kN * nvar);
  for (int k = 0; k < kN; ++k)
    for (int j = 0; j < kN; ++j)
      for (int i = 0; i < kN; ++i)
        problem->initial_state(CellBox::around({(i + 0.5) * h, (j + 0.5) * h, (k + 0.5) * h}, h),
                               out.data() + ((std::size_t(k) * kN + j) * kN + i) * nvar);
  return out;
}

TEST(MhdTurbulence, SeedGivesTheSameStateBitForBitAndAnotherSeedAnotherState) {
  const auto a = root_state(turbulence_params({"problem.seed=1"}));
  const auto b = root_state(turbulence_params({"problem.seed=1"}));
  const auto c = root_state(turbulence_params({"problem.seed=2"}));
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(Real)), 0);
  // Every cell's velocity differs with another seed (density, pressure and field do not).
  const int nvar = int(a.size() / (std::size_t(kN) * kN * kN));
  long same = 0;
  for (std::size_t c0 = 0; c0 < a.size(); c0 += nvar)
    same += a[c0 + 1] == c[c0 + 1] && a[c0 + 2] == c[c0 + 2] && a[c0 + 3] == c[c0 + 3];
  EXPECT_EQ(same, 0);
}

// A few steps of the periodic box: the totals change by round-off only. Momentum, zero in
// total, is compared with the total |rho v| dV; the field's flux with B0 times the volume.
TEST(MhdTurbulence, ShortRunConservesMassMomentumEnergyAndMagneticFlux) {
  auto sim = initial_run({"run.max_steps=5"});
  const auto t0 = sim->conserved_totals();
  double mom_abs = 0;
  testing::for_each_cell(*sim, [&](std::array<double, 3>, double h, const double* c) {
    for (int d = 0; d < 3; ++d) mom_abs += std::fabs(c[1 + d]) * h * h * h;
  });
  sim->run();
  const auto t1 = sim->conserved_totals();
  ASSERT_EQ(sim->step(), 5);
  const double b0 = t0[5];  // volume 1
  const double dmass = std::fabs(t1[0] / t0[0] - 1), denergy = std::fabs(t1[4] / t0[4] - 1);
  double dmom = 0, dflux = 0;
  for (int d = 0; d < 3; ++d) {
    dmom = std::max(dmom, std::fabs(t1[1 + d] - t0[1 + d]) / mom_abs);
    dflux = std::max(dflux, std::fabs(t1[5 + d] - t0[5 + d]) / b0);
  }
  std::printf(
      "mhd_turbulence 32^3, 5 steps to t = %.4e: relative change of mass %.2e, "
      "energy %.2e, momentum %.2e (of sum |rho v| dV), magnetic flux %.2e (of B0 V)\n",
      sim->time(), dmass, denergy, dmom, dflux);
  EXPECT_LT(dmass, 1e-13);
  EXPECT_LT(denergy, 1e-13);
  EXPECT_LT(dmom, 1e-13);
  EXPECT_LT(dflux, 1e-13);
}

void expect_rejected(const std::string& overrides, const std::vector<std::string>& needles) {
  const auto r = testing::run_tessera("check " + kFile + " mesh.nx=[32,32,32] " + overrides);
  EXPECT_EQ(r.status, 2) << overrides << "\n" << r.output;
  for (const auto& n : needles)
    EXPECT_NE(r.output.find(n), std::string::npos) << overrides << ": missing '" << n << "' in:\n"
                                                   << r.output;
}

TEST(MhdTurbulence, RejectsSettingsThatMakeItMeaningless) {
  expect_rejected("mhd.enabled=false", {"mhd.enabled = false", "hydrodynamic", "problem.beta"});
  expect_rejected("mesh.bc_zlo=outflow mesh.bc_zhi=outflow",
                  {"periodic", "mesh.bc_zlo = \"outflow\""});
  expect_rejected("mesh.nx=[32,32,64] mesh.xmax=[1,1,2]", {"mesh.nx = [32, 32, 64]", "cube"});
  expect_rejected("problem.kmin=4 problem.kmax=2", {"problem.kmin = 4", "problem.kmax = 2"});
  expect_rejected("problem.kmax=17", {"problem.kmax = 17", "Nyquist wavenumber 16"});
  expect_rejected("problem.kmin=1.2 problem.kmax=1.3", {"no integer wavevector"});
  expect_rejected("problem.kmin=16 problem.kmax=16", {"no integer wavevector", "Nyquist"});
  expect_rejected("problem.mach=0", {"problem.mach"});
  expect_rejected("problem.beta=0", {"problem.beta"});
  expect_rejected("problem.beta=1e-20", {"problem.beta = 1e-20", "round-off"});
  // At the Nyquist wavenumber: accepted.
  const auto r = testing::run_tessera("check " + kFile + " mesh.nx=[32,32,32] problem.kmax=16");
  EXPECT_EQ(r.status, 0) << r.output;
}

}  // namespace
}  // namespace tessera
