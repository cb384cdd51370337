// The meshes of the regrid and forest benchmarks: a unit cube of n^3 root cells with
// outflow sides, and the same with its half x < 1/2 refined once.
#pragma once

#include "tessera/mesh/forest.hpp"

namespace tessera::perf {

inline mesh::Geometry unit_cube(int n) {
  mesh::Geometry geo;
  geo.xmin = {0, 0, 0};
  geo.xmax = {1, 1, 1};
  geo.root_cells = {n, n, n};
  geo.dx0 = 1.0 / n;
  for (auto& d : geo.boundary) d = {mesh::Boundary::kOutflow, mesh::Boundary::kOutflow};
  return geo;
}

// Level 1 over the root patches with x < np / 2 (np root patches per side).
inline mesh::Hierarchy half_refined(int np) {
  mesh::Hierarchy h(1);
  for (int z = 0; z < np; ++z)
    for (int y = 0; y < np; ++y)
      for (int x = 0; x < np / 2; ++x) h[0].push_back({x, y, z});
  return h;
}

}  // namespace tessera::perf
