// Decaying supersonic MHD turbulence (Stone, Ostriker & Gammie 1998, ApJ 508, L99; the
// MHD test of Wang, Abel & Kaehler 2010, New Astron. 15, 581, §7.4): a periodic cube of
// uniform density rho0 and pressure p0 = rho0 cs^2 / gamma, threaded by a uniform field
// B0 e_x of plasma beta 2 p0 / B0^2 (magnetic pressure B^2 / 2), set moving by a Gaussian
// random velocity field of rms Mach number problem.mach, which then decays.
//
// Velocity spectrum. Each Cartesian component is an independent Gaussian random field
// whose Fourier amplitudes on the integer wavevectors n (k = 2 pi n / L) have
//   <|v_n|^2> ∝ |n|^-4   for kmin <= |n| <= kmax, and 0 elsewhere,
// so that the 1D (shell-summed) spectrum E(k) = 4 pi k^2 <|v_k|^2> ∝ k^-2, the convention
// of Stone et al. (1998) for "P(k) ∝ k^-2". Modes with a Nyquist component (n_d = N/2)
// are left out: their sign is ambiguous and a real field cannot give them a phase.
//
// Reproducibility. The amplitudes come from std::mt19937_64 seeded with problem.seed,
// turned into uniform doubles from the generator's raw 64-bit output and into Gaussian
// deviates by the Box-Muller transform, in a fixed order over the modes: the standard
// distributions' algorithms are implementation-defined, this is not. The field is then
// FFTW's complex-to-real transform with an FFTW_ESTIMATE plan (chosen without timing), so
// a seed gives the same field bit for bit with the same FFTW build and math library, and
// to round-off elsewhere.
//
// Discretisation. The field is the Fourier series at the centres of the root cells
// (mesh.nx, the whole domain), normalised on them: its mean is subtracted (zero momentum)
// and it is scaled to the rms Mach number. A refined cell takes the value of the root cell
// that holds its centre, so the initial state has the same rms, momentum and spectrum with
// any refinement (interpolation would smooth the field and change all three).
#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/problem/problem.hpp"

