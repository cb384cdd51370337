#include "tessera/exec/flux_register.hpp"

#include <algorithm>

#include "kernels/group_layout.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"

namespace tessera::exec {

namespace {

using mesh::kPatchSize;
constexpr int kFacePatchCells = kPatchSize * kPatchSize;

// The same-level patch beside patch p's face (0..5: -x, +x, -y, +y, -z, +z), or a negative
// block code (neighbour_table.hpp).
int face_neighbour(const mesh::Mesh& m, int p, int face) {
  int off[3] = {0, 0, 0};
  off[face / 2] = face % 2 ? 1 : -1;
  return m.neighbours().neighbour(p, off[0], off[1], off[2]);
}

int child_pos(int c, int d) {
  return (c >> d) & 1;
}

}  // namespace

void FluxRegisters::build(const mesh::Mesh& m, const parallel::Partition& part, int rank) {
  rank_ = rank;
  flux_vars_ = m.fields().flux_corrected();
  nflux_ = static_cast<int>(flux_vars_.size());
  registers_.assign(m.num_levels(), {});
  index_.assign(m.num_levels(), {});
  for (int level = 0; level + 1 < m.num_levels(); ++level)
    for (int g : m.groups(level))
      for (int c = 0; c < mesh::kFamilySize; ++c) {
        const int p = g + c;
        if (!m.patch(p).is_leaf()) continue;
        for (int face = 0; face < 6; ++face) {
          const int q = face_neighbour(m, p, face);
          if (q < 0 || m.patch(q).is_leaf()) continue;
          const int owner = part.owner(p), fine_owner = part.owner(m.patch(q).first_child);
          index_[level][key(p, face)] = static_cast<int>(registers_[level].size());
          registers_[level].push_back({p, face, std::vector<Real>(nflux_ * kFacePatchCells, 0),
                                       std::vector<Real>(nflux_ * kFacePatchCells, -Real(0)), owner,
                                       fine_owner});
        }
      }
  patch_runs_.assign(m.num_levels(), {});
  for (std::size_t level = 0; level < registers_.size(); ++level) {
    const auto& regs = registers_[level];
    for (std::size_t i = 0; i < regs.size(); ++i)
      if (i == 0 || regs[i].patch != regs[i - 1].patch)
        patch_runs_[level].push_back(static_cast<int>(i));
    patch_runs_[level].push_back(static_cast<int>(regs.size()));
  }
}

FluxRegisters::Register* FluxRegisters::find(int level, int patch, int face) {
  if (level >= static_cast<int>(index_.size())) return nullptr;
  const auto it = index_[level].find(key(patch, face));
  return it == index_[level].end() ? nullptr : &registers_[level][it->second];
}

void FluxRegisters::close_group(const mesh::Mesh& m, int first_patch, const Real* planes,
                                double dt) {
  const int level = m.patch(first_patch).level;
  const Real rdt = Real(dt);
  constexpr int g = kernels::kGroupSize;
  auto plane_value = [&](int dir, int plane, int v, int a, int b) {
    return planes[(kernels::flux_plane(dir, plane) * nflux_ + v) * kernels::kFaceCells + a * g + b];
  };
  // Coarse side: this group's leaf patches with registered faces.
  for (int c = 0; c < mesh::kFamilySize; ++c) {
    for (int face = 0; face < 6; ++face) {
      Register* r = find(level, first_patch + c, face);
      if (!r) continue;
      const int dir = face / 2, side = face % 2;
      const int pos[3] = {child_pos(c, 0) * kPatchSize, child_pos(c, 1) * kPatchSize,
                          child_pos(c, 2) * kPatchSize};
      int a0, b0;
      kernels::register_transverse(dir, pos, a0, b0);
      const int plane = child_pos(c, dir) + side;
      for (int v = 0; v < nflux_; ++v)
        for (int a = 0; a < kPatchSize; ++a)
          for (int b = 0; b < kPatchSize; ++b)
            r->data[(v * kPatchSize + a) * kPatchSize + b] -=
                rdt * plane_value(dir, plane, v, a0 + a, b0 + b);
    }
  }
  if (level == 0) return;
  // Fine side: outer faces of the group whose neighbour is a coarser leaf patch.
  const int parent = m.patch(first_patch).parent;
  for (int face = 0; face < 6; ++face) {
    const int q = face_neighbour(m, parent, face);
    if (q < 0 || !m.patch(q).is_leaf()) continue;
    Register* r = find(level - 1, q, face ^ 1);
    if (!r) continue;
    const int dir = face / 2, plane = 2 * (face % 2);
    for (int v = 0; v < nflux_; ++v)
      for (int a = 0; a < kPatchSize; ++a)
        for (int b = 0; b < kPatchSize; ++b) {
          const Real sum = plane_value(dir, plane, v, 2 * a, 2 * b) +
                           plane_value(dir, plane, v, 2 * a, 2 * b + 1) +
                           plane_value(dir, plane, v, 2 * a + 1, 2 * b) +
                           plane_value(dir, plane, v, 2 * a + 1, 2 * b + 1);
          r->fine[(v * kPatchSize + a) * kPatchSize + b] += Real(0.25) * rdt * sum;
        }
  }
}

void FluxRegisters::group_slots(const mesh::Mesh& m, int first_patch, int coarse[48],
                                int fine[6]) const {
  const int level = m.patch(first_patch).level;
  const auto at = [&](int l, int patch, int face) {
    if (l >= static_cast<int>(index_.size())) return -1;
    const auto it = index_[l].find(key(patch, face));
    return it == index_[l].end() ? -1 : it->second;
  };
  for (int c = 0; c < mesh::kFamilySize; ++c)
    for (int face = 0; face < 6; ++face) coarse[6 * c + face] = at(level, first_patch + c, face);
  for (int face = 0; face < 6; ++face) {
    fine[face] = -1;
    if (level == 0) continue;
    const int q = face_neighbour(m, m.patch(first_patch).parent, face);
    if (q >= 0 && m.patch(q).is_leaf()) fine[face] = at(level - 1, q, face ^ 1);
  }
}

void FluxRegisters::fine_routes(int level, int ranks, std::vector<std::vector<int>>& send,
                                std::vector<std::vector<int>>& receive) const {
  send.assign(ranks, {});
  receive.assign(ranks, {});
  if (level >= static_cast<int>(registers_.size())) return;
  const auto& regs = registers_[level];
  for (std::size_t i = 0; i < regs.size(); ++i) {
    const Register& r = regs[i];
    if (r.owner != rank_ && r.fine_owner == rank_) send.at(r.owner).push_back(int(i));
    if (r.owner == rank_ && r.fine_owner != rank_) receive.at(r.fine_owner).push_back(int(i));
  }
}

bool FluxRegisters::touches(const mesh::Mesh& m, int first_patch) const {
  const int level = m.patch(first_patch).level;
  for (int c = 0; c < mesh::kFamilySize; ++c)
    for (int face = 0; face < 6; ++face)
      if (has(level, first_patch + c, face)) return true;
  if (level == 0) return false;
  const int parent = m.patch(first_patch).parent;
  for (int face = 0; face < 6; ++face) {
    const int q = face_neighbour(m, parent, face);
    if (q >= 0 && m.patch(q).is_leaf() && has(level - 1, q, face ^ 1)) return true;
  }
  return false;
}

void FluxRegisters::finish_fine_step(int level, parallel::Comm* comm) {
  if (level >= static_cast<int>(registers_.size())) return;
  auto& regs = registers_[level];
  // This rank's own registers: the step's sum added once.
  for (Register& r : regs)
    if (r.owner == rank_ && r.fine_owner == rank_) {
      for (std::size_t k = 0; k < r.data.size(); ++k) r.data[k] += r.fine[k];
      std::fill(r.fine.begin(), r.fine.end(), -Real(0));
    }
  if (!comm || comm->size() == 1) return;
  const std::size_t n = regs.empty() ? 0 : regs.front().data.size();
  // Both sides list the registers in the same (build) order.
  std::vector<std::vector<int>> out, in;
  fine_routes(level, comm->size(), out, in);
  std::vector<std::vector<double>> send(comm->size());
  for (int q = 0; q < comm->size(); ++q)
    for (const int i : out[q]) {
      Register& r = regs[i];
      send[q].insert(send[q].end(), r.fine.begin(), r.fine.end());
      std::fill(r.fine.begin(), r.fine.end(), -Real(0));
    }
  const auto got = comm->exchange(std::move(send));
  for (int q = 0; q < comm->size(); ++q) {
    if (got[q].size() != in[q].size() * n)
      throw Error(ErrorKind::kInternal,
                  strprintf("flux registers of level %d: rank %d sent %zu values for %zu", level, q,
                            got[q].size(), in[q].size() * n));
    for (std::size_t j = 0; j < in[q].size(); ++j)
      for (std::size_t k = 0; k < n; ++k) regs[in[q][j]].data[k] += Real(got[q][j * n + k]);
  }
}

long long FluxRegisters::reflux(mesh::Mesh& m, int level) {
  if (level >= static_cast<int>(registers_.size())) return 0;
  const Real inv_dx = Real(1 / m.dx(level));
  auto& regs = registers_[level];
  const auto& runs = patch_runs_[level];
  // Patches in parallel; the faces of one patch (which share edge cells) in order by one
  // thread, so the sums are the same for any thread count.
  const int nruns = static_cast<int>(runs.size()) - 1;
  finish_fine_step(level, nullptr);  // a caller that stepped the finer level itself
  long long withheld = 0;
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : withheld)
  for (int run = 0; run < nruns; ++run)
    for (int i = runs[run]; i < runs[run + 1]; ++i)
      if (regs[i].owner == rank_) withheld += reflux_one(m, regs[i], inv_dx);
  return withheld;
}

