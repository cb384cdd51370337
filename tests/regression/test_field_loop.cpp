// Advection of a weak field loop (problems/field_loop, Gardiner & Stone 2005 §5.1) for one
// crossing (t = 1, the loop back at its start): the magnetic energy kept and the div B made,
// on a uniform grid and with the refined level following the loop.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/physics_mhd.hpp"
#include "run_problem.hpp"
#include "tessera/evolve/diagnostics.hpp"

namespace tessera {
namespace {

using kernels::MhdGlm;

// Magnetic energy, integral of B^2/2 over the leaf cells.
double magnetic_energy(const evolve::Simulation& sim) {
  double e = 0;
  testing::for_each_cell(sim, [&](std::array<double, 3>, double h, const double* u) {
    const double b2 = u[MhdGlm::kBx] * u[MhdGlm::kBx] + u[MhdGlm::kBy] * u[MhdGlm::kBy] +
                      u[MhdGlm::kBz] * u[MhdGlm::kBz];
    e += 0.5 * b2 * h * h * h;
  });
  return e;
}

struct LoopRun {
  double energy0 = 0, energy1 = 0;  // magnetic energy at t = 0 and t = 1
  evolve::DivergenceStats div0, div1;
  int levels = 0, regrids = 0;
  long long families_added = 0, families_removed = 0;
  double loop_on_finest = 1;  // fraction of the magnetic energy on the finest level at the end
  long steps = 0;
  double seconds = 0;
};

LoopRun run_loop(std::vector<std::string> ov) {
  ov.push_back("run.log_interval=1000000");
  ov.push_back("output.enabled=false");
  ov.push_back(testing::backend_override());
  set_log_quiet(true);
  evolve::Simulation sim(load_run_params(
      std::string(TESSERA_SOURCE_DIR) + "/problems/field_loop/field_loop.toml", ov));
  sim.set_verify_mesh(true);
  const auto start = std::chrono::steady_clock::now();
  sim.initialize();
  LoopRun r;
  r.energy0 = magnetic_energy(sim);
  r.div0 = evolve::divergence_stats(sim.mesh(), MhdGlm::kBx);
  sim.run();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_DOUBLE_EQ(sim.time(), 1.0);
  r.energy1 = magnetic_energy(sim);
  r.div1 = evolve::divergence_stats(sim.mesh(), MhdGlm::kBx);
  r.levels = sim.mesh().num_levels();
  r.regrids = sim.regrid_count();
  r.families_added = sim.regrid_stats().families_added;
  r.families_removed = sim.regrid_stats().families_removed;
  r.steps = sim.step();
  if (r.levels > 1) {
    double fine = 0;
    const auto& m = sim.mesh();
    const int finest = m.num_levels() - 1;
    for (int p = 0; p < m.num_patches(); ++p) {
      if (!m.patch(p).is_leaf() || m.patch(p).level != finest) continue;
      const double dv = std::pow(m.dx(finest), 3);
      const Real* u = m.current(p);
      for (int c = 0; c < mesh::kPatchCells; ++c) {
        double b2 = 0;
        for (int d = 0; d < 3; ++d)
          b2 += u[(MhdGlm::kBx + d) * mesh::kPatchCells + c] *
                u[(MhdGlm::kBx + d) * mesh::kPatchCells + c];
        fine += 0.5 * b2 * dv;
      }
    }
    r.loop_on_finest = fine / r.energy1;
  }
  return r;
}

void report(const std::string& label, const LoopRun& r) {
  std::printf(
      "%s: %ld steps, %.1f s: magnetic energy %.5e -> %.5e (kept %.4f); div B dx/|B| max "
      "%.3e -> %.3e, mean %.3e -> %.3e\n",
      label.c_str(), r.steps, r.seconds, r.energy0, r.energy1, r.energy1 / r.energy0,
      r.div0.max_relative, r.div1.max_relative, r.div0.mean_relative, r.div1.mean_relative);
}

// The initial field's own divergence diagnostic is 0.354 at most, 9.2e-3 on average: the
// diagnostic takes central differences of the cell-centred field, which the corner-sampled
// potential makes divergence-free on the faces, not there; at the loop's centre and edge
// the field turns or jumps within a cell. The bounds on the divergence are on top of that.

// 64 x 32 cells (32 per unit length: the loop's radius is 9.6 cells), uniform, HLL.
// Measured after one crossing: magnetic energy kept 0.7219 (rk2) and 0.7370 (vl2) (bound
// 0.65: HLL diffuses the loop's edge and centre); div B dx/|B| max 0.338 and 0.278 (bound
// 0.45), mean 1.94e-2 and 1.44e-2 (bounds 2.9e-2 and 2.2e-2). Without GLM cleaning (psi
// and its fluxes off) the max measured 0.79 and 0.69, the mean 6.4e-2 and 7.6e-2, and the
// magnetic energy grew (kept 1.010 and 1.018).
TEST(FieldLoop, UniformGridKeepsMagneticEnergyAndSmallDivergence) {
  struct Case {
    const char* integrator;
    double max_mean_div;
  };
  for (const Case c : {Case{"rk2", 2.9e-2}, Case{"vl2", 2.2e-2}}) {
    const std::string integrator = c.integrator;
    const LoopRun r =
        run_loop({"mesh.nx=[64,32,16]", "mesh.xmin=[-1,-0.5,-0.25]", "mesh.xmax=[1,0.5,0.25]",
                  "hydro.integrator=" + integrator, "hydro.riemann=hll"});
    report("field loop 64x32 (" + integrator + ")", r);
    EXPECT_GT(r.energy1 / r.energy0, 0.65) << integrator;
    EXPECT_LT(r.energy1 / r.energy0, 1.0) << integrator;
    EXPECT_LT(r.div1.max_relative, 0.45) << integrator;
    EXPECT_LT(r.div1.mean_relative, c.max_mean_div) << integrator;
  }
}

// Root 32 x 16 with one level where the loop is (problem.refine_margin), vl2: the loop is
// resolved as on the uniform 64 x 32 grid, and the refined region follows it (16 families
// added and 16 removed in 6 regrids that changed the mesh). Measured: energy kept 0.7370,
// as on the uniform grid with vl2 (the loop never leaves the fine level: 0.99999 of the
// energy is there at the end); div B dx/|B| max 0.261, mean 2.56e-2 (bounds 0.45, 3.8e-2:
// the coarse-fine faces cross the loop's outskirts, where the prolonged field adds some).
// With the refined region frozen where the loop starts (refine() ignoring t; rk2): no
// family added, energy kept 0.44.
TEST(FieldLoop, RefinedRegionFollowsTheLoop) {
  const LoopRun r =
      run_loop({"mesh.nx=[32,16,16]", "mesh.xmin=[-1,-0.5,-0.5]", "mesh.xmax=[1,0.5,0.5]",
                "amr.max_level=1", "hydro.integrator=vl2", "hydro.riemann=hll"});
  report("field loop 32x16 + 1 level (vl2)", r);
  std::printf("  %d regrids, families added %lld, removed %lld; %.6f of the energy on level 1\n",
              r.regrids, r.families_added, r.families_removed, r.loop_on_finest);
  EXPECT_EQ(r.levels, 2);
  EXPECT_GE(r.families_added, 8);
  EXPECT_GE(r.families_removed, 8);
  EXPECT_GT(r.loop_on_finest, 0.999);
  EXPECT_GT(r.energy1 / r.energy0, 0.65);
  EXPECT_LT(r.div1.max_relative, 0.45);
  EXPECT_LT(r.div1.mean_relative, 3.8e-2);
}

}  // namespace
}  // namespace tessera
