#include "tessera/mesh/mesh.hpp"

#include <algorithm>

#include "tessera/core/error.hpp"

namespace tessera::mesh {

namespace {

// Interleaves the bits of (x, y, z): groups close on this curve are close in space,
// which keeps neighbour data in cache and gives the later MPI decomposition its order
// (space-filling curve, as in Zabelok, Arslanbekov & Kolobov 2015).
std::uint64_t morton_key(std::uint32_t x, std::uint32_t y, std::uint32_t z) {
  std::uint64_t key = 0;
  for (int b = 0; b < 21; ++b) {
    key |= std::uint64_t((x >> b) & 1u) << (3 * b);
    key |= std::uint64_t((y >> b) & 1u) << (3 * b + 1);
    key |= std::uint64_t((z >> b) & 1u) << (3 * b + 2);
  }
  return key;
}

}  // namespace

Mesh::Mesh(const Geometry& geometry, int nvar) : geometry_(geometry), nvar_(nvar) {
  std::array<int, 3> ng{};
  for (int d = 0; d < 3; ++d) {
    if (geometry.root_cells[d] <= 0 || geometry.root_cells[d] % (2 * kPatchSize) != 0)
      throw Error(ErrorKind::kInput, "mesh.nx must be positive multiples of 16");
    ng[d] = geometry.root_cells[d] / (2 * kPatchSize);
  }
  std::vector<std::array<int, 3>> group_coords;
  for (int z = 0; z < ng[2]; ++z)
    for (int y = 0; y < ng[1]; ++y)
      for (int x = 0; x < ng[0]; ++x) group_coords.push_back({x, y, z});
  std::sort(group_coords.begin(), group_coords.end(), [](const auto& a, const auto& b) {
    return morton_key(a[0], a[1], a[2]) < morton_key(b[0], b[1], b[2]);
  });
  groups_.resize(1);
  for (const auto& gc : group_coords) {
    groups_[0].push_back(num_patches());
    for (int c = 0; c < kFamilySize; ++c) {
      PatchMeta m;
      const std::array<int, 3> pc = {2 * gc[0] + (c & 1), 2 * gc[1] + ((c >> 1) & 1),
                                     2 * gc[2] + ((c >> 2) & 1)};
      for (int d = 0; d < 3; ++d) m.corner[d] = pc[d] * kPatchSize;
      lookup_[key(0, pc)] = num_patches();
      patches_.push_back(m);
    }
  }
  link_neighbours();
  for (auto& slot : pool_) slot.assign(patches_.size() * patch_reals(), Real(0));
}

std::uint64_t Mesh::key(int level, std::array<int, 3> pc) {
  return (std::uint64_t(level) << 60) | (std::uint64_t(pc[2]) << 40) |
         (std::uint64_t(pc[1]) << 20) | std::uint64_t(pc[0]);
}

std::array<int, 3> Mesh::level_cells(int level) const {
  std::array<int, 3> n{};
  for (int d = 0; d < 3; ++d) n[d] = geometry_.root_cells[d] << level;
  return n;
}

int Mesh::find_patch(int level, std::array<int, 3> pc) const {
  const auto cells = level_cells(level);
  for (int d = 0; d < 3; ++d) {
    const int np = cells[d] / kPatchSize;
    if (pc[d] < 0 || pc[d] >= np) {
      if (!geometry_.periodic(d)) return kNoPatch;
      pc[d] = ((pc[d] % np) + np) % np;
    }
  }
  auto it = lookup_.find(key(level, pc));
  return it == lookup_.end() ? kNoPatch : it->second;
}

void Mesh::link_neighbours() {
  for (auto& m : patches_) {
    const std::array<int, 3> pc = {m.corner[0] / kPatchSize, m.corner[1] / kPatchSize,
                                   m.corner[2] / kPatchSize};
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
          m.neighbour[neighbour_index(dx, dy, dz)] =
              find_patch(m.level, {pc[0] + dx, pc[1] + dy, pc[2] + dz});
  }
}

long long Mesh::num_leaf_cells() const {
  long long n = 0;
  for (const auto& m : patches_)
    if (m.is_leaf()) n += kPatchCells;
  return n;
}

std::array<double, 3> Mesh::cell_center(int p, int i, int j, int k) const {
  const auto& m = patches_[p];
  const double h = dx(m.level);
  const int idx[3] = {i, j, k};
  std::array<double, 3> x{};
  for (int d = 0; d < 3; ++d) x[d] = geometry_.xmin[d] + (m.corner[d] + idx[d] + 0.5) * h;
  return x;
}

}  // namespace tessera::mesh
