// The computational domain: extent, root-level resolution and physical boundaries.
#pragma once

#include <array>
#include <string>

#include "tessera/core/params.hpp"

namespace tessera::mesh {

enum class Boundary { kPeriodic, kOutflow, kReflecting };

Boundary parse_boundary(const std::string& name);
const char* boundary_name(Boundary b);

struct Geometry {
  std::array<double, 3> xmin{};
  std::array<double, 3> xmax{};
  std::array<int, 3> root_cells{};  // cells per dimension on level 0, multiples of 16
  double dx0 = 0;                   // root cell width; cells are cubic
  std::array<std::array<Boundary, 2>, 3> boundary{};  // [dim][0 low, 1 high]

  bool periodic(int dim) const { return boundary[dim][0] == Boundary::kPeriodic; }
  double dx(int level) const { return dx0 / double(1 << level); }
  long long root_cell_count() const { return 1LL * root_cells[0] * root_cells[1] * root_cells[2]; }
};

// Reads [mesh]; throws tessera::Error(kInput) for non-cubic cells or one-sided periodicity.
Geometry geometry_from_params(const Params& params);

}  // namespace tessera::mesh
