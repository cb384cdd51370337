#include "src/io/collective.hpp"

#include <cstdlib>

#include "tessera/core/error.hpp"
#include "tessera/io/collective.hpp"

#ifdef TESSERA_HAVE_PARALLEL_HDF5
#include <mpi.h>
#endif

namespace tessera::io {

bool collective_output_built() {
#ifdef TESSERA_HAVE_PARALLEL_HDF5
  return true;
#else
  return false;
#endif
}

namespace detail {

std::size_t max_transfer_bytes() {
  static const std::size_t bytes = [] {
    std::size_t limit = std::size_t{1} << 30;
    if (const char* text = std::getenv("TESSERA_IO_MAX_TRANSFER")) {
      char* end = nullptr;
      const unsigned long long v = std::strtoull(text, &end, 10);
      if (end != text && *end == '\0' && v > 0 && v < limit) limit = static_cast<std::size_t>(v);
    }
    return limit;
  }();
  return bytes;
}

#ifdef TESSERA_HAVE_PARALLEL_HDF5
void set_collective_access(hid_t fapl) {
  if (H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL) < 0 ||
      H5Pset_all_coll_metadata_ops(fapl, true) < 0 || H5Pset_coll_metadata_write(fapl, true) < 0)
    throw Error(ErrorKind::kIo, "cannot set up MPI-IO for a collective write (HDF5)");
}

void set_collective_transfer(hid_t dxpl) {
  if (H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE) < 0)
    throw Error(ErrorKind::kIo, "cannot set up a collective transfer (HDF5)");
}
#else
void set_collective_access(hid_t) {
  throw Error(ErrorKind::kInternal, "collective output in a build without parallel HDF5");
}
void set_collective_transfer(hid_t) {
  throw Error(ErrorKind::kInternal, "collective output in a build without parallel HDF5");
}
#endif

}  // namespace detail
}  // namespace tessera::io
