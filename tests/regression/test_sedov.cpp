// Sedov-Taylor blast against the self-similar solution (problems/sedov/sedov_solution.hpp).
// One octant of the blast with reflecting boundaries through the centre: N^3 cells of the
// octant resolve the blast like (2N)^3 cells of the whole sphere, and the run exercises
// the reflecting boundaries.
//
// Shock radius: the outer half-maximum of the radially binned density profile, i.e. the
// radius where the density falls to (peak + rho0) / 2. Smearing the thin post-shock shell
// over a few cells moves this point outward by a fixed fraction of a cell (0.8 cells
// measured), so the error falls linearly with the cell size; required: within 3% of
// xi0 (E t^2 / rho0)^(1/5) at 48^3 (96^3 for the whole sphere; measured 2.65% with rk2,
// 2.51% with vl2), and an error that shrinks with every refinement. The post-shock peak is smeared
// over a few cells, so it only approaches the strong-shock ratio (gamma+1)/(gamma-1) = 6 as the
// resolution grows: it must increase with resolution and lie within 8% of what the scheme
// measured at each resolution (rk2 1.950 / 2.715 / 3.218 at 16 / 32 / 48; vl2 1.977 / 2.742 /
// 3.239). "Below 6" alone let through any peak from 1.95 to 6 at 48^3: a scheme more
// diffusive or one overshooting by half would have passed.
#include <gtest/gtest.h>

#include <array>
#include <cmath>

#include "problems/sedov/sedov_solution.hpp"
#include "run_problem.hpp"

namespace tessera {
namespace {

struct SedovRun {
  double shock_radius = 0;
  double exact_radius = 0;
  double peak = 0;
};

SedovRun run_sedov(int n, const std::string& integrator) {
  std::vector<std::string> ov = {
      "mesh.nx=[" + std::to_string(n) + "," + std::to_string(n) + "," + std::to_string(n) + "]",
      "mesh.xmin=[0,0,0]", "mesh.xmax=[0.5,0.5,0.5]"};
  for (const auto& o : testing::scheme_overrides(integrator)) ov.push_back(o);
  for (char a : {'x', 'y', 'z'}) ov.push_back(std::string("mesh.bc_") + a + "lo=reflecting");
  auto sim = testing::run_problem("sedov/sedov.toml", ov);
  const auto& p = sim->params();
  const double h = 0.5 / n, rho0 = p.real("problem.rho0");
  const int nbins = static_cast<int>(0.5 * std::sqrt(3.0) / h) + 1;
  std::vector<double> sum(nbins, 0), cnt(nbins, 0);
  testing::for_each_cell(*sim, [&](std::array<double, 3> x, double, const double* u) {
    const int b = static_cast<int>(std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]) / h);
    sum[b] += u[0];
    cnt[b] += 1;
  });
  SedovRun r;
  int ipeak = 0;
  for (int b = 0; b < nbins; ++b)
    if (cnt[b] > 0 && sum[b] / cnt[b] > r.peak) r.peak = sum[b] / cnt[b], ipeak = b;
  const double half = 0.5 * (r.peak + rho0);
  for (int b = ipeak; b + 1 < nbins && cnt[b + 1] > 0; ++b) {
    const double a = sum[b] / cnt[b], c = sum[b + 1] / cnt[b + 1];
    if (a >= half && c < half) {  // linear interpolation between bin centres
      r.shock_radius = (b + 0.5 + (a - half) / (a - c)) * h;
      break;
    }
  }
  const problems::SedovSolution exact(p.real("hydro.gamma"), p.real("problem.energy"), rho0);
  r.exact_radius = exact.shock_radius(sim->time());
  std::vector<double> rs, mean, ex;
  for (int b = 0; b < nbins; ++b)
    if (cnt[b] > 0 && (b + 0.5) * h < 0.5) {
      rs.push_back((b + 0.5) * h);
      mean.push_back(sum[b] / cnt[b]);
      ex.push_back(exact.sample(rs.back(), sim->time()).rho);
    }
  testing::write_validation_csv(
      "sedov_" + std::to_string(n) + (integrator == "rk2" ? "" : "_" + integrator),
      "r,rho,rho_exact", {rs, mean, ex});
  std::printf(
      "Sedov (%s) octant %d^3: shock radius %.5f (self-similar %.5f, error %+.2f%%), peak "
      "density %.3f\n",
      integrator.c_str(), n, r.shock_radius, r.exact_radius,
      100 * (r.shock_radius / r.exact_radius - 1), r.peak);
  return r;
}

