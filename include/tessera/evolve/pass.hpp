// Passes: the steps a level takes each time step (docs/architecture.md, "Passes").
// Simulation::advance runs its schedule of passes on a level, then the finer levels, then
// refluxing and restriction. A pass is either
// - a GroupPass, run patch group by patch group through the pipeline (prepare its input
//   fields with ghost zones, solve with its GroupSolver on the executor, close: write its
//   outputs back and, if it refluxes, its face fluxes to the flux registers); the MOL
//   hydro pass and a per-group iterative solver (SOR) are of this kind, or
// - a LevelPass, which works on a whole level at once (a root-level FFT solve).
// Time levels (mesh/fields.hpp): a group pass writes its outputs to the level's next slot,
// so that groups prepared later still read their neighbours' current state. When it is
// done, two-level outputs become current by a swap of the slots (the two-level fields it
// did not write are carried over first), one-level outputs are copied back to the current
// slot. Either way the next pass reads the result. One pass per step writes two-level
// fields (the one whose step the finer levels interpolate in time).
#pragma once

#include <string>

#include "tessera/core/timers.hpp"
#include "tessera/evolve/flux_register.hpp"
#include "tessera/evolve/group_solver.hpp"
#include "tessera/mesh/mesh.hpp"

namespace tessera::evolve {

class DeviceMesh;

// One level's step as the passes see it.
struct LevelStep {
  mesh::Mesh& mesh;
  int level;
  double dt;
  double coarse_weight;  // time of this step within the parent's, for coarse ghost zones
  long step;             // the root step being taken (1-based), for messages
  FluxRegisters& registers;
  Timers& timers;
  // The mesh's device-resident copy (resident.hpp) when the level's data stay on the GPU:
  // passes then read and write it, not the host pool.
  DeviceMesh* resident = nullptr;
};

// What a pass reports of a level step (hydro: the CFL speed and the floored cells).
struct PassStats {
  double max_speed = 0;
  long long floored = 0;
};

// A contiguous range of fields of the registry.
struct FieldRange {
  int first = 0;
  int count = 0;
  bool contains(int f) const { return f >= first && f < first + count; }
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string name() const = 0;
  virtual PassStats run(const LevelStep& step) = 0;
};

class LevelPass : public Pass {};

class Pipeline;

class GroupPass : public Pass {
 public:
  // Fields gathered into the solver's input box (solver().shape().in_vars of them), with
  // the solver's ghost width: same-level neighbours, else interpolation from the coarser
  // level in space and, at LevelStep::coarse_weight, in time; then physical boundaries.
  virtual FieldRange inputs() const = 0;
  // Fields the solver's interior output holds (solver().shape().out_vars of them).
  virtual FieldRange outputs() const = 0;
  // Whether the solver's flux planes (of the output fields) go to the flux registers.
  virtual bool refluxes() const = 0;
  // The solver for this level step (e.g. with the level's dt / dx set).
  virtual const GroupSolver& solver(const LevelStep& step) = 0;
  // Runs the pass through `pipeline` (which must have been built for its solver's shape).
  PassStats run(const LevelStep& step) override;
  void set_pipeline(Pipeline* pipeline) { pipeline_ = pipeline; }

 private:
  Pipeline* pipeline_ = nullptr;
};

}  // namespace tessera::evolve
