// The cloud-blast problem (problems/cloud_blast; Wang, Abel & Kaehler 2009 §6.3) in a
// variant small enough for the CPU: a 16^3 root grid with three levels (all following
// Lohner's estimator), the cloud 0.03 in
// radius (the seed's is 0.01 with six levels on a 64^3 root), to t = 0.01, when the blast
// has swept over the cloud. Checked: mass and the cloud's gas (scalar r0) to round-off
// through every regrid, the cloud resolved on the finest level, and where the cloud's gas
// went (its centre of mass pushed away from the blast, its peak density compressed),
// against the measured values.
#include <gtest/gtest.h>

#include <cmath>

#include "run_problem.hpp"

namespace tessera {
namespace {

TEST(CloudBlast, SmallVariantConservesAndFollowsTheCloud) {
  auto sim = testing::run_problem(
      "cloud_blast/cloud_blast.toml",
      {"mesh.nx=[16,16,16]", "amr.max_level=3", "amr.lohner_refine=0.8", "amr.lohner_derefine=0.2",
       "amr.density_refine=0", "amr.density_derefine=0", "problem.cloud_radius=0.03",
       "run.t_end=0.01"});
  const auto& m = sim->mesh();
  const auto t0 = sim->initial_totals(), t1 = sim->conserved_totals();
  // Totals: mass, momentum, energy, then the scalars (cloud gas, ejecta).
  ASSERT_GE(t1.size(), 7u);
  const double mass_change = std::fabs(t1[0] - t0[0]) / t0[0];
  const double cloud_change = std::fabs(t1[5] - t0[5]) / t0[5];
  double cloud_mass = 0, cx = 0, peak = 0, finest_cloud = 0;
  testing::for_each_cell(*sim, [&](std::array<double, 3> x, double h, const double* u) {
    cloud_mass += u[5] * h * h * h;
    cx += u[5] * x[0] * h * h * h;
    if (u[5] > 0.5 * u[0]) peak = std::max(peak, u[0]);  // cells mostly of cloud gas
    if (h < 1.5 * m.dx(3)) finest_cloud += u[5] * h * h * h;
  });
  cx /= cloud_mass;
  std::printf(
      "cloud blast (16^3 + 3 levels, t = %.4f, %d steps): mass change %.3e, cloud gas change "
      "%.3e; cloud centre of mass x = %.5f (0.15 at t = 0), peak cloud density %.3f (10 at "
      "t = 0), cloud gas on the finest level %.4f; levels %d\n",
      sim->time(), int(sim->step()), mass_change, cloud_change, cx, peak, finest_cloud / cloud_mass,
      m.num_levels());
  EXPECT_LT(mass_change, 1e-12);
  EXPECT_LT(cloud_change, 1e-12);
  EXPECT_EQ(m.num_levels(), 4);
  EXPECT_GT(finest_cloud / cloud_mass, 0.9);
  // Measured: the centre of mass moved by +2.78e-3 (to 0.15278), the peak density 17.68.
  // Bounds: the displacement within 30%, the peak within 15%.
  EXPECT_NEAR(cx - 0.15, 2.78e-3, 0.3 * 2.78e-3);
  EXPECT_NEAR(peak, 17.68, 0.15 * 17.68);
}

}  // namespace
}  // namespace tessera