namespace tessera::problems {

namespace {

// The Fourier amplitude's power law |v_n| ∝ |n|^kAmplitudeExponent: |v_n|^2 ∝ |n|^-4 in
// 3D, E(k) ∝ k^-2 in 1D (Stone et al. 1998).
constexpr double kAmplitudeExponent = -2.0;

// A uniform double in [0, 1) from the top 53 bits of the generator's raw output: exact and
// the same everywhere (std::uniform_real_distribution's algorithm is implementation-defined).
double uniform01(std::mt19937_64& gen) {
  return double(gen() >> 11) * 0x1.0p-53;
}

// Two independent standard normal deviates from two uniforms (Box & Muller 1958, Ann. Math.
// Stat. 29, 610); 1 - u lies in (0, 1], so the logarithm is finite.
std::pair<double, double> gaussian_pair(std::mt19937_64& gen) {
  const double u1 = 1.0 - uniform01(gen), u2 = uniform01(gen);
  const double r = std::sqrt(-2.0 * std::log(u1));
  return {r * std::cos(2 * M_PI * u2), r * std::sin(2 * M_PI * u2)};
}

// The signed wavenumber of FFT index m of n points.
int wavenumber(int m, int n) {
  return m <= n / 2 ? m : m - n;
}

struct FftwComplexDeleter {
  void operator()(fftw_complex* p) const { fftw_free(p); }
};
struct FftwRealDeleter {
  void operator()(double* p) const { fftw_free(p); }
};

// The velocity field of the turbulence on the root cells (n^3, x fastest), with zero mean
// and the rms speed vrms.
std::vector<std::array<double, 3>> turbulent_velocity(int n, double kmin, double kmax,
                                                      std::uint64_t seed, double vrms) {
  // FFTW's row-major n0 x n1 x n2 real array with n2 fastest: (z, y, x). The complex half
  // array is n x n x (n/2 + 1), x halved; the planes n_x = 0 and n_x = n/2 hold both v_n and
  // v_-n and must be Hermitian, which is made explicit below (FFTW's result for other input
  // depends on its algorithm).
  const int nh = n / 2 + 1;
  const std::size_t ncomplex = std::size_t(n) * n * nh, nreal = std::size_t(n) * n * n;
  std::unique_ptr<fftw_complex, FftwComplexDeleter> spec(
      static_cast<fftw_complex*>(fftw_malloc(sizeof(fftw_complex) * ncomplex)));
  std::unique_ptr<double, FftwRealDeleter> real(
      static_cast<double*>(fftw_malloc(sizeof(double) * nreal)));
  if (!spec || !real)
    throw Error(ErrorKind::kResources, "mhd_turbulence: cannot allocate the FFT arrays");
  // Planned before the data are written: planning may overwrite the arrays.
  fftw_plan plan = fftw_plan_dft_c2r_3d(n, n, n, spec.get(), real.get(), FFTW_ESTIMATE);
  if (!plan) throw Error(ErrorKind::kInternal, "mhd_turbulence: FFTW could not plan the transform");

  std::vector<std::array<double, 3>> v(nreal);
  std::mt19937_64 gen(seed);
  for (int d = 0; d < 3; ++d) {
    fftw_complex* a = spec.get();
    // Every mode draws its two deviates, inside the shell or not, so that a seed's modes
    // keep their amplitudes when kmin or kmax change.
    for (int iz = 0; iz < n; ++iz)
      for (int iy = 0; iy < n; ++iy)
        for (int ix = 0; ix < nh; ++ix) {
          const auto [g1, g2] = gaussian_pair(gen);
          const int kx = wavenumber(ix, n), ky = wavenumber(iy, n), kz = wavenumber(iz, n);
          const double k = std::sqrt(double(kx * kx + ky * ky + kz * kz));
          const bool nyquist = 2 * ix == n || 2 * iy == n || 2 * iz == n;
          const double amp =
              (!nyquist && k >= kmin && k <= kmax) ? std::pow(k, kAmplitudeExponent) : 0.0;
          const std::size_t c = (std::size_t(iz) * n + iy) * nh + ix;
          a[c][0] = amp * g1;
          a[c][1] = amp * g2;
        }
    // Hermitian symmetry in the planes n_x = 0 (and n_x = n/2, whose modes are Nyquist
    // modes, all zero): v(-n) = conj v(n); of each pair the later index takes the conjugate
    // of the earlier, and the self-conjugate modes (k = 0 and Nyquist) are zero.
    for (int iz = 0; iz < n; ++iz)
      for (int iy = 0; iy < n; ++iy) {
        const int jz = (n - iz) % n, jy = (n - iy) % n;
        if (std::size_t(jz) * n + jy >= std::size_t(iz) * n + iy) continue;
        const std::size_t c = (std::size_t(iz) * n + iy) * nh, m = (std::size_t(jz) * n + jy) * nh;
        a[c][0] = a[m][0];
        a[c][1] = -a[m][1];
      }
    fftw_execute(plan);  // c2r overwrites the input, which is drawn anew per component
    const double* r = real.get();
    for (std::size_t c = 0; c < nreal; ++c) v[c][d] = r[c];
  }
  fftw_destroy_plan(plan);

  // Zero mean (no net momentum: the density is uniform) and the rms speed vrms.
  for (int d = 0; d < 3; ++d) {
    double sum = 0;
    for (const auto& x : v) sum += x[d];
    const double mean = sum / double(nreal);
    for (auto& x : v) x[d] -= mean;
  }
  double sum2 = 0;
  for (const auto& x : v) sum2 += x[0] * x[0] + x[1] * x[1] + x[2] * x[2];
  if (!(sum2 > 0))
    throw Error(ErrorKind::kInternal,
                "the velocity field is zero: the shell [problem.kmin, problem.kmax] holds no "
                "mode, which validation should have refused");
  const double scale = vrms / std::sqrt(sum2 / double(nreal));
  for (auto& x : v)
    for (int d = 0; d < 3; ++d) x[d] *= scale;
  return v;
}

class MhdTurbulence final : public Problem {
 public:
  explicit MhdTurbulence(const Params& p)
      : rho0_(p.real("problem.rho0")),
        p0_(rho0_ * p.real("problem.cs") * p.real("problem.cs") / p.real("hydro.gamma")),
        b0_(std::sqrt(2 * p0_ / p.real("problem.beta"))),
        lo_(p.real3("mesh.xmin")),
        dx0_((p.real3("mesh.xmax")[0] - lo_[0]) / double(p.int3("mesh.nx")[0])),
        n_(static_cast<int>(p.int3("mesh.nx")[0])),
        model_(p) {
    velocity_ = turbulent_velocity(n_, p.real("problem.kmin"), p.real("problem.kmax"),
                                   static_cast<std::uint64_t>(p.integer("problem.seed")),
                                   p.real("problem.mach") * p.real("problem.cs"));
  }

