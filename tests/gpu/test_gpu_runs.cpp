// Whole runs on the GPU against the CPU backend: an AMR run with subcycling and moving
// refinement (root 32^3, 3 levels) must give the same state to round-off (the kernels
// agree to ~1e-15 per step; differences grow slowly over the steps), with each integrator.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "tessera/core/log.hpp"
#include "tessera/core/schema.hpp"
#include "tessera/evolve/simulation.hpp"

namespace tessera {
namespace {

// The AMR runs compared: the hydro blob (root 32^3, 3 levels, 20 root steps) and the MHD
// blast (root 32^3 on a cube, 2 levels, 10 root steps; HLLD, GLM cleaning).
std::unique_ptr<evolve::Simulation> run(const std::string& backend, const std::string& integrator,
                                        bool mhd) {
  set_log_quiet(true);
  std::vector<std::string> ov = {"output.enabled=false", "run.backend=" + backend,
                                 "hydro.integrator=" + integrator};
  std::string file = "/problems/blob/blob.toml";
  if (mhd) {
    file = "/problems/mhd_blast/mhd_blast.toml";
    ov.insert(ov.end(), {"mesh.nx=[32,32,32]", "mesh.xmin=[-0.5,-0.5,-0.5]",
                         "mesh.xmax=[0.5,0.5,0.5]", "amr.max_level=1", "run.max_steps=10"});
  } else {
    ov.insert(ov.end(), {"amr.max_level=2", "problem.width=0.06", "run.max_steps=20"});
  }
  auto sim = std::make_unique<evolve::Simulation>(
      load_run_params(std::string(TESSERA_SOURCE_DIR) + file, ov));
  sim->set_verify_mesh(true);
  sim->run();
  return sim;
}

void expect_gpu_matches_cpu(const std::string& integrator, bool mhd = false) {
  const auto cpu = run("cpu", integrator, mhd);
  const auto gpu = run("cuda", integrator, mhd);
  const auto& a = cpu->mesh();
  const auto& b = gpu->mesh();
  ASSERT_EQ(a.hierarchy(), b.hierarchy());
  // Time steps come from the max speeds, which FMA contraction changes in the last bit.
  ASSERT_NEAR(cpu->time(), gpu->time(), 1e-14 * cpu->time());
  // Differences per variable, relative to the largest |value| of that variable: fields that
  // are zero up to round-off in places (psi, transverse momentum and field of the MHD
  // blast) would otherwise compare round-off with round-off.
  const int nvar = a.nvar();
  std::vector<double> scale(nvar, 0), diff(nvar, 0);
  // Compared in canonical order: pool slots depend on the history of regrids.
  const auto oa = a.canonical_order(), ob = b.canonical_order();
  for (std::size_t k = 0; k < oa.size(); ++k)
    for (std::size_t i = 0; i < a.patch_reals(); ++i) {
      const int v = static_cast<int>(i / mesh::kPatchCells);
      const double x = a.current(oa[k])[i], y = b.current(ob[k])[i];
      scale[v] = std::max(scale[v], std::fabs(x));
      diff[v] = std::max(diff[v], std::fabs(x - y));
    }
  double worst = 0;
  for (int v = 0; v < nvar; ++v) {
    const double rel = scale[v] > 0 ? diff[v] / scale[v] : diff[v];
    std::printf("AMR %s (%s): %s max |GPU - CPU| / max |CPU| = %.3e (max |CPU| %.3e)\n",
                mhd ? "MHD blast" : "blob", integrator.c_str(), a.fields()[v].name.c_str(), rel,
                scale[v]);
    worst = std::max(worst, rel);
  }
  EXPECT_LE(worst, 1e-10);
  const auto ta = cpu->conserved_totals(), tb = gpu->conserved_totals();
  ASSERT_EQ(ta.size(), tb.size());
  // Totals that vanish (momentum, B_z, psi) are compared on the scale of the mass.
  for (std::size_t v = 0; v < ta.size(); ++v)
    EXPECT_NEAR(tb[v], ta[v], 1e-12 * std::max(std::fabs(ta[v]), std::fabs(ta[0]))) << v;
}

TEST(GpuRuns, AmrBlobMatchesCpu) {
  expect_gpu_matches_cpu("rk2");
}

TEST(GpuRuns, Vl2AmrBlobMatchesCpu) {
  expect_gpu_matches_cpu("vl2");
}

TEST(GpuRuns, AmrMhdBlastMatchesCpu) {
  expect_gpu_matches_cpu("rk2", true);
}

TEST(GpuRuns, Vl2AmrMhdBlastMatchesCpu) {
  expect_gpu_matches_cpu("vl2", true);
}

}  // namespace
}  // namespace tessera
