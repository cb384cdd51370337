// The solve step of a pass that runs patch group by patch group (pass.hpp): how one
// group's prepared input box becomes its new interior, its flux planes and its results,
// on the CPU and on a GPU. Executors own the memory, the threads and the streams; a
// GroupSolver only computes, so a new solver (a Poisson relaxation, a second hydro scheme)
// runs through the same pipeline and executors unchanged (GAMER's one prepare/solve/close
// driver for all its solvers, Schive et al. 2010 §3).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/group_layout.hpp"

namespace tessera::exec {

// The data of one group: input box of `in_vars` variables with `ghost` layers, interior
// output of `out_vars` variables, flux planes of `flux_vars` variables (0: none).
struct GroupShape {
  int ghost = 0;
  int in_vars = 0;
  int out_vars = 0;
  int flux_vars = 0;
  std::size_t in_reals() const { return std::size_t(in_vars) * kernels::box_cells(ghost); }
  std::size_t out_reals() const { return std::size_t(out_vars) * kernels::kGroupCells; }
  std::size_t flux_reals() const {
    return std::size_t(kernels::kNumFluxPlanes) * flux_vars * kernels::kFaceCells;
  }
  bool operator==(const GroupShape&) const = default;
};

// Device pointers of `count` consecutive groups (one stream's part of a batch); per
// group g the arrays start at g times the shape's sizes, and `scratch` holds
// count * device_scratch_reals() Reals that the solver lays out as it likes.
struct DeviceBatch {
  const Real* in;
  Real* out;
  Real* flux;
  kernels::GroupResult* results;
  Real* scratch;
  int count;
};

class GroupSolver {
 public:
  virtual ~GroupSolver() = default;
  virtual GroupShape shape() const = 0;
  // Scratch of one CPU thread, and per group on the device (Reals).
  virtual std::size_t host_scratch_reals() const = 0;
  virtual std::size_t device_scratch_reals() const = 0;
  // One group on the calling thread.
  virtual void solve_host(const Real* in, Real* out, Real* flux, kernels::GroupResult* result,
                          Real* scratch) const = 0;
  // Enqueues the solve of b.count groups on `stream` (a cudaStream_t). Throws
  // Error(kInternal) in a build without the CUDA backend.
  virtual void solve_device(const DeviceBatch& b, void* stream) const = 0;
  // The interior cells (z*256 + y*16 + x) of a solved group's output `out` that the
  // solver flagged (GroupResult::flagged) for a second, correcting pass; none by default.
  virtual void flagged_cells(const Real* out, std::vector<int>& cells) const {
    (void)out, (void)cells;
  }
  // A correcting pass (first-order flux correction): the farthest, in cells along any axis
  // outside the group's interior, that a flagged cell can change the group's update; a
  // group with no flag that near is not solved again. The box's ghost width by default.
  virtual int flag_reach() const { return shape().ghost; }
  // Name of input variable v in error messages.
  virtual std::string variable_name(int v) const { return "var" + std::to_string(v); }
};

}  // namespace tessera::exec
