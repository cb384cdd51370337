// Storage of one time level of patch data, [patch][var][z][y][x] in one allocation, in host
// memory (docs/architecture.md, "Data residency"). A device-resident run keeps its own copy
// on the GPU (exec/resident.hpp, DeviceMesh) and marks the host's time levels stale
// (Mesh::set_host_stale) rather than moving this pool.
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
  // Room for `reals` without reallocating (a store that knows what it will hold).
  void reserve(std::size_t reals) { host_.reserve(reals); }

 private:
  MemorySpace space_;
  std::vector<Real> host_;
};

}  // namespace tessera::mesh