  // Passive scalars, if any, have the uniform concentration 1.
  void initial_state(const CellBox& cell, Real* u) const override {
    const auto c = cell.center();
    std::size_t idx = 0;
    for (int d = 2; d >= 0; --d) {
      const long i = static_cast<long>(std::floor((c[d] - lo_[d]) / dx0_));
      idx = idx * n_ + std::size_t(std::clamp(i, 0L, long(n_ - 1)));
    }
    physics::FlowState f;
    f.rho = rho0_;
    f.v = velocity_[idx];
    f.p = p0_;
    f.B = {b0_, 0, 0};
    f.s.fill(1.0);
    model_.to_conserved(f, u);
  }

 private:
  double rho0_, p0_, b0_;
  std::array<double, 3> lo_;
  double dx0_;
  int n_;
  std::vector<std::array<double, 3>> velocity_;
  physics::Model model_;
};

// What makes the turbulence meaningless (see ProblemInfo::validate).
void validate_mhd_turbulence(const Params& p, const mesh::Geometry& g) {
  if (!p.boolean("mhd.enabled"))
    throw Error(ErrorKind::kInput,
                "mhd.enabled = false: the problem is magnetised turbulence; its field "
                "B0 (problem.beta = " +
                    format_number(p.real("problem.beta")) +
                    ") would be dropped by the hydrodynamic equations and the run would be "
                    "another problem; set mhd.enabled = true");
  require_periodic(p, g,
                   "the velocity field is a Fourier series on the box, periodic by "
                   "construction, and the turbulence decays in a closed box");
  const auto nx = g.root_cells;
  if (nx[0] != nx[1] || nx[0] != nx[2])
    throw Error(ErrorKind::kInput,
                "mesh.nx = [" + std::to_string(nx[0]) + ", " + std::to_string(nx[1]) + ", " +
                    std::to_string(nx[2]) +
                    "]: the root grid must be a cube (equal mesh.nx) for the isotropic "
                    "spectrum, whose wavenumbers are in units of 2 pi / L of one box length L");
  const double kmin = p.real("problem.kmin"), kmax = p.real("problem.kmax");
  const std::string shell =
      "problem.kmin = " + format_number(kmin) + ", problem.kmax = " + format_number(kmax);
  if (kmax < kmin)
    throw Error(ErrorKind::kInput, shell + ": kmax is below kmin, so the spectrum is empty");
  const int nyquist = nx[0] / 2;
  if (kmax > nyquist)
    throw Error(ErrorKind::kInput,
                shell + ": kmax exceeds the Nyquist wavenumber " + std::to_string(nyquist) +
                    " of mesh.nx = " + std::to_string(nx[0]) +
                    " (in units of 2 pi / L); lower problem.kmax or raise mesh.nx");
  // The shell must hold a wavevector whose components lie below the Nyquist wavenumber
  // (the modes with a Nyquist component are left out): e.g. [1.2, 1.3] holds none (|n|^2 is
  // an integer), nor does kmin = kmax = mesh.nx / 2.
  bool any = false;
  const int top = nyquist - 1;
  for (int kz = -top; kz <= top && !any; ++kz)
    for (int ky = -top; ky <= top && !any; ++ky)
      for (int kx = -top; kx <= top && !any; ++kx) {
        const double k = std::sqrt(double(kx * kx + ky * ky + kz * kz));
        any = k >= kmin && k <= kmax;
      }
  if (!any)
    throw Error(ErrorKind::kInput, shell +
                                       ": no integer wavevector with components below the "
                                       "Nyquist wavenumber " +
                                       std::to_string(nyquist) +
                                       " has a length in the shell [kmin, kmax]; widen it");
  const double rho0 = p.real("problem.rho0"), cs = p.real("problem.cs");
  const double gamma = p.real("hydro.gamma"), mach = p.real("problem.mach");
  const double beta = p.real("problem.beta");
  const double p0 = rho0 * cs * cs / gamma;
  const std::string rho0_text = "problem.rho0 = " + format_number(rho0);
  const std::string p0_text = "the pressure rho0 cs^2 / gamma = " + format_number(p0) +
                              " (problem.cs = " + format_number(cs) +
                              ", hydro.gamma = " + format_number(gamma) + ")";
  require_density_above_floor(p, rho0, rho0_text);
  require_pressure_above_floor(p, p0, p0_text);
  // The fastest cells of a Gaussian field of N^3 points move at a few times the rms speed
  // (|v| > 5 v_rms has probability below 1e-15 per cell); the pressure must survive the
  // kinetic and magnetic energies the solver subtracts from E at such a speed.
  const double vpeak = 5 * mach * cs;
  const std::string state = rho0_text + ", " + p0_text + ", a speed of 5 problem.mach * " +
                            "problem.cs = " + format_number(vpeak) +
                            " (problem.mach = " + format_number(mach) + ")";
  require_representable_state(p, rho0, {vpeak, 0, 0}, p0, state);
  const double magnetic = p0 / beta;  // B0^2 / 2
  const double eps = sizeof(Real) == sizeof(float) ? 0x1.0p-24 : 0x1.0p-53;
  const double kinetic = 0.5 * rho0 * vpeak * vpeak;
  if (!(4 * eps * (magnetic + kinetic + p0 / (gamma - 1)) * (gamma - 1) <= 0.01 * p0))
    throw Error(ErrorKind::kInput,
                "problem.beta = " + format_number(beta) + " with " + state +
                    ": the magnetic energy B0^2 / 2 = " + format_number(magnetic) +
                    " swamps the thermal energy, so the pressure the solver recovers from "
                    "the total energy is round-off; raise problem.beta");
}

std::vector<ParamSpec> mhd_turbulence_params() {
  const Range positive{0, std::numeric_limits<double>::infinity(), true, false};
  const Range wavenumber{1, std::numeric_limits<double>::infinity(), false, false};
  return {
      {"problem", "rho0", ParamType::kReal, 1.0, "uniform initial density", positive, 0, {}},
      {"problem",
       "cs",
       ParamType::kReal,
       1.0,
       "initial sound speed; the pressure is rho0 cs^2 / gamma",
       positive,
       0,
       {}},
      {"problem",
       "mach",
       ParamType::kReal,
       10.0,
       "rms Mach number of the initial velocity: its root-mean-square speed over the root "
       "cells divided by cs",
       positive,
       0,
       {}},
      {"problem",
       "beta",
       ParamType::kReal,
       0.1,
       "plasma beta 2 p0 / B0^2 of the uniform initial field B0 along x",
       positive,
       0,
       {}},
      {"problem",
       "kmin",
       ParamType::kReal,
       1.0,
       "smallest wavenumber of the velocity spectrum, in units of 2 pi / L",
       wavenumber,
       0,
       {}},
      {"problem",
       "kmax",
       ParamType::kReal,
       8.0,
       "largest wavenumber of the velocity spectrum, in units of 2 pi / L (at most mesh.nx / 2)",
       wavenumber,
       0,
       {}},
      {"problem",
       "seed",
       ParamType::kInt,
       std::int64_t(1),
       "seed of the random velocity field (std::mt19937_64; the same seed gives the same "
       "field)",
       {0, std::numeric_limits<double>::infinity()},
       0,
       {}},
  };
}

const ProblemRegistrar kRegistrar{{
    "mhd_turbulence",
    "Decaying supersonic MHD turbulence: random velocity field, E(k) ∝ k^-2, uniform B0 "
    "(periodic)",
    mhd_turbulence_params,
    [](const Params& p) -> std::unique_ptr<Problem> { return std::make_unique<MhdTurbulence>(p); },
    validate_mhd_turbulence,
    [](const Params&) { return 3; },  // the flow varies along all three axes
}};

}  // namespace

}  // namespace tessera::problems
