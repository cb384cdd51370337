// How far a flag of first-order flux correction's correcting pass reaches into a patch
// group (kernels::flag_reach, group_layout.hpp): the pipeline solves again only the groups
// with a flagged cell that near (exec/fofc.cpp), and keeps the others' results, which is
// exact only if a flag beyond the reach changes neither the group's interior nor the
// fluxes on its faces. Checked here on one group's solve for every integrator and
// reconstruction: planes of flags beyond the reach, on each side (their edges and corners
// included), give the same bits as no flag; a plane at the reach changes the interior (the
// bound is tight: a reach one shorter would leave that group's update stale).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/mol_cpu.hpp"
#include "tessera/exec/group_solver.hpp"
#include "tests/unit/hydro_structs.hpp"

namespace tessera::kernels::hydro_test {
namespace {

constexpr Real kGamma = Real(1.4);
constexpr EosParams kEos{kGamma, Real(1e-10), Real(1e-12)};

struct Solved {
  std::vector<Real> out, flux;
};

// Bit for bit (a value comparison would take -0 for +0).
bool same_bits(const std::vector<Real>& a, const std::vector<Real>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Real)) == 0;
}

class FofcReach : public ::testing::TestWithParam<Scheme> {
 protected:
  // A rough state (noise of 30%: limiters act everywhere, so that every cell of the
  // stencils counts), the flags of `flagged` (box coordinates) as the box's last variable.
  Solved solve(const std::vector<std::array<int, 3>>& flagged) const {
    const Scheme s = GetParam();
    const int g = ghost_width(s), n = box_size(g), n3 = box_cells(g), nvar = kNumHydroVars;
    const exec::GroupShape shape{g, nvar + 1, nvar, nvar};
    std::vector<Real> in(shape.in_reals(), Real(0));
    std::mt19937 random(7);
    std::uniform_real_distribution<double> noise(-0.3, 0.3);
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
          const double x = 0.21 * i, y = 0.17 * j, z = 0.13 * k;
          const Prim w{
              Real(1.5 + 0.4 * std::sin(x + y) + noise(random)),
              {Real(0.3 * std::cos(y + z) + noise(random)),
               Real(-0.2 * std::sin(z) + noise(random)), Real(0.1 * std::cos(x) + noise(random))},
              Real(1.2 + 0.3 * std::cos(x - z) + noise(random))};
          store_cons(in.data(), n3, (k * n + j) * n + i, prim_to_cons(w, kGamma));
        }
    for (const auto& c : flagged) in[std::size_t(nvar) * n3 + (c[2] * n + c[1]) * n + c[0]] = 1;
    Solved r{std::vector<Real>(shape.out_reals()), std::vector<Real>(shape.flux_reals())};
    std::vector<Real> scratch(mol_scratch_reals(nvar));
    GroupResult result{};
    MolParams params{{kEos, {}, {}}, Real(0.2)};
    params.floor_first_stage = false;  // as the correcting solver runs (MolParams)
    mol_group_cpu(s, params, in.data(), r.out.data(), r.flux.data(), &result,
                  mol_scratch_view(scratch.data(), nvar), nvar + 1);
    return r;
  }
};

std::string name(const Scheme& s) {
  static const char* kRecon[] = {"Pcm",     "PlmMinmod", "PlmMc",  "PlmVanLeer",
                                 "PlmMcEp", "Ppm",       "PpmChar"};
  return std::string(s.integrator == Integrator::kVl2 ? "Vl2" : "Rk2") + kRecon[int(s.recon)];
}

std::vector<Scheme> schemes() {
  std::vector<Scheme> v;
  for (const auto it : {Integrator::kRk2, Integrator::kVl2})
    for (const auto r : {Reconstruction::kPcm, Reconstruction::kPlmMc, Reconstruction::kPlmMcEp,
                         Reconstruction::kPpm, Reconstruction::kPpmChar})
      v.push_back({r, RiemannSolver::kHllc, it});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Schemes, FofcReach, ::testing::ValuesIn(schemes()),
                         [](const auto& info) { return name(info.param); });

// A whole plane of flags at distance d outside the interior, normal to `axis`, on the low
// (side 0) or high side: many pencils, so that the limiters' branches that read the
// stencil's far cells are met somewhere.
std::vector<std::array<int, 3>> plane(int g, int axis, int side, int d) {
  const int n = box_size(g), at = side == 0 ? g - d : g + kGroupSize - 1 + d;
  std::vector<std::array<int, 3>> cells;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      std::array<int, 3> c{};
      c[axis] = at;
      c[(axis + 1) % 3] = a;
      c[(axis + 2) % 3] = b;
      cells.push_back(c);
    }
  return cells;
}

TEST_P(FofcReach, FlagsBeyondTheReachChangeNothingAndAtTheReachTheInterior) {
  const Scheme s = GetParam();
  const int g = ghost_width(s), reach = flag_reach(s);
  ASSERT_GE(reach, 1);
  ASSERT_LE(reach, g) << "the box must hold every flag that reaches the group";
  const Solved none = solve({});
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side) {
      // Every cell at least reach + 1 outside on this side (up to the box's edge).
      std::vector<std::array<int, 3>> beyond;
      for (int d = reach + 1; d <= g; ++d) {
        const auto p = plane(g, axis, side, d);
        beyond.insert(beyond.end(), p.begin(), p.end());
      }
      if (!beyond.empty()) {
        const Solved r = solve(beyond);
        EXPECT_TRUE(same_bits(r.out, none.out))
            << "flags beyond the reach " << reach << " on side " << side << " of axis " << axis
            << " changed the interior";
        EXPECT_TRUE(same_bits(r.flux, none.flux))
            << "flags beyond the reach " << reach << " on side " << side << " of axis " << axis
            << " changed a flux";
      }
      const Solved at = solve(plane(g, axis, side, reach));
      EXPECT_FALSE(same_bits(at.out, none.out))
          << "flags at the reach " << reach << " on side " << side << " of axis " << axis
          << " changed nothing: the reach is longer than it needs to be";
    }
}

}  // namespace
}  // namespace tessera::kernels::hydro_test
