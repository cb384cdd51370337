// The computational domain: extent, root-level resolution and physical boundaries.
#pragma once

#include <array>
#include <functional>
#include <string>

#include "tessera/core/params.hpp"
#include "tessera/core/real.hpp"

namespace tessera::mesh {

// kProblem: the run's problem sets the ghost cells (ProblemBoundary below).
enum class Boundary { kPeriodic, kOutflow, kReflecting, kProblem };

Boundary parse_boundary(const std::string& name);
const char* boundary_name(Boundary b);

struct Geometry {
  std::array<double, 3> xmin{};
  std::array<double, 3> xmax{};
  std::array<int, 3> root_cells{};  // cells per dimension on level 0, multiples of 16
  double dx0 = 0;                   // root cell width; cells are cubic
  std::array<std::array<Boundary, 2>, 3> boundary{};  // [dim][0 low, 1 high]

  bool periodic(int dim) const { return boundary[dim][0] == Boundary::kPeriodic; }
  // Whether a side has Boundary::kProblem.
  bool problem_boundaries() const {
    for (const auto& b : boundary)
      if (b[0] == Boundary::kProblem || b[1] == Boundary::kProblem) return true;
    return false;
  }
  double dx(int level) const { return dx0 / double(1 << level); }
  long long root_cell_count() const { return 1LL * root_cells[0] * root_cells[1] * root_cells[2]; }
};

// How a ghost cell beyond a problem-defined side is filled: with the state the problem
// wrote, or with one of the standard conditions (a wall over part of a face, an inflow
// over the rest).
enum class GhostFill { kState, kOutflow, kReflecting };

// The problem's boundary conditions on the sides with Boundary::kProblem (Problem::
// boundary_state behind it). `state(lo, hi, t, dim, side, u)` is asked for the ghost cell
// [lo, hi) beyond side `side` (0 lower, 1 upper) of dimension `dim` at time t; for
// GhostFill::kState it has written the first `nvar` fields (the equations' conserved
// variables) to u, and the fields after them copy the nearest interior cell. Called
// concurrently from the threads that prepare patch groups.
struct ProblemBoundary {
  int nvar = 0;
  std::function<GhostFill(const std::array<double, 3>& lo, const std::array<double, 3>& hi,
                          double t, int dim, int side, Real* u)>
      state;
  explicit operator bool() const { return static_cast<bool>(state); }
};

// Reads [mesh]; throws tessera::Error(kInput) for non-cubic cells or one-sided periodicity.
Geometry geometry_from_params(const Params& params);

}  // namespace tessera::mesh
