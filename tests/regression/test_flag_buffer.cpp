// The flag buffer (amr.flag_buffer): a flagged cell marks its own patch and the
// neighbours within the buffer of it, and nothing else. A thin spherical shell around a
// corner of the domain, as a blast wave is, crosses patches near two or three of their
// faces at once; the region behind it must stay unrefined.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "run_problem.hpp"
#include "tessera/evolve/refinement.hpp"
#include "tessera/evolve/simulation.hpp"

namespace tessera {
namespace {

// Root 32^3 on [0, 0.5]^3 (4 x 4 x 4 patches of 8^3 cells, h = 1/64), density 2 in the
// shell r0 <= r < r1 around the origin and 1 elsewhere; the refined root patches that
// plan_hierarchy returns for amr.density_refine = 1.5 and the given buffer.
std::vector<mesh::PatchCoord> refined_by_shell(double r0, double r1, int buffer) {
  set_log_quiet(true);
  const Params p = load_run_params(
      std::string(TESSERA_SOURCE_DIR) + "/problems/uniform/uniform.toml",
      {"mesh.nx=[32,32,32]", "mesh.xmin=[0,0,0]", "mesh.xmax=[0.5,0.5,0.5]", "amr.max_level=1",
       "amr.lohner_refine=0", "amr.lohner_derefine=0", "amr.density_refine=1.5",
       "amr.flag_buffer=" + std::to_string(buffer), "output.enabled=false"});
  evolve::Simulation sim(p);
  sim.initialize();
  mesh::Mesh& m = const_cast<mesh::Mesh&>(sim.mesh());  // a state made by hand
  for (int q = 0; q < m.num_patches(); ++q)
    for (int k = 0; k < 8; ++k)
      for (int j = 0; j < 8; ++j)
        for (int i = 0; i < 8; ++i) {
          const auto x = m.cell_center(q, i, j, k);
          const double r = std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
          m.current(q)[(k * 8 + j) * 8 + i] = r >= r0 && r < r1 ? 2 : 1;  // density
        }
  const auto rp = evolve::RefinementParams::from_params(p);
  const mesh::Hierarchy h = evolve::plan_hierarchy(m, rp, sim.model(), sim.problem(), 0.0);
  return h.empty() ? std::vector<mesh::PatchCoord>{} : h[0];
}

bool has(const std::vector<mesh::PatchCoord>& v, mesh::PatchCoord c) {
  return std::find(v.begin(), v.end(), c) != v.end();
}

TEST(AmrFlagBuffer, AShellLeavesThePatchesBehindItUnrefined) {
  // Shell 0.30 <= r < 0.32. Patch (1,1,1) (cells 8..15 on every axis, r >= 0.2165) holds
  // shell cells at x = 0.133 (its lowest x index), at y = 0.133 and at z = 0.133, but
  // none within one cell of its corner towards the origin (r = 0.23 there): patch (0,0,0)
  // (r < 0.2165) is not refined. Marking from the flagged cells' bounding box, grown by the
  // buffer, refined it.
  for (const int buffer : {1, 2}) {
    SCOPED_TRACE("flag_buffer = " + std::to_string(buffer));
    const auto refined = refined_by_shell(0.30, 0.32, buffer);
    EXPECT_TRUE(has(refined, {1, 1, 1}));
    EXPECT_TRUE(has(refined, {2, 0, 0}));
    EXPECT_FALSE(has(refined, {0, 0, 0})) << "the region behind the shell was refined";
  }
  // The buffer's reach: patch (0,0,0) holds cells up to r = 0.203; the cells within one
  // cell of it (coordinates up to 0.133) reach r = 0.230, those within two cells (up to
  // 0.148) r = 0.257. A shell at 0.231 <= r < 0.25 refines it with a buffer of 2 cells,
  // not with 1 (the bounding box refined it with both).
  EXPECT_FALSE(has(refined_by_shell(0.231, 0.25, 1), {0, 0, 0}));
  EXPECT_TRUE(has(refined_by_shell(0.231, 0.25, 2), {0, 0, 0}));
}

}  // namespace
}  // namespace tessera
