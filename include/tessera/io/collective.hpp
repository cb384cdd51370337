// Plot files and checkpoints written by all the ranks of a run together, one file each,
// through parallel HDF5 (MPI-IO): every rank writes the data of the patches it owns, and
// the structure, which every rank holds whole, is written once (docs/architecture.md,
// "Ranks"). The files are those one rank writes, dataset for dataset.
#pragma once

#include <functional>

#include "tessera/parallel/comm.hpp"

namespace tessera::io {

struct Collective {
  // The run's ranks: the MPI world (MPI-IO opens the file over MPI_COMM_WORLD). Errors of
  // any rank are agreed through it, so that all ranks stop together.
  parallel::Comm* comm = nullptr;
  // Whether this rank writes patch p's data (each patch is owned by exactly one rank).
  std::function<bool(int patch)> owns;
};

// Whether this build can write collectively: MPI and a parallel HDF5 library (Debian's
// libhdf5-openmpi-dev). Without it, rank 0 gathers every patch and writes alone.
bool collective_output_built();

}  // namespace tessera::io
