// Positions of the double Mach reflection's shocks at the end of a run
// (problems/double_mach), measured on the finest level's resolution: the leaf cells'
// density, averaged over the slab's thickness, painted into a 2D raster (a coarse leaf
// fills the raster cells it covers), then each position is where the density crosses the
// midpoint between the states on either side of the shock, linearly interpolated.
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "run_problem.hpp"

namespace tessera::testing {

struct DoubleMachFeatures {
  // The incident shock on the row of cells whose centre is nearest y = 0.9, incident_y
  // (exactly at x = 1/6 + (y + 20 t) / sqrt(3) while it has not met the reflected
  // structure; the problem's moving upper boundary sets it).
  double incident_x = 0, incident_y = 0;
  double incident_exact(double t) const {
    return 1.0 / 6.0 + (incident_y + 20 * t) / std::sqrt(3.0);
  }
  // The Mach stem's foot: the shock on the wall's row of cells.
  double stem_x = 0;
  // The reflected shock's height on x = 1, 1.5 and 2 (the post-shock state 8 above it).
  double reflected_y[3] = {0, 0, 0};
  static constexpr double kColumns[3] = {1.0, 1.5, 2.0};
  // The raster: density of cell (i, j) at centre (x[q], y[q]), q = i + nx j.
  std::vector<double> x, y, rho;
  // Writes the raster to $TESSERA_VALIDATION_DIR/<name>.csv (x,y,rho) when that is set.
  void write_csv(const std::string& name) const {
    write_validation_csv(name, "x,y,rho", {x, y, rho});
  }
};

inline DoubleMachFeatures measure_double_mach(const evolve::Simulation& sim) {
  const auto& m = sim.mesh();
  const auto& g = m.geometry();
  const double h = m.dx(m.num_levels() - 1);
  const int nx = static_cast<int>(std::lround((g.xmax[0] - g.xmin[0]) / h));
  const int ny = static_cast<int>(std::lround((g.xmax[1] - g.xmin[1]) / h));
  std::vector<double> sum(std::size_t(nx) * ny, 0.0), weight(sum.size(), 0.0);
  for_each_cell(sim, [&](std::array<double, 3> c, double dx, const double* u) {
    const int s = static_cast<int>(std::lround(dx / h));
    const int i0 = static_cast<int>(std::lround((c[0] - 0.5 * dx - g.xmin[0]) / h));
    const int j0 = static_cast<int>(std::lround((c[1] - 0.5 * dx - g.xmin[1]) / h));
    for (int j = j0; j < j0 + s; ++j)
      for (int i = i0; i < i0 + s; ++i) {
        sum[std::size_t(j) * nx + i] += u[0] * dx;  // weight: the cell's z extent
        weight[std::size_t(j) * nx + i] += dx;
      }
  });
  const auto rho = [&](int i, int j) {
    return sum[std::size_t(j) * nx + i] / weight[std::size_t(j) * nx + i];
  };
  const auto x_of = [&](int i) { return g.xmin[0] + (i + 0.5) * h; };
  const auto y_of = [&](int j) { return g.xmin[1] + (j + 0.5) * h; };
  // Along row j from the right: the first crossing of `level` (pre-shock gas ahead).
  const auto row_crossing = [&](int j, double level) {
    for (int i = nx - 2; i >= 0; --i)
      if (rho(i, j) >= level)
        return x_of(i) + (rho(i, j) - level) / (rho(i, j) - rho(i + 1, j)) * h;
    throw std::runtime_error("no shock on row " + std::to_string(j));
  };
  // Along column i from the top: the first crossing of `level`.
  const auto column_crossing = [&](int i, double level) {
    for (int j = ny - 2; j >= 0; --j)
      if (rho(i, j) >= level)
        return y_of(j) + (rho(i, j) - level) / (rho(i, j) - rho(i, j + 1)) * h;
    throw std::runtime_error("no shock on column " + std::to_string(i));
  };
  constexpr double kIncident = 0.5 * (1.4 + 8.0);  // pre- and post-shock densities
  // Below the reflected shock the density is about 15 (13-16 at every resolution).
  constexpr double kReflected = 0.5 * (8.0 + 15.0);
  DoubleMachFeatures f;
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      f.x.push_back(x_of(i));
      f.y.push_back(y_of(j));
      f.rho.push_back(rho(i, j));
    }
  const int row = static_cast<int>(std::lround((0.9 - g.xmin[1]) / h - 0.5));
  f.incident_y = y_of(row);
  f.incident_x = row_crossing(row, kIncident);
  f.stem_x = row_crossing(0, kIncident);
  for (int c = 0; c < 3; ++c)
    f.reflected_y[c] = column_crossing(
        static_cast<int>((DoubleMachFeatures::kColumns[c] - g.xmin[0]) / h), kReflected);
  return f;
}

}  // namespace tessera::testing
