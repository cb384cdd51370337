// The level-advance pipeline (docs/architecture.md, "Data flow"): patch groups of one level go
// through prepare (gather 16^3 + ghost zones) -> solve (executor) -> close (write back) in
// batches, for one GroupPass (pass.hpp): its input fields are read from the mesh's current
// time level, its outputs written as their time levels say (pass.hpp).
#pragma once

#include <vector>

#include "tessera/core/timers.hpp"
#include "tessera/exec/executor.hpp"
#include "tessera/exec/flux_register.hpp"
#include "tessera/exec/pass.hpp"
#include "tessera/mesh/mesh.hpp"

namespace tessera::exec {

// Gathers the fields `fields` (all of the mesh's when empty) of the group starting at
// `first_patch` with `ghost` layers from time level `slot`: [count][n][n][n],
// n = 16 + 2 ghost: same-level neighbours' data where they exist, else interpolation from
// the parent level at time weight `coarse_weight` between its previous (0) and current (1)
// state, then physical boundaries; `time` is the time of the data in `slot`, which only
// problem-defined boundaries read (a time-dependent inflow). Returns whether any ghost cell
// came from the parent level.
bool prepare_group(const mesh::Mesh& mesh, int slot, int first_patch, int ghost, Real* box,
                   double coarse_weight = 1.0, FieldRange fields = {}, double time = 0.0);

// Scatters a solved 16^3 interior [count][16][16][16] of the fields `fields` (all when
// empty) into the family's 8 patches of `slot`, with non-temporal stores: another thread
// reads them safely only after this thread has fenced (stream_fence, or the end of a
// parallel region that calls it).
void close_group(mesh::Mesh& mesh, int slot, int first_patch, const Real* interior,
                 FieldRange fields = {});

// Thread time of the prepare stage, split by whether a group has coarse-fine faces.
struct PrepareStats {
  long long groups[2] = {0, 0};  // [0]: neighbours on its own level only, [1]: coarse-fine
  double seconds[2] = {0, 0};    // summed over threads
};

// Batches alternate between two staging buffers: while the executor works on batch k,
// the CPU prepares batch k+1 and closes batch k-1 (Schive et al. 2010 §3.5, Fig. 9).
class Pipeline {
 public:
  // groups_per_batch 0: the executor's preferred batch. The staging is sized for the
  // solver's group shape and scratch; every solver run through it must have the same.
  Pipeline(Executor& executor, int groups_per_batch, const GroupSolver& solver);

  // Runs `pass` on every group of step.level, wherever the level's data live: in the host
  // pool (prepared on the CPU, closed back into it) or, for step.resident, in the device
  // copy (the executor gathers and scatters, Executor::submit_resident). The close stage
  // writes the outputs (two-level fields to the next slot, which then becomes current;
  // one-level fields in place) and, when the pass refluxes, feeds the flux registers. Throws
  // tessera::Error(kNumerical) naming the level, patch, cell, position and state when a cell stays
  // unphysical, and Error(kInternal) when the pass's solver or fields do not match the pipeline.
  PassStats run(const LevelStep& step, GroupPass& pass);

  // The correcting pass of `pass` (GroupPass::correct, first-order flux correction;
  // fofc.cpp), after run() on the same step made its outputs current: every group of
  // this rank whose input box holds one of `cells` (every rank's flagged cells) is solved
  // again from the previous state with pass.correcting_solver(), the flags as the boxes'
  // last variable, and its interior replaces the one before (run()'s, or the correction's
  // with `previous`); when the pass refluxes, the group's fluxes from that solve are taken
  // out of the flux registers and the new ones put in. Not `last`: the cells it leaves
  // unphysical come back in PassStats::flagged_cells.
  PassStats correct(const LevelStep& step, GroupPass& pass, const std::vector<LevelCell>& cells,
                    const std::vector<LevelCell>& previous, bool last);

  const PrepareStats& prepare_stats() const { return prepare_stats_; }
  int ghost() const { return shape_.ghost; }

 private:
  void prepare_batch(const LevelStep& s, GroupPass& pass, const std::vector<int>& groups, int first,
                     int count, Staging& staging);
  void close_batch(const LevelStep& s, GroupPass& pass, const std::vector<int>& groups, int first,
                   int count, Staging& staging);

  Executor& executor_;
  int batch_;
  GroupShape shape_;
  std::size_t host_scratch_ = 0, device_scratch_ = 0;
  std::unique_ptr<Staging> staging_[2];
  PrepareStats prepare_stats_;
  std::unique_ptr<Staging> correcting_;  // correct()'s, made on first use
};

}  // namespace tessera::exec
