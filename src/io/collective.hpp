// The MPI-IO side of collective output (tessera/io/collective.hpp), kept out of the
// writers so that a build without parallel HDF5 compiles them unchanged.
#pragma once

#include <hdf5.h>

#include <cstddef>

namespace tessera::io::detail {

// Sets MPI-IO over MPI_COMM_WORLD on a file-access list, with collective metadata
// operations and writes. Throws Error(kInternal) in a build without parallel HDF5.
void set_collective_access(hid_t fapl);

// Sets collective MPI-IO on a dataset-transfer list (filtered datasets, such as the
// checkpoint's checksummed ones, are written only collectively by parallel HDF5).
void set_collective_transfer(hid_t dxpl);

// The most bytes one rank passes to one write call of a dataset's rows: 1 GiB, below MPI's
// 2^31-byte limit on counts (and below ROMIO's own limits on some systems); the
// environment variable TESSERA_IO_MAX_TRANSFER (bytes) lowers it, which the tests use to
// make every write take many rounds.
std::size_t max_transfer_bytes();

}  // namespace tessera::io::detail
