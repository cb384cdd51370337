// The level-advance pipeline of DESIGN.md §1: patch groups of one level go through
// prepare (gather 16^3 + ghost zones) -> solve (executor) -> close (write back) in
// batches. Reads the mesh's current time level, writes the other, then swaps them.
#pragma once

#include <vector>

#include "tessera/core/timers.hpp"
#include "tessera/evolve/executor.hpp"
#include "tessera/mesh/mesh.hpp"

namespace tessera::evolve {

// Gathers the group starting at `first_patch` with `ghost` layers from time level `slot`:
// [nvar][n][n][n], n = 16 + 2 ghost; neighbours' data, then physical boundaries.
void prepare_group(const mesh::Mesh& mesh, int slot, int first_patch, int ghost, Real* box);

// Scatters a solved 16^3 interior [nvar][16][16][16] into the family's 8 patches of `slot`.
void close_group(mesh::Mesh& mesh, int slot, int first_patch, const Real* interior);

struct LevelStepStats {
  double max_speed = 0;  // largest |v_d| + c_s of the new state
  long long floored = 0;
};

class Pipeline {
 public:
  Pipeline(Executor& executor, int groups_per_batch);

  // Advances every group of `level` by dt. Throws tessera::Error(kNumerical) naming the
  // level, patch, cell, position and state when a cell stays unphysical.
  LevelStepStats advance_level(mesh::Mesh& mesh, int level, const SolveArgs& args, long step,
                               Timers& timers);

 private:
  Executor& executor_;
  int batch_;
  std::vector<Real> in_, out_, flux_;
  std::vector<kernels::GroupResult> results_;
};

}  // namespace tessera::evolve
