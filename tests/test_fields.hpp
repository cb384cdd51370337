// Meshes for tests: field registries of `n` scalar fields f0, f1, ... with FieldInfo's
// defaults (two time levels, refluxed, restricted, limited linear prolongation), a small
// periodic box, and a unit cube of n^3 root cells with one boundary kind on every side.
#pragma once

#include <string>
#include <vector>

#include "tessera/mesh/fields.hpp"
#include "tessera/mesh/geometry.hpp"

namespace tessera::mesh::testing {

inline FieldRegistry plain_fields(int n) {
  std::vector<FieldInfo> fields(n);
  for (int v = 0; v < n; ++v) (fields[v].name = "f") += std::to_string(v);
  return FieldRegistry(std::move(fields));
}

// A periodic 48 x 32 x 32 root grid of cell width 1/32: 3 x 2 x 2 = 12 patch groups.
inline Geometry periodic_box() {
  Geometry g;
  g.root_cells = {48, 32, 32};
  g.xmin = {0, 0, 0};
  g.xmax = {1.5, 1, 1};
  g.dx0 = 1.0 / 32;
  for (auto& b : g.boundary) b = {Boundary::kPeriodic, Boundary::kPeriodic};
  return g;
}

// The unit cube, n^3 root cells, boundary `bc` on every side.
inline Geometry box_geometry(Boundary bc, int n = 32) {
  Geometry g;
  g.xmin = {0, 0, 0};
  g.xmax = {1, 1, 1};
  g.root_cells = {n, n, n};
  g.dx0 = 1.0 / n;
  for (auto& d : g.boundary) d = {bc, bc};
  return g;
}

}  // namespace tessera::mesh::testing
