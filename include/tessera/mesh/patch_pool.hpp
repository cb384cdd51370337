// Storage of one time level of patch data, [patch][var][z][y][x] in one allocation, in host
// memory (docs/architecture.md, "Data residency"). A device-resident run keeps its own copy
// on the GPU (exec/resident.hpp, DeviceMesh) and marks the host's time levels stale
// (Mesh::set_host_stale) rather than moving this pool.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>
#include <utility>
#include <vector>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "tessera/core/error.hpp"
#include "tessera/core/real.hpp"

namespace tessera::mesh {

enum class MemorySpace { kHost, kDevice };

// The pools' allocator: a pool of several MiB lies on 2 MiB boundaries and asks the kernel
// for transparent huge pages (madvise; where the system offers them only on request), so
// that new memory faults in once per 2 MiB instead of once per 4 KiB page. A regrid that
// grows the pool beyond its capacity copies it into new memory: 0.51 s for 290 MB per time
// level on 4 KiB pages (sedov64x5, one H200 host), most of it page faults.
template <class T>
struct PoolAllocator {
  using value_type = T;
  static constexpr std::size_t kHuge = std::size_t(2) << 20;
  PoolAllocator() = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>&) {}
  static bool huge(std::size_t n) { return n * sizeof(T) >= 2 * kHuge; }
  T* allocate(std::size_t n) {
    if (!huge(n)) return std::allocator<T>().allocate(n);
    const std::size_t bytes = (n * sizeof(T) + kHuge - 1) / kHuge * kHuge;
    void* p = std::aligned_alloc(kHuge, bytes);
    if (!p) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    madvise(p, bytes, MADV_HUGEPAGE);  // advice: without it the pool is on small pages
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) {
    if (!huge(n)) return std::allocator<T>().deallocate(p, n);
    std::free(p);
  }
  // Elements made without a value are left unwritten (PatchPool::resize with zero =
  // false): their pages are not touched until they are written.
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <class U>
  bool operator==(const PoolAllocator<U>&) const {
    return true;
  }
};

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
  // New entries are zero, or with `zero` false left unwritten (a time level whose newest
  // data are on the GPU: the copy back overwrites them before anything reads them). Growth
  // is geometric (a mesh that grows regrid by regrid copies its pool a logarithmic number
  // of times); shrinking keeps the capacity.
  void resize(std::size_t reals, bool zero = true) {
    if (zero)
      host_.resize(reals, Real(0));
    else
      host_.resize(reals);
  }
  // Room for `reals` without reallocating (a store that knows what it will hold). With
  // `keep` false the entries need not be kept (as resize's `zero`): new memory, nothing
  // copied or written.
  void reserve(std::size_t reals, bool keep = true) {
    if (keep || reals <= host_.capacity()) return host_.reserve(reals);
    std::vector<Real, PoolAllocator<Real>> fresh;
    fresh.reserve(reals);
    fresh.resize(host_.size());
    host_.swap(fresh);
  }

 private:
  MemorySpace space_;
  std::vector<Real, PoolAllocator<Real>> host_;
};

}  // namespace tessera::mesh
