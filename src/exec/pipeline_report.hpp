// What the pipeline (pipeline.cpp) shares with the correcting pass (fofc.cpp): the error
// report of a cell left unphysical, and the reading of a group's flagged cells.
#pragma once

#include "tessera/exec/group_solver.hpp"
#include "tessera/exec/pass.hpp"
#include "tessera/mesh/mesh.hpp"

namespace tessera::exec {

// Throws Error(kNumerical) naming the level, patch, cell, position and the state before
// and after the step; `in` is the group's input box with `ghost` layers.
[[noreturn]] void report_unphysical(const mesh::Mesh& m, int level, int first_patch,
                                    const kernels::GroupResult& r, const Real* in, int ghost,
                                    const Real* out, long step, const GroupSolver& solver,
                                    int nvar);

// Appends the cells that `solver` flagged in the group at `first_patch` (its new interior
// `out`; result.flagged of them) to stats, in level coordinates.
void collect_flagged(const mesh::Mesh& m, const GroupSolver& solver, int first_patch,
                     const Real* out, const kernels::GroupResult& result, PassStats& stats);

}  // namespace tessera::exec
