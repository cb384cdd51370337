// Prolongation keeps every child state physical. Limited-linear interpolation of the
// conserved variables keeps each child's density and total energy positive, but not its
// pressure: where the kinetic energy dominates, a child's m^2 / (2 rho), from separately
// interpolated momentum and density, can exceed its interpolated energy. A new family (or
// a ghost block) built that way starts its step unphysical, and no flux correction can
// repair it (the shock of the cloud blast hitting the cloud floored thousands of finest
// cells a step that way). Such a coarse cell's children take its own value.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "run_problem.hpp"
#include "tessera/mesh/geometry.hpp"
#include "tessera/mesh/mesh.hpp"
#include "tessera/mesh/prolongation.hpp"
#include "tessera/physics/fields.hpp"
#include "tessera/physics/model.hpp"

namespace tessera {
namespace {

// Flow at Mach ~3000 along x with density and velocity varying differently: the pressure
// (1e-3) is a part in 10^7 of the energy.
void fill_fast_flow(mesh::Mesh& m, int level, double gamma) {
  for (const int g : m.groups(level))
    for (int c = 0; c < mesh::kFamilySize; ++c) {
      Real* u = m.current(g + c);
      for (int k = 0; k < 8; ++k)
        for (int j = 0; j < 8; ++j)
          for (int i = 0; i < 8; ++i) {
            const auto x = m.cell_center(g + c, i, j, k);
            const double rho = 1 + 0.5 * std::sin(2 * M_PI * x[0]) * std::cos(2 * M_PI * x[1]);
            const double v = 100 * (1 + 0.5 * std::cos(2 * M_PI * (x[0] + x[2])));
            const double p = 1e-3;
            const int cell = (k * 8 + j) * 8 + i;
            const double w[5] = {rho, rho * v, 0, 0, 0.5 * rho * v * v + p / (gamma - 1)};
            for (int var = 0; var < 5; ++var) u[var * mesh::kPatchCells + cell] = Real(w[var]);
            for (int var = 5; var < m.nvar(); ++var) u[var * mesh::kPatchCells + cell] = 0;
          }
    }
}

TEST(AmrProlongation, KineticallyDominatedHydroChildrenKeepAPositivePressure) {
  set_log_quiet(true);
  const Params p =
      load_run_params(std::string(TESSERA_SOURCE_DIR) + "/problems/sod/sod.toml",
                      {"mesh.nx=[32,32,32]", "mesh.xmax=[1,1,1]", "output.enabled=false"});
  const physics::Model model(p);
  const mesh::AdmissibleState admissible = model.fields().admissible();  // what runs check
  ASSERT_TRUE(admissible);
  const mesh::Geometry geo = mesh::geometry_from_params(p);
  const mesh::Mesh root(geo, model.fields());
  mesh::Hierarchy h(1);
  for (const int g : root.groups(0))
    for (int c = 0; c < mesh::kFamilySize; ++c) h[0].push_back(root.patch(g + c).coord());
  mesh::Mesh m(geo, model.fields(), h);
  fill_fast_flow(m, 0, p.real("hydro.gamma"));
  mesh::CoarseBox scratch;
  for (const int g : m.groups(1)) mesh::prolong_family(m, g, scratch);
  long long cells = 0, bad = 0;
  for (const int g : m.groups(1))
    for (int c = 0; c < mesh::kFamilySize; ++c)
      for (int cell = 0; cell < mesh::kPatchCells; ++cell, ++cells)
        bad += !admissible(m.current(g + c) + cell, mesh::kPatchCells);
  EXPECT_EQ(cells, 64LL * 64 * 64);
  EXPECT_EQ(bad, 0) << "prolonged children with a negative pressure";
  // The same coarse data prolonged without the check do have some (the test's premise).
  long long unchecked = 0;
  mesh::Mesh plain(geo, physics::hydro_fields(true, 0), h);
  fill_fast_flow(plain, 0, p.real("hydro.gamma"));
  for (const int g : plain.groups(1)) mesh::prolong_family(plain, g, scratch);
  for (const int g : plain.groups(1))
    for (int c = 0; c < mesh::kFamilySize; ++c)
      for (int cell = 0; cell < mesh::kPatchCells; ++cell)
        unchecked += !admissible(plain.current(g + c) + cell, mesh::kPatchCells);
  std::printf("fast flow: %lld of %lld prolonged cells unphysical without the check, %lld with\n",
              unchecked, cells, bad);
  EXPECT_GT(unchecked, 0);
}

}  // namespace
}  // namespace tessera