// Radius error below max_error at 48^3, falling with resolution; peak rising, in its band.
void check_sedov(const std::string& integrator, double max_error,
                 std::array<double, 3> expected_peak = {1.96, 2.73, 3.23}) {
  const SedovRun runs[] = {run_sedov(16, integrator), run_sedov(32, integrator),
                           run_sedov(48, integrator)};
  auto error = [](const SedovRun& r) { return std::fabs(r.shock_radius / r.exact_radius - 1); };
  // Band of +-8% around the measured peaks (the two MOL integrators differ by 1.4% at most).
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(runs[i].peak, expected_peak[i], 0.08 * expected_peak[i]);
  EXPECT_LT(error(runs[2]), max_error);
  EXPECT_LT(error(runs[1]), error(runs[0]));
  EXPECT_LT(error(runs[2]), error(runs[1]));
  EXPECT_GT(runs[1].peak, runs[0].peak);
  EXPECT_GT(runs[2].peak, runs[1].peak);
}

TEST(SedovRegression, ShockRadiusAndPeakDensity) {
  check_sedov("rk2", 0.03);
}

TEST(SedovRegression, Vl2ShockRadiusAndPeakDensity) {
  check_sedov("vl2", 0.03);  // measured +2.51% at 48^3
}

// The relaxing-TVD scheme (cfl 0.8, van Leer) is more diffusive: its relaxed fluxes upwind
// every wave with the freezing speed |v| + c_s, as the LLF solver does, and the sweeps are
// split. Measured radius errors +11.7% / +5.95% / +3.95% and peaks 1.797 / 2.338 / 2.790
// at 16 / 32 / 48 (the density L1 at 48^3: 6.1e-2, against 4.4e-2 for MOL with LLF):
// bounds 4.5% and the same +-8% band around its own peaks.
TEST(SedovRegression, RelaxingTvdShockRadiusAndPeakDensity) {
  check_sedov("relaxing_tvd", 0.045, {1.80, 2.34, 2.79});
}

// problem.period: two periods along x hold two blasts, each the blast of one period. The
// lattice run's cells at x and x + 1 agree, and both agree with the run of one period
// (all periodic), to round-off: the deposit and the flow are those of the single blast.
TEST(SedovRegression, LatticeOfBlastsRepeatsTheBlastOfOnePeriod) {
  auto run = [](int periods) {
    std::vector<std::string> ov = {"mesh.nx=[" + std::to_string(32 * periods) + ",32,32]",
                                   "mesh.xmax=[" + std::to_string(periods - 0.5) + ",0.5,0.5]",
                                   "problem.period=[1,0,0]", "run.t_end=0.01"};
    for (char a : {'x', 'y', 'z'})
      for (const char* side : {"lo", "hi"})
        ov.push_back(std::string("mesh.bc_") + a + side + "=periodic");
    return testing::run_problem("sedov/sedov.toml", ov);
  };
  const auto one = run(1), two = run(2);
  ASSERT_DOUBLE_EQ(one->time(), two->time());
  // Cells by integer position (32 per unit length; x from -0.5).
  auto cells = [](const evolve::Simulation& sim, int nx) {
    std::vector<std::array<double, 5>> u(std::size_t(nx) * 32 * 32);
    testing::for_each_cell(sim, [&](std::array<double, 3> x, double, const double* v) {
      const int i = int(std::floor((x[0] + 0.5) * 32)), j = int(std::floor((x[1] + 0.5) * 32)),
                k = int(std::floor((x[2] + 0.5) * 32));
      for (int q = 0; q < 5; ++q) u[(std::size_t(k) * 32 + j) * nx + i][q] = v[q];
    });
    return u;
  };
  const auto a = cells(*one, 32), b = cells(*two, 64);
  double worst = 0, peak = 0;
  for (int k = 0; k < 32; ++k)
    for (int j = 0; j < 32; ++j)
      for (int i = 0; i < 32; ++i) {
        const auto& s = a[(std::size_t(k) * 32 + j) * 32 + i];
        peak = std::max(peak, s[0]);
        for (int shift : {0, 32}) {
          const auto& t = b[(std::size_t(k) * 32 + j) * 64 + i + shift];
          for (int q = 0; q < 5; ++q)
            worst = std::max(worst, std::fabs(t[q] - s[q]) / (std::fabs(s[q]) + 1e-3));
        }
      }
  EXPECT_GT(peak, 1.5);  // the blast is there
  EXPECT_LT(worst, 1e-9);
}

}  // namespace
}  // namespace tessera
