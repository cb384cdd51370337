#include "tessera/mesh/geometry.hpp"

#include <cmath>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"

namespace tessera::mesh {

Boundary parse_boundary(const std::string& name) {
  if (name == "periodic") return Boundary::kPeriodic;
  if (name == "outflow") return Boundary::kOutflow;
  if (name == "reflecting") return Boundary::kReflecting;
  if (name == "problem") return Boundary::kProblem;
  throw Error(ErrorKind::kInput, "unknown boundary condition '" + name + "'");
}

const char* boundary_name(Boundary b) {
  switch (b) {
    case Boundary::kPeriodic:
      return "periodic";
    case Boundary::kOutflow:
      return "outflow";
    case Boundary::kReflecting:
      return "reflecting";
    case Boundary::kProblem:
      return "problem";
  }
  return "?";
}

Geometry geometry_from_params(const Params& params) {
  Geometry g;
  const auto nx = params.int3("mesh.nx");
  g.xmin = params.real3("mesh.xmin");
  g.xmax = params.real3("mesh.xmax");
  static const char* kAxis = "xyz";
  // A patch's position is kept in 20 bits per axis (the octree's lookup keys), so the finest
  // level may have at most 2^20 patches, 2^23 cells, per axis: checked before narrowing.
  constexpr double kMaxCells = 8388608.0;  // 2^23
  const double levels = std::ldexp(1.0, static_cast<int>(params.integer("amr.max_level")));
  for (int d = 0; d < 3; ++d) {
    if (double(nx[d]) * levels > kMaxCells)
      throw Error(ErrorKind::kInput,
                  strprintf("mesh.nx = %lld along %c with amr.max_level = %lld: the finest level "
                            "would have %.6g cells along %c, more than the 8388608 (2^23) a "
                            "mesh can address; use fewer root cells or fewer levels",
                            static_cast<long long>(nx[d]), kAxis[d],
                            static_cast<long long>(params.integer("amr.max_level")),
                            double(nx[d]) * levels, kAxis[d]));
    g.root_cells[d] = static_cast<int>(nx[d]);
    if (!(g.xmax[d] > g.xmin[d]))
      throw Error(ErrorKind::kInput,
                  std::string("mesh.xmax must exceed mesh.xmin along ") + kAxis[d]);
    const std::string lo = std::string("mesh.bc_") + kAxis[d] + "lo";
    const std::string hi = std::string("mesh.bc_") + kAxis[d] + "hi";
    g.boundary[d] = {parse_boundary(params.string(lo)), parse_boundary(params.string(hi))};
    if ((g.boundary[d][0] == Boundary::kPeriodic) != (g.boundary[d][1] == Boundary::kPeriodic))
      throw Error(ErrorKind::kInput, lo + " and " + hi +
                                         ": a periodic boundary needs its opposite face periodic "
                                         "too (got " +
                                         params.string(lo) + " and " + params.string(hi) + ")");
  }
  g.dx0 = (g.xmax[0] - g.xmin[0]) / g.root_cells[0];
  for (int d = 1; d < 3; ++d) {
    const double dxd = (g.xmax[d] - g.xmin[d]) / g.root_cells[d];
    if (std::fabs(dxd - g.dx0) > 1e-10 * g.dx0)
      throw Error(ErrorKind::kInput,
                  std::string("mesh: cells must be cubic, but (xmax-xmin)/nx is ") +
                      std::to_string(g.dx0) + " along x and " + std::to_string(dxd) + " along " +
                      kAxis[d] + "; adjust mesh.nx, mesh.xmin or mesh.xmax");
  }
  return g;
}

}  // namespace tessera::mesh
