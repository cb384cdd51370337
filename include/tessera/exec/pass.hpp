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
// fields (the one whose step the finer levels interpolate in time); a pass that writes
// two-level fields after it exchanges them instead (exchanges_outputs): the new values
// become current and the old ones stay in the other slot, as the level's previous state.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tessera/core/timers.hpp"
#include "tessera/exec/flux_register.hpp"
#include "tessera/exec/group_solver.hpp"
#include "tessera/mesh/mesh.hpp"

namespace tessera::exec {

class DeviceMesh;
class DeviceGather;

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
  // The end of this step within the parent's (the time of a solve after the hydro pass).
  double coarse_weight_end = 1.0;
  // Steps this level took before this one (the relaxing-TVD scheme alternates its sweep
  // order with it).
  long level_step = 0;
  // The level's time at the start of this step (problem-defined boundaries read it).
  double time = 0.0;
  // The groups of the level this rank steps, in canonical order (its partition's piece;
  // docs/architecture.md, "Ranks"); every group of the level when null.
  const std::vector<int>* groups = nullptr;
  // Several ranks, a pass through the Pipeline while the level's buffer patches are still
  // in flight (docs/architecture.md, "Ranks"): the groups in this order instead, the first
  // `interior` of them reading no buffer patch; `remote` is called once, before the first
  // of the others is prepared (it receives the buffer patches), and `progress` after each
  // batch before that (it lets the messages advance).
  const std::vector<int>* overlap_groups = nullptr;
  std::size_t interior = 0;
  std::function<void()> remote = nullptr;
  std::function<void()> progress = nullptr;
};

// A cell of a level in the level's integer cell coordinates.
using LevelCell = std::array<std::int64_t, 3>;

// What a pass reports of a level step (hydro: the CFL speed and the floored cells).
struct PassStats {
  double max_speed = 0;
  long long floored = 0;
  // Cells the pass flagged for a correcting pass (first-order flux correction), and
  // which ones (this rank's, in level coordinates).
  long long flagged = 0;
  std::vector<LevelCell> flagged_cells;
  // Iterative solvers: groups solved, iterations summed over them, groups whose iterations
  // ran out before the tolerance was met.
  long long groups = 0, iterations = 0, unconverged = 0;
  // Correcting passes (first-order flux correction): group solves, those that take a
  // previous solve's fluxes back out of the registers included, and the batches they took.
  long long solves = 0, batches = 0;
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
  // Whether the pass reads other patches' cells (ghost zones) in a step of `level`: on
  // several ranks the buffer patches are brought up to date before it, after the passes
  // before it changed them.
  virtual bool reads_neighbours(int level) const = 0;
  // Whether run() honours LevelStep::overlap_groups (prepares and solves the interior
  // groups while the buffer patches travel).
  virtual bool overlaps_exchange() const { return false; }
  // A pass that flags cells (PassStats::flagged_cells) and, after run(), takes the step
  // again where it failed: correct() with every rank's flagged cells of the level (the
  // same sorted list on every rank), after run()'s outputs became current. `previous`: the
  // cells of the correction before this one on the same step (empty for the first); a
  // correction that is not `last` flags the cells it still leaves unphysical (its
  // PassStats::flagged_cells) for the next, the last one floors them.
  virtual bool corrects() const { return false; }
  virtual PassStats correct(const LevelStep& step, const std::vector<LevelCell>& cells,
                            const std::vector<LevelCell>& previous, bool last) {
    (void)step, (void)cells, (void)previous, (void)last;
    return {};
  }
};

// A pass over a level's cells without neighbours (the root level's FFT solve reads every
// rank's density through its own gather).
class LevelPass : public Pass {
 public:
  bool reads_neighbours(int) const override { return false; }
};

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
  // Gathers one group's input box (solver().shape().in_vars variables with `ghost` layers)
  // from the current slot; the default gathers inputs() with prepare_group at
  // step.coarse_weight. Returns whether a ghost cell came from the coarser level.
  virtual bool prepare(const LevelStep& step, int first_patch, int ghost, Real* box);
  // The variables prepare() gathers (inputs().count unless prepare is the pass's own).
  virtual int input_count() const { return inputs().count; }
  // Two-level outputs: when true the outputs' slots are exchanged after the pass (their
  // new values current, their old ones kept as the previous state) and the level's other
  // fields stay as they are; when false the level's slots swap (pass.hpp's header).
  virtual bool exchanges_outputs() const { return false; }
  // Runs the pass through `pipeline` (which must have been built for its solver's shape).
  PassStats run(const LevelStep& step) override;
  bool reads_neighbours(int) const override { return true; }
  bool overlaps_exchange() const override { return true; }
  // The solver of correct() for this level step (its input boxes: the inputs, then the
  // flags), flagging the cells it leaves unphysical or flooring them; null when the pass
  // does not correct.
  virtual const GroupSolver* correcting_solver(const LevelStep& step, bool flag_unphysical) {
    (void)step, (void)flag_unphysical;
    return nullptr;
  }
  PassStats correct(const LevelStep& step, const std::vector<LevelCell>& cells,
                    const std::vector<LevelCell>& previous, bool last) override;
  // On a device-resident level, a pass with its own prepare() gathers its boxes on the
  // device with this (valid until the next call); null: the pass cannot run resident
  // unless the tables' gather of inputs() is its prepare.
  virtual const DeviceGather* resident_gather(const LevelStep& step) {
    (void)step;
    return nullptr;
  }
  void set_pipeline(Pipeline* pipeline) { pipeline_ = pipeline; }

 private:
  Pipeline* pipeline_ = nullptr;
};

}  // namespace tessera::exec
