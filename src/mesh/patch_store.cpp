// The store of a rank (mesh.hpp, "The patch store"; docs/architecture.md, "Ranks"): which
// families' data the pool holds and where, family by family.
#include <algorithm>
#include <limits>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/mesh/mesh.hpp"

namespace tessera::mesh {

void Mesh::refuse_absent(int p) const {
  throw Error(ErrorKind::kInternal,
              strprintf("the data of patch %d (level %d) were read or written on a rank that "
                        "does not hold them",
                        p, patches_[p].level));
}

void Mesh::make_sparse() {
  sparse_ = true;
}

void Mesh::make_dense() {
  if (!sparse_) return;
  const std::size_t n = kFamilySize * patch_reals();
  for (auto& slot : pool_) {
    PatchPool dense(slot.space());
    dense.resize(family_slot_.size() * n);
    for (std::size_t f = 0; f < family_slot_.size(); ++f) {
      if (family_slot_[f] < 0) refuse_absent(static_cast<int>(f) * kFamilySize);
      std::copy_n(slot.data() + std::size_t(family_slot_[f]) * n, n, dense.data() + f * n);
    }
    slot = std::move(dense);
  }
  note_pool();
  for (std::size_t f = 0; f < family_slot_.size(); ++f) family_slot_[f] = static_cast<int>(f);
  free_families_.clear();
  sparse_ = false;
}

void Mesh::hold(int first_patch) {
  int& f = family_slot_[first_patch / kFamilySize];
  if (f >= 0) return;
  if (!free_families_.empty()) {
    f = free_families_.back();
    free_families_.pop_back();
  } else {
    f = static_cast<int>(pool_[0].size() / (kFamilySize * patch_reals()));
    for (auto& slot : pool_) slot.resize(slot.size() + kFamilySize * patch_reals());
    note_pool();
  }
  const std::size_t n = kFamilySize * patch_reals();
  for (auto& slot : pool_)
    std::fill_n(slot.data() + std::size_t(f) * n, n, std::numeric_limits<Real>::quiet_NaN());
}

void Mesh::reserve_families(int families) {
  for (auto& slot : pool_) slot.reserve(std::size_t(families) * kFamilySize * patch_reals());
  note_pool();
}

void Mesh::release(int first_patch) {
  int& f = family_slot_[first_patch / kFamilySize];
  if (f < 0) return;
  free_families_.push_back(f);
  f = -1;
}

void Mesh::compact() {
  const std::size_t n = kFamilySize * patch_reals();
  for (auto& slot : pool_) {
    PatchPool packed(slot.space());
    packed.resize(std::size_t(held_families()) * n);
    int next = 0;
    for (const int f : family_slot_)
      if (f >= 0) std::copy_n(slot.data() + std::size_t(f) * n, n, packed.data() + (next++) * n);
    slot = std::move(packed);
  }
  int next = 0;
  for (int& f : family_slot_)
    if (f >= 0) f = next++;
  free_families_.clear();
}

int Mesh::held_families() const {
  return static_cast<int>(
      std::count_if(family_slot_.begin(), family_slot_.end(), [](int f) { return f >= 0; }));
}

}  // namespace tessera::mesh