int FluxRegisters::reflux_one(mesh::Mesh& m, Register& r, Real inv_dx) const {
  Real* u = m.current(r.patch);
  const int dir = r.face / 2, side = r.face % 2;
  const Real sign = side ? Real(-1) : Real(1);
  const mesh::AdmissibleState& admissible = m.fields().admissible();
  std::vector<Real> before(nflux_);
  int withheld = 0;
  for (int a = 0; a < kPatchSize; ++a)
    for (int b = 0; b < kPatchSize; ++b) {
      const int cell = kernels::register_cell(dir, side, a, b);
      for (int v = 0; v < nflux_; ++v) {
        Real& value = u[flux_vars_[v] * mesh::kPatchCells + cell];
        Real& reg = r.data[(v * kPatchSize + a) * kPatchSize + b];
        before[v] = value;
        value += sign * inv_dx * reg;
        reg = 0;
      }
      // A correction that would leave the cell unphysical is withheld, as GAMER's flux
      // fix-up does (its Flu_FixUp_Flux skips such cells): ahead of a strong shock into cold
      // gas, the difference of the coarse and fine energy fluxes can exceed a coarse cell's
      // internal energy. The cell keeps its admissible state from the coarse step, and the
      // run loses conservation by that correction (counted; the log reports it).
      if (admissible && !admissible(u + cell, mesh::kPatchCells)) {
        for (int v = 0; v < nflux_; ++v) u[flux_vars_[v] * mesh::kPatchCells + cell] = before[v];
        ++withheld;
      }
    }
  return withheld;
}

}  // namespace tessera::exec
