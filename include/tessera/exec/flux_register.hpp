// Flux registers on coarse-fine faces (Berger & Colella 1989; Schive et al. 2010 §2.1):
// a coarse cell next to a refined patch was updated with the coarse flux through their
// shared face; after the finer level has caught up, the difference to the time- and
// area-integrated fine fluxes is added back, so AMR conserves to round-off. Only the
// mesh's flux-corrected fields (FieldInfo::flux_corrected) have registers; refluxing leaves
// the others untouched.
#pragma once

#include <unordered_map>
#include <vector>

#include "tessera/core/real.hpp"
#include "tessera/mesh/mesh.hpp"
#include "tessera/parallel/comm.hpp"
#include "tessera/parallel/partition.hpp"

namespace tessera::exec {

class FluxRegisters {
 public:
  // Finds every coarse-fine face: a leaf patch next (across a face) to a refined patch
  // of the same level. Call whenever the hierarchy or the partition changes. On several
  // ranks, rank `rank` of `part` holds the registers of its own coarse patches, and an
  // outbox for each register of another rank's patch beside a fine group of its own.
  void build(const mesh::Mesh& mesh, const parallel::Partition& part = {}, int rank = 0);

  // Close stage of a group of `level`, flux planes [9][nflux][16^2] as the solver returns
  // them (the nflux flux-corrected fields, in pool order), time step dt: the coarse fluxes
  // of its leaf patches' registered faces are subtracted (register -= dt F), and, if the
  // group's outer faces touch a coarser leaf patch, the fine fluxes are added to that
  // patch's register (+= dt F, averaged over the 4 fine faces of each coarse face). Groups
  // write disjoint registers: thread-safe.
  void close_group(const mesh::Mesh& mesh, int first_patch, const Real* planes, double dt);
  // Whether close_group would add anything for the group: a face of one of its leaf
  // patches, or of the group itself, on a register.
  bool touches(const mesh::Mesh& mesh, int first_patch) const;

  // After each step of level + 1: the fine contributions of that step to `level`'s
  // registers, gathered per register apart from the register (starting from -0, the
  // identity of IEEE addition: +0 would turn a -0 contribution into +0), are added to it
  // once; with several ranks (comm, a collective) those of other ranks' registers are sent
  // to the owners first. A register so receives one sum per fine step, in the same order
  // on any number of ranks, whatever the fine group added and took back within the step
  // (first-order flux correction takes a solve's fluxes out and puts the new ones in).
  void finish_fine_step(int level, parallel::Comm* comm);

  // Adds register / dx to the cells of `level` beside each registered face (minus on
  // the face's low side, plus on its high side), then clears the registers (this rank's
  // own: the outboxes were cleared when sent). A cell that one face's correction would
  // leave unphysical (mesh::AdmissibleState) keeps its value instead; returns how many
  // corrections this rank withheld so.
  long long reflux(mesh::Mesh& mesh, int level);

  // The layout, for a copy of the registers on the device (resident.hpp): level `level`'s
  // registers in order, each the coarse patch and its face (2 dir + side); where each
  // patch's registers begin (and one past the last); the pool variable of each flux field.
  int count(int level) const {
    return level < static_cast<int>(registers_.size()) ? static_cast<int>(registers_[level].size())
                                                       : 0;
  }
  int patch_of(int level, int i) const { return registers_[level][i].patch; }
  int face_of(int level, int i) const { return registers_[level][i].face; }
  const std::vector<int>& runs(int level) const { return patch_runs_[level]; }
  const std::vector<int>& flux_vars() const { return flux_vars_; }
  // What close_group does for the group starting at first_patch, as register indices (-1:
  // none): `coarse[6 c + face]` the register of child c's face (subtracting its coarse
  // flux), `fine[face]` the register of level - 1 its outer face adds to.
  void group_slots(const mesh::Mesh& mesh, int first_patch, int coarse[48], int fine[6]) const;
  // The rank these registers were built for, and whether it holds register i of `level`
  // (its coarse patch's rank: the one that refluxes it).
  int rank() const { return rank_; }
  bool owns(int level, int i) const { return registers_[level][i].owner == rank_; }
  // The fine sums finish_fine_step sends on several ranks, as register indices in build
  // order: send[q], those of rank q's registers that this rank's fine groups add to;
  // receive[q], those of this rank's registers that rank q's fine groups add to.
  void fine_routes(int level, int ranks, std::vector<std::vector<int>>& send,
                   std::vector<std::vector<int>>& receive) const;

 private:
  struct Register {
    int patch;               // coarse leaf patch
    int face;                // 2 * dir + side of that patch
    std::vector<Real> data;  // [nflux][8][8], transverse (a slower, b faster)
    std::vector<Real> fine;  // this fine step's contributions, not yet in data (-0 when none)
    int owner = 0;           // rank of the coarse patch
    int fine_owner = 0;      // rank of the fine group beside the face
  };
  static long long key(int patch, int face) { return 6LL * patch + face; }
  Register* find(int level, int patch, int face);
  bool has(int level, int patch, int face) const {
    return level < static_cast<int>(index_.size()) && index_[level].count(key(patch, face)) > 0;
  }
  int reflux_one(mesh::Mesh& mesh, Register& r, Real inv_dx) const;

  int rank_ = 0;
  std::vector<int> flux_vars_;  // pool variable of each flux field
  int nflux_ = 0;
  std::vector<std::vector<Register>> registers_;  // [level]
  // [level]: where each patch's registers begin in registers_[level] (a patch's are
  // consecutive), and one past the last: reflux runs patches in parallel.
  std::vector<std::vector<int>> patch_runs_;
  std::vector<std::unordered_map<long long, int>> index_;
};

}  // namespace tessera::exec
