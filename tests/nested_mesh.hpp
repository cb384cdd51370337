// A properly nested adaptive mesh for tests: spheres refined level by level (a patch is
// refined when its centre lies in the level's sphere and all its 26 neighbours exist, so
// nesting holds by construction), with data of a smooth function in both time levels.
#pragma once

#include <array>
#include <cmath>
#include <memory>
#include <vector>

#include "tessera/mesh/mesh.hpp"

namespace tessera::mesh::testing {

struct NestedSpec {
  std::array<int, 3> cells = {64, 48, 32};
  Boundary bc = Boundary::kOutflow;  // every side
  // Per dimension (low, high), replacing `bc` when not empty.
  std::vector<std::array<Boundary, 2>> sides;
  std::array<double, 3> centre = {0.3, 0.45, 0.55};
  std::vector<double> radii = {0.3, 0.18};  // one per refined level
};

inline Mesh nested_mesh(const NestedSpec& s, FieldRegistry fields) {
  Geometry g;
  g.root_cells = s.cells;
  g.xmin = {0, 0, 0};
  g.dx0 = 1.0 / s.cells[1];
  for (int d = 0; d < 3; ++d) g.xmax[d] = s.cells[d] * g.dx0;
  for (int d = 0; d < 3; ++d) g.boundary[d] = s.sides.empty() ? std::array{s.bc, s.bc} : s.sides[d];
  Hierarchy h;
  auto mesh = std::make_unique<Mesh>(g, fields, h);
  for (std::size_t l = 0; l < s.radii.size(); ++l) {
    const int level = static_cast<int>(l);
    std::vector<PatchCoord> parents;
    for (const int first : mesh->groups(level))
      for (int c = 0; c < kFamilySize; ++c) {
        const int p = first + c;
        const auto x = mesh->cell_center(p, 4, 4, 4);
        double r2 = 0;
        for (int d = 0; d < 3; ++d) r2 += (x[d] - s.centre[d]) * (x[d] - s.centre[d]);
        if (r2 > s.radii[l] * s.radii[l]) continue;
        bool nested = true;
        for (int n = 0; n < 27 && nested; ++n) {
          PatchCoord pc = mesh->patch(p).coord();
          pc[0] += n % 3 - 1, pc[1] += (n / 3) % 3 - 1, pc[2] += n / 9 - 1;
          if (mesh->wrap(level, pc) && mesh->find_patch(level, pc) == kNoPatch) nested = false;
        }
        if (nested) parents.push_back(mesh->patch(p).coord());
      }
    if (parents.empty()) break;
    h.push_back(parents);
    mesh = std::make_unique<Mesh>(g, fields, h);
  }
  Mesh m = std::move(*mesh);
  // Data: a smooth function per field and time level, different in every cell.
  for (int slot = 0; slot < 2; ++slot)
    for (int p = 0; p < m.num_patches(); ++p) {
      Real* u = m.data(slot, p);
      for (int v = 0; v < m.nvar(); ++v)
        for (int c = 0; c < kPatchCells; ++c) {
          const auto x = m.cell_center(p, c % 8, (c / 8) % 8, c / 64);
          u[v * kPatchCells + c] =
              Real(2 + v + slot + std::sin(3 * x[0] + v) * std::cos(2 * x[1]) + 0.3 * x[2]);
        }
    }
  return m;
}

}  // namespace tessera::mesh::testing
