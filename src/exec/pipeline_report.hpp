// The pipeline's error report of a cell left unphysical (pipeline.cpp), shared with the
// correcting pass (fofc.cpp).
#pragma once

#include "tessera/exec/group_solver.hpp"
#include "tessera/mesh/mesh.hpp"

namespace tessera::exec {

// Throws Error(kNumerical) naming the level, patch, cell, position and the state before
// and after the step; `in` is the group's input box with `ghost` layers.
[[noreturn]] void report_unphysical(const mesh::Mesh& m, int level, int first_patch,
                                    const kernels::GroupResult& r, const Real* in, int ghost,
                                    const Real* out, long step, const GroupSolver& solver,
                                    int nvar);

}  // namespace tessera::exec
