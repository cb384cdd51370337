// The device solve of the method-of-lines solver: the batch's scratch holds, for its
// groups, the primitives, the stage state and the three flux arrays of their boxes.
#include "kernels/mol_cuda.cuh"
#include "tessera/evolve/mol_solver.hpp"

namespace tessera::evolve {

void MolSolver::solve_device(const exec::DeviceBatch& b, void* stream) const {
  const std::size_t box = std::size_t(nvar()) * kernels::box_cells(shape().ghost) * b.count;
  const kernels::BoxArrays a{b.in,   b.scratch,      b.scratch + box, b.scratch + 2 * box,
                             b.out,  b.flux,         b.results,       b.count,
                             nvar(), shape().in_vars};
  kernels::launch_mol(scheme_, a, params_, static_cast<cudaStream_t>(stream));
}

}  // namespace tessera::evolve
