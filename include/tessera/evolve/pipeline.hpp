// The level-advance pipeline (docs/architecture.md, "Data flow"): patch groups of one level go
// through prepare (gather 16^3 + ghost zones) -> solve (executor) -> close (write back) in batches.
// Reads the mesh's current time level, writes the other, then swaps them.
#pragma once

#include <vector>

#include "tessera/core/timers.hpp"
#include "tessera/evolve/executor.hpp"
#include "tessera/evolve/flux_register.hpp"
#include "tessera/mesh/mesh.hpp"

namespace tessera::evolve {

// Gathers the group starting at `first_patch` with `ghost` layers from time level `slot`:
// [nvar][n][n][n], n = 16 + 2 ghost: same-level neighbours' data where they exist, else
// interpolation from the parent level at time weight `coarse_weight` between its
// previous (0) and current (1) state, then physical boundaries. Returns whether any
// ghost cell came from the parent level.
bool prepare_group(const mesh::Mesh& mesh, int slot, int first_patch, int ghost, Real* box,
                   double coarse_weight = 1.0);

// Scatters a solved 16^3 interior [nvar][16][16][16] into the family's 8 patches of `slot`,
// with non-temporal stores: another thread reads them safely only after this thread has
// fenced (stream_fence, or the end of a parallel region that calls it).
void close_group(mesh::Mesh& mesh, int slot, int first_patch, const Real* interior);

// Thread time of the prepare stage, split by whether a group has coarse-fine faces.
struct PrepareStats {
  long long groups[2] = {0, 0};  // [0]: neighbours on its own level only, [1]: coarse-fine
  double seconds[2] = {0, 0};    // summed over threads
};

struct LevelStepStats {
  double max_speed = 0;  // largest |v_d| + c_s of the new state
  long long floored = 0;
};

// Batches alternate between two staging buffers: while the executor works on batch k,
// the CPU prepares batch k+1 and closes batch k-1 (Schive et al. 2010 §3.5, Fig. 9).
class Pipeline {
 public:
  // groups_per_batch 0: the executor's preferred batch. ghost: the ghost layers the
  // scheme needs (kernels::ghost_width of its integrator); the staging is sized for it.
  Pipeline(Executor& executor, int groups_per_batch, int ghost, int nvar);

  // Advances every group of `level` by dt (args.params.dt_over_dx = dt / dx of the
  // level). Ghost zones from the coarser level are interpolated at `coarse_weight`
  // (prepare_group); the close stage feeds the flux registers. Throws
  // tessera::Error(kNumerical) naming the level, patch, cell, position and state when a
  // cell stays unphysical, and Error(kInternal) when args.scheme needs another ghost
  // width than the pipeline was built for.
  LevelStepStats advance_level(mesh::Mesh& mesh, int level, double dt, const SolveArgs& args,
                               long step, double coarse_weight, FluxRegisters& registers,
                               Timers& timers);

  const PrepareStats& prepare_stats() const { return prepare_stats_; }
  int ghost() const { return ghost_; }

 private:
  void close_batch(mesh::Mesh& mesh, int level, const std::vector<int>& groups, int first,
                   int count, Staging& staging, double dt, long step, const kernels::Scheme& scheme,
                   FluxRegisters& registers, LevelStepStats& stats);

  Executor& executor_;
  int batch_;
  int ghost_;
  int nvar_;
  std::unique_ptr<Staging> staging_[2];
  PrepareStats prepare_stats_;
};

}  // namespace tessera::evolve
