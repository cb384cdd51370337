#include "tessera/mesh/mesh.hpp"

#include <algorithm>
#include <string>

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

std::string coord_text(int level, PatchCoord pc) {
  return "level " + std::to_string(level) + " patch (" + std::to_string(pc[0]) + ", " +
         std::to_string(pc[1]) + ", " + std::to_string(pc[2]) + ")";
}

[[noreturn]] void invariant_failed(const std::string& what) {
  throw Error(ErrorKind::kInternal, "mesh invariant violated: " + what);
}

}  // namespace

Mesh::Mesh(const Geometry& geometry, int nvar, const Hierarchy& refined)
    : geometry_(geometry), nvar_(nvar) {
  std::array<int, 3> ng{};
  for (int d = 0; d < 3; ++d) {
    if (geometry.root_cells[d] <= 0 || geometry.root_cells[d] % (2 * kPatchSize) != 0)
      throw Error(ErrorKind::kInput, "mesh.nx must be positive multiples of 16");
    ng[d] = geometry.root_cells[d] / (2 * kPatchSize);
  }
  if (static_cast<int>(refined.size()) + 1 > kMaxLevels)
    throw Error(ErrorKind::kInput,
                "at most " + std::to_string(kMaxLevels - 1) + " refinement levels are supported");
  std::vector<PatchCoord> group_coords;
  for (int z = 0; z < ng[2]; ++z)
    for (int y = 0; y < ng[1]; ++y)
      for (int x = 0; x < ng[0]; ++x) group_coords.push_back({x, y, z});
  std::sort(group_coords.begin(), group_coords.end(), [](const auto& a, const auto& b) {
    return morton_key(a[0], a[1], a[2]) < morton_key(b[0], b[1], b[2]);
  });
  groups_.resize(1);
  for (const auto& gc : group_coords) add_family(0, {2 * gc[0], 2 * gc[1], 2 * gc[2]}, kNoPatch);
  // Families of a level follow the order of their parents, which inherits the root's
  // Morton order level by level.
  for (std::size_t l = 0; l < refined.size(); ++l) {
    const int level = static_cast<int>(l) + 1;
    if (level - 1 >= num_levels() && !refined[l].empty())
      throw Error(ErrorKind::kInternal, "refining " + coord_text(level - 1, refined[l].front()) +
                                            ", which does not exist (level " +
                                            std::to_string(level - 1) + " is empty)");
    std::vector<std::pair<int, PatchCoord>> parents;
    for (const auto& pc : refined[l]) {
      const auto it = lookup_.find(key(level - 1, pc));
      if (it == lookup_.end())
        throw Error(ErrorKind::kInternal,
                    "refining " + coord_text(level - 1, pc) + ", which does not exist");
      parents.push_back({it->second, pc});
    }
    std::sort(parents.begin(), parents.end());
    parents.erase(std::unique(parents.begin(), parents.end()), parents.end());
    if (parents.empty()) continue;
    groups_.emplace_back();
    for (const auto& [parent, pc] : parents)
      add_family(level, {2 * pc[0], 2 * pc[1], 2 * pc[2]}, parent);
  }
  link_neighbours();
  for (auto& slot : pool_) slot.assign(patches_.size() * patch_reals(), Real(0));
  current_slot_.assign(groups_.size(), 0);
}

void Mesh::add_family(int level, PatchCoord first, int parent) {
  const int first_patch = num_patches();
  groups_[level].push_back(first_patch);
  if (parent != kNoPatch) patches_[parent].first_child = first_patch;
  for (int c = 0; c < kFamilySize; ++c) {
    PatchMeta m;
    m.level = level;
    m.parent = parent;
    const PatchCoord pc = {first[0] + (c & 1), first[1] + ((c >> 1) & 1),
                           first[2] + ((c >> 2) & 1)};
    for (int d = 0; d < 3; ++d) m.corner[d] = pc[d] * kPatchSize;
    lookup_[key(level, pc)] = num_patches();
    patches_.push_back(m);
  }
}

std::uint64_t Mesh::key(int level, PatchCoord pc) {
  return (std::uint64_t(level) << 60) | (std::uint64_t(pc[2]) << 40) |
         (std::uint64_t(pc[1]) << 20) | std::uint64_t(pc[0]);
}

