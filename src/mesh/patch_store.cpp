// The store of a rank (patch_store.hpp; docs/architecture.md, "Ranks"): which families'
// data the pool holds and where, family by family.
#include "tessera/mesh/patch_store.hpp"

#include <cstring>
#include <limits>
#include <string>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"

namespace tessera::mesh {

PatchStore::PatchStore(FieldRegistry fields, std::size_t patches, int levels, bool with_data)
    : fields_(std::move(fields)), nvar_(fields_.size()), sparse_(!with_data) {
  for (const FieldInfo& f : fields_.all())
    if (f.time_levels != 1 && f.time_levels != 2)
      throw Error(ErrorKind::kInternal, "field '" + f.name + "' has " +
                                            std::to_string(f.time_levels) +
                                            " time levels; the mesh holds 1 or 2");
  one_level_fields_ = fields_.select([](const FieldInfo& f) { return f.time_levels == 1; });
  resize(patches);
  current_slot_.assign(levels, 0);
}

void PatchStore::refuse_stale(int slot) const {
  throw Error(ErrorKind::kInternal,
              strprintf("time level %d of the patch data is held on the GPU and was read on the "
                        "host before it was copied back",
                        slot));
}

void PatchStore::refuse_absent(int p) const {
  throw Error(ErrorKind::kInternal,
              strprintf("the data of patch %d were read or written on a rank that does not hold "
                        "them",
                        p));
}

void PatchStore::swap_slots(int level, const std::vector<int>& groups) {
  const int from = current_slot_[level], to = 1 - from;
  if (!one_level_fields_.empty())
    for (const int g : groups)
      if (holds(g))
        for (int p = g; p < g + kFamilySize; ++p)
          for (const int v : one_level_fields_)
            std::copy_n(data(from, p) + std::size_t(v) * kPatchCells, kPatchCells,
                        data(to, p) + std::size_t(v) * kPatchCells);
  current_slot_[level] = to;
}

void PatchStore::set_levels(int kept, int levels) {
  current_slot_.resize(kept);
  current_slot_.resize(levels, 0);
}

void PatchStore::resize(std::size_t patches) {
  const std::size_t families = patches / kFamilySize;
  if (sparse_) {  // new families are not held; removed ones were released
    family_slot_.resize(families, -1);
    return;
  }
  // A time level held on the GPU: its host copy is overwritten before it is read.
  for (int s = 0; s < 2; ++s) pool_[s].resize(patches * patch_reals(), !host_stale(s));
  note_pool();
  family_slot_.resize(families);
  for (std::size_t f = 0; f < families; ++f) family_slot_[f] = static_cast<int>(f);
}

void PatchStore::move_family(int from, int to) {
  if (sparse_) {  // the data stay where they are
    family_slot_[to / kFamilySize] = family_slot_[from / kFamilySize];
    family_slot_[from / kFamilySize] = -1;
    return;
  }
  const std::size_t bytes = kFamilySize * patch_reals() * sizeof(Real);
  for (auto& slot : pool_)
    std::memcpy(slot.data() + std::size_t(to) * patch_reals(),
                slot.data() + std::size_t(from) * patch_reals(), bytes);
}

void PatchStore::permute(const std::vector<int>& order) {
  if (order.empty()) return;
  if (sparse_) {  // the data stay where they are: the families' positions move
    std::vector<int> moved(family_slot_.size(), -1);
    for (std::size_t i = 0; i < order.size(); i += kFamilySize)
      moved[i / kFamilySize] = family_slot_[order[i] / kFamilySize];
    family_slot_ = std::move(moved);
    return;
  }
  // Follow each cycle of the permutation with one patch in hand.
  const std::size_t n = patch_reals();
  std::vector<Real> held(n);
  for (auto& slot : pool_) {
    std::vector<bool> done(order.size(), false);
    for (std::size_t start = 0; start < order.size(); ++start) {
      if (done[start] || order[start] == static_cast<int>(start)) continue;
      std::copy_n(slot.data() + start * n, n, held.data());
      std::size_t to = start;
      while (true) {
        done[to] = true;
        const std::size_t from = order[to];
        if (from == start) {
          std::copy_n(held.data(), n, slot.data() + to * n);
          break;
        }
        std::copy_n(slot.data() + from * n, n, slot.data() + to * n);
        to = from;
      }
    }
  }
}

void PatchStore::make_dense() {
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

void PatchStore::hold(int first_patch) {
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

void PatchStore::reserve_families(int families) {
  for (int s = 0; s < 2; ++s)
    pool_[s].reserve(std::size_t(families) * kFamilySize * patch_reals(), !host_stale(s));
  note_pool();
}

void PatchStore::release(int first_patch) {
  int& f = family_slot_[first_patch / kFamilySize];
  if (f < 0) return;
  free_families_.push_back(f);
  f = -1;
}

void PatchStore::compact() {
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

int PatchStore::held_families() const {
  return static_cast<int>(
      std::count_if(family_slot_.begin(), family_slot_.end(), [](int f) { return f >= 0; }));
}

}  // namespace tessera::mesh
