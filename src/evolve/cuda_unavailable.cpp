// Builds without the CUDA backend: the hydro solvers' device entry points, never called
// there (the CPU executor runs solve_host).
#include "tessera/core/error.hpp"
#include "tessera/evolve/mol_solver.hpp"
#include "tessera/evolve/relaxing_tvd_solver.hpp"

namespace tessera::evolve {

void MolSolver::solve_device(const exec::DeviceBatch&, void*) const {
  throw Error(ErrorKind::kInternal, "a device solve was requested from a build without CUDA");
}

void RelaxingTvdSolver::solve_device(const exec::DeviceBatch&, void*) const {
  throw Error(ErrorKind::kInternal, "a device solve was requested from a build without CUDA");
}

}  // namespace tessera::evolve
