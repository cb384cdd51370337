// The patch store (docs/architecture.md, "Ranks"): the field data of the families a process
// holds, two time levels each, in one structure-of-arrays pool [patch][var][z][y][x] per
// time level; the variables are the fields of a FieldRegistry, in its order. It knows the
// families only by position (the forest's first patch / 8) and its memory space; the
// forest (forest.hpp) says what they are. A Mesh is the two (mesh.hpp).
//
// Dense, a store holds every family at the pool position of its first patch (pool order =
// patch order). Sparse (make_sparse), it holds the families of its choice, each anywhere
// in the pool: on several ranks, a rank's own families and the buffer copies of the
// others' it reads (GAMER's buffer patches, in the same arrays). hold() gives a family room
// (its data NaN until written: nothing current passes for received), release() drops one,
// compact() returns the room of dropped ones. data() of a family not held throws
// Error(kInternal) naming the patch.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "tessera/core/real.hpp"
#include "tessera/mesh/fields.hpp"
#include "tessera/mesh/patch.hpp"
#include "tessera/mesh/patch_pool.hpp"

namespace tessera::mesh {

class PatchStore {
 public:
  // A store of `patches` patches (a multiple of 8) on `levels` levels, every field with 1
  // or 2 time levels (Error(kInternal) otherwise). with_data = false: sparse, holding no
  // family yet. Data of both time levels is zero.
  PatchStore(FieldRegistry fields, std::size_t patches, int levels, bool with_data);

  const FieldRegistry& fields() const { return fields_; }
  int nvar() const { return nvar_; }
  std::size_t patch_reals() const { return std::size_t(nvar_) * kPatchCells; }

  Real* data(int slot, int p) {
    check_host(slot);
    return pool_[slot].data() + offset(p);
  }
  const Real* data(int slot, int p) const {
    check_host(slot);
    return pool_[slot].data() + offset(p);
  }

  // The pool of time level `slot` as one array of pool_patches() patches, and where patch
  // p lies in it (in patches): what a device copy of the store mirrors (exec/resident.hpp).
  Real* pool_data(int slot) {
    check_host(slot);
    return pool_[slot].data();
  }
  const Real* pool_data(int slot) const {
    check_host(slot);
    return pool_[slot].data();
  }
  // Where the pool of time level `slot` lies, without reading it (held on the GPU or not):
  // whether a device copy still mirrors this pool.
  const void* pool_address(int slot) const { return pool_[slot].data(); }
  std::size_t pool_patches() const { return pool_[0].size() / patch_reals(); }
  std::size_t position(int p) const { return offset(p) / patch_reals(); }
  void make_sparse() { sparse_ = true; }
  // Back to every family at the position of its first patch (each must be held): what the
  // checkpoint writer, which writes each level as one slab of the pool, needs.
  void make_dense();
  bool sparse() const { return sparse_; }
  bool holds(int p) const { return family_slot_[p / kFamilySize] >= 0; }
  void hold(int first_patch);
  // Room for `families` held families in all without reallocating (hold() grows the pool
  // geometrically, up to twice what it holds). A time level marked stale (held on the GPU)
  // is not copied into the new memory, nor are resize()'s new patches written there.
  void reserve_families(int families);
  void release(int first_patch);
  void compact();
  // Families whose data this process holds; released positions that hold() will reuse.
  int held_families() const;
  int free_families() const { return static_cast<int>(free_families_.size()); }

  // Device residency (exec/resident.hpp): a time level whose newest data are on the GPU
  // is marked stale, and data() refuses it with Error(kInternal) until it is copied back,
  // so that a host-side reader that forgot to ask for the copy is found at once.
  void set_host_stale(int slot, bool stale) {
    stale_slots_ = stale ? stale_slots_ | (1 << slot) : stale_slots_ & ~(1 << slot);
  }
  bool host_stale(int slot) const { return (stale_slots_ >> slot) & 1; }

  // Each level has its own current time level (subcycling: Mesh::swap_slots).
  int current_slot(int level) const { return current_slot_[level]; }
  int next_slot(int level) const { return 1 - current_slot_[level]; }
  // Makes `level`'s next slot current without copying anything.
  void flip_slots(int level) { current_slot_[level] = 1 - current_slot_[level]; }
  // flip_slots, after copying the one-level fields of the families `groups` (first
  // patches) that the store holds into the next slot, so their state carries across.
  void swap_slots(int level, const std::vector<int>& groups);

  // Patches the pool holds room for without reallocating.
  std::size_t pool_capacity_patches() const { return pool_[0].capacity() / patch_reals(); }
  // The largest room the pool ever had, in patches.
  std::size_t pool_peak_patches() const { return pool_peak_patches_; }
  MemorySpace memory_space() const { return pool_[0].space(); }

  // Following the forest's structure changes (Mesh::apply_hierarchy, canonicalize): room
  // for `patches` patches (dense: the pool; sparse: new families are not held), a family
  // moved from the position of patch `from` to that of `to`, the patches renumbered
  // (order[new] = old), and the levels (those beyond `kept` start at slot 0).
  void resize(std::size_t patches);
  void move_family(int from, int to);
  void permute(const std::vector<int>& order);
  void set_levels(int kept, int levels);

 private:
  void check_host(int slot) const {
    if (stale_slots_ >> slot & 1) [[unlikely]]
      refuse_stale(slot);
  }
  [[noreturn]] void refuse_stale(int slot) const;
  std::size_t offset(int p) const {
    const int f = family_slot_[p / kFamilySize];
    if (f < 0) [[unlikely]]
      refuse_absent(p);
    return (std::size_t(f) * kFamilySize + p % kFamilySize) * patch_reals();
  }
  [[noreturn]] void refuse_absent(int p) const;
  void note_pool() { pool_peak_patches_ = std::max(pool_peak_patches_, pool_capacity_patches()); }

  FieldRegistry fields_;
  int nvar_;                           // fields_.size()
  std::vector<int> one_level_fields_;  // fields with time_levels == 1
  PatchPool pool_[2];                  // the two time levels
  // [family]: its position in the pool, in families (-1: not held); the identity unless
  // sparse_. free_families_: pool positions of released families, for hold() to reuse.
  std::vector<int> family_slot_;
  std::vector<int> free_families_;
  bool sparse_ = false;
  std::size_t pool_peak_patches_ = 0;
  std::vector<int> current_slot_;
  int stale_slots_ = 0;  // bit s: time level s is newer on the device
};

}  // namespace tessera::mesh
