// Storage of one time level of patch data, [patch][var][z][y][x] in one allocation, and
// the memory space it lives in (docs/architecture.md, "Data residency"). Patch data live in
// host memory; a device-resident mode will allocate pools on the GPU, and the host
// accessors of the mesh will then refuse them, so that every host-side use is found.
#pragma once

#include <cstddef>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/core/real.hpp"

namespace tessera::mesh {

enum class MemorySpace { kHost, kDevice };

class PatchPool {
 public:
  // Only host pools exist yet: Error(kInternal) for another space.
  explicit PatchPool(MemorySpace space = MemorySpace::kHost) : space_(space) {
    if (space != MemorySpace::kHost)
      throw Error(ErrorKind::kInternal, "patch data in device memory are not supported yet");
  }
  MemorySpace space() const { return space_; }
  Real* data() { return host_.data(); }
  const Real* data() const { return host_.data(); }
  std::size_t size() const { return host_.size(); }
  std::size_t capacity() const { return host_.capacity(); }
  // New entries are zero. Growth is geometric (a mesh that grows regrid by regrid copies
  // its pool a logarithmic number of times); shrinking keeps the capacity.
  void resize(std::size_t reals) { host_.resize(reals, Real(0)); }

 private:
  MemorySpace space_;
  std::vector<Real> host_;
};

}  // namespace tessera::mesh
