// Whole runs on the GPU against the CPU backend: an AMR run with subcycling and moving
// refinement (root 32^3, 3 levels) must give the same state to round-off (the kernels
// agree to ~1e-15 per step; differences grow slowly over the steps), with each integrator.
#include <gtest/gtest.h>

#include <cmath>

#include "tessera/core/log.hpp"
#include "tessera/core/schema.hpp"
#include "tessera/evolve/simulation.hpp"

namespace tessera {
namespace {

std::unique_ptr<evolve::Simulation> run(const std::string& backend, const std::string& integrator) {
  set_log_quiet(true);
  auto sim = std::make_unique<evolve::Simulation>(load_run_params(
      std::string(TESSERA_SOURCE_DIR) + "/problems/blob/blob.toml",
      {"amr.max_level=2", "problem.width=0.06", "run.max_steps=20", "output.enabled=false",
       "run.backend=" + backend, "hydro.integrator=" + integrator}));
  sim->set_verify_mesh(true);
  sim->run();
  return sim;
}

void expect_gpu_matches_cpu(const std::string& integrator) {
  const auto cpu = run("cpu", integrator);
  const auto gpu = run("cuda", integrator);
  const auto& a = cpu->mesh();
  const auto& b = gpu->mesh();
  ASSERT_EQ(a.hierarchy(), b.hierarchy());
  // Time steps come from the max speeds, which FMA contraction changes in the last bit.
  ASSERT_NEAR(cpu->time(), gpu->time(), 1e-14 * cpu->time());
  double worst = 0;
  // Compared in canonical order: pool slots depend on the history of regrids.
  const auto oa = a.canonical_order(), ob = b.canonical_order();
  for (std::size_t k = 0; k < oa.size(); ++k)
    for (std::size_t i = 0; i < a.patch_reals(); ++i) {
      const double x = a.current(oa[k])[i], y = b.current(ob[k])[i];
      worst = std::max(worst, std::fabs(x - y) / std::max(std::fabs(x), 1e-12));
    }
  std::printf("AMR blob (%s), 20 root steps: max relative difference GPU vs CPU %.3e\n",
              integrator.c_str(), worst);
  EXPECT_LE(worst, 1e-10);
  const auto ta = cpu->conserved_totals(), tb = gpu->conserved_totals();
  for (int v = 0; v < 5; ++v) EXPECT_NEAR(tb[v], ta[v], 1e-12 * std::fabs(ta[v]));
}

TEST(GpuRuns, AmrBlobMatchesCpu) {
  expect_gpu_matches_cpu("rk2");
}

TEST(GpuRuns, Vl2AmrBlobMatchesCpu) {
  expect_gpu_matches_cpu("vl2");
}

}  // namespace
}  // namespace tessera