std::array<int, 3> Mesh::level_cells(int level) const {
  std::array<int, 3> n{};
  for (int d = 0; d < 3; ++d) n[d] = geometry_.root_cells[d] << level;
  return n;
}

bool Mesh::wrap(int level, PatchCoord& pc) const {
  const auto cells = level_cells(level);
  for (int d = 0; d < 3; ++d) {
    const int np = cells[d] / kPatchSize;
    if (pc[d] < 0 || pc[d] >= np) {
      if (!geometry_.periodic(d)) return false;
      pc[d] = ((pc[d] % np) + np) % np;
    }
  }
  return true;
}

int Mesh::find_patch(int level, PatchCoord pc) const {
  if (level < 0 || level >= num_levels() || !wrap(level, pc)) return kNoPatch;
  auto it = lookup_.find(key(level, pc));
  return it == lookup_.end() ? kNoPatch : it->second;
}

void Mesh::link_neighbours() {
  for (auto& m : patches_) {
    const PatchCoord pc = m.coord();
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
          m.neighbour[neighbour_index(dx, dy, dz)] =
              find_patch(m.level, {pc[0] + dx, pc[1] + dy, pc[2] + dz});
  }
}

Hierarchy Mesh::hierarchy() const {
  Hierarchy h(std::max(0, num_levels() - 1));
  for (int level = 1; level < num_levels(); ++level)
    for (int g : groups_[level]) h[level - 1].push_back(patches_[patches_[g].parent].coord());
  return h;
}

long long Mesh::num_leaf_cells() const {
  long long n = 0;
  for (int level = 0; level < num_levels(); ++level) n += num_leaf_cells(level);
  return n;
}

long long Mesh::num_leaf_cells(int level) const {
  long long n = 0;
  for (int g : groups_[level])
    for (int c = 0; c < kFamilySize; ++c)
      if (patches_[g + c].is_leaf()) n += kPatchCells;
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

void Mesh::check_invariants() const {
  for (int level = 0; level < num_levels(); ++level)
    for (int g : groups_[level]) {
      const PatchCoord base = patches_[g].coord();
      for (int c = 0; c < kFamilySize; ++c) {
        const auto& m = patches_[g + c];
        const PatchCoord want = {base[0] + (c & 1), base[1] + ((c >> 1) & 1),
                                 base[2] + ((c >> 2) & 1)};
        if (m.level != level || m.coord() != want || m.parent != patches_[g].parent ||
            (c == 0 && base[0] % 2 + base[1] % 2 + base[2] % 2 != 0))
          invariant_failed("family at " + coord_text(level, base) + " is not complete");
        if (level > 0 &&
            (patches_[m.parent].first_child != g ||
             patches_[m.parent].coord() != PatchCoord{base[0] / 2, base[1] / 2, base[2] / 2}))
          invariant_failed("parent link of " + coord_text(level, m.coord()));
        if (!m.is_leaf() && patches_[m.first_child].parent != g + c)
          invariant_failed("child link of " + coord_text(level, m.coord()));
      }
    }
  for (int p = 0; p < num_patches(); ++p) {
    const auto& m = patches_[p];
    for (int n = 0; n < 27; ++n) {
      const int q = m.neighbour[n];
      if (q == kNoPatch) continue;
      const int dx = n % 3 - 1, dy = (n / 3) % 3 - 1, dz = n / 9 - 1;
      if (patches_[q].neighbour[neighbour_index(-dx, -dy, -dz)] != p)
        invariant_failed("neighbour links of " + coord_text(m.level, m.coord()) +
                         " are not symmetric");
    }
    // Proper nesting: a refined patch has every same-level neighbour that lies in the
    // domain, so its children's ghost zones and interpolation stencils find data one
    // level coarser at most.
    if (m.is_leaf()) continue;
    for (int n = 0; n < 27; ++n) {
      PatchCoord pc = m.coord();
      pc[0] += n % 3 - 1, pc[1] += (n / 3) % 3 - 1, pc[2] += n / 9 - 1;
      if (wrap(m.level, pc) && m.neighbour[n] == kNoPatch)
        invariant_failed("proper nesting: refined " + coord_text(m.level, m.coord()) +
                         " lacks a neighbour on its own level");
    }
  }
}

}  // namespace tessera::mesh
