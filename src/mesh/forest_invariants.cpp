// Forest::check_invariants (mesh/forest.hpp): the structure's invariants checked from
// scratch against the coordinate lookup, by the mesh tests and by runs that verify their
// mesh after every regrid (Simulation::set_verify_mesh, the AMR regression tests).
#include <string>

#include "forest_internal.hpp"
#include "tessera/core/error.hpp"
#include "tessera/mesh/forest.hpp"

namespace tessera::mesh {

using detail::coord_text;
using detail::opposite;

namespace {

[[noreturn]] void invariant_failed(const std::string& what) {
  throw Error(ErrorKind::kInternal, "mesh invariant violated: " + what);
}

}  // namespace

void Forest::check_invariants() const {
  if (lookup_.size() != families_.size() || links_.size() != families_.size() * 27 ||
      child_.size() != std::size_t(root_patches_) + families_.size() * kFamilySize)
    invariant_failed("the lookup table holds " + std::to_string(lookup_.size()) +
                     " refined families, the links " + std::to_string(links_.size() / 27) +
                     " and the records " + std::to_string(families_.size()) + ", the forest " +
                     std::to_string((child_.size() - std::size_t(root_patches_)) / kFamilySize));
  if (root_coords_.size() * kFamilySize != std::size_t(root_patches_) ||
      root_index_.size() != root_coords_.size() || num_levels() < 1 ||
      groups_[0].size() * kFamilySize != std::size_t(root_patches_))
    invariant_failed("the root level's tables do not match its " +
                     std::to_string(root_patches_ / kFamilySize) + " families");
  for (std::size_t g = 0; g < groups_[0].size(); ++g)
    if (groups_[0][g] != static_cast<int>(g) * kFamilySize)
      invariant_failed("the root's families are not the forest's first patches, in order");
  for (int level = 0; level < num_levels(); ++level) {
    if (groups_[level].empty()) invariant_failed("level " + std::to_string(level) + " is empty");
    for (std::size_t i = 1; i < groups_[level].size(); ++i)
      if (curve_key(groups_[level][i - 1]) >= curve_key(groups_[level][i]))
        invariant_failed("families of level " + std::to_string(level) +
                         " are not in canonical (Morton) order");
  }
  for (int level = 0; level < num_levels(); ++level)
    for (int g : groups_[level]) {
      const PatchCoord base = patch(g).coord();
      for (int c = 0; c < kFamilySize; ++c) {
        const PatchMeta m = patch(g + c);
        const PatchCoord want = {base[0] + (c & 1), base[1] + ((c >> 1) & 1),
                                 base[2] + ((c >> 2) & 1)};
        if (m.level != level || m.coord() != want || m.parent != patch(g).parent ||
            (c == 0 && base[0] % 2 + base[1] % 2 + base[2] % 2 != 0))
          invariant_failed("family at " + coord_text(level, base) + " is not complete");
        if (level > 0 &&
            (patch(m.parent).first_child != g ||
             patch(m.parent).coord() != PatchCoord{base[0] / 2, base[1] / 2, base[2] / 2}))
          invariant_failed("parent link of " + coord_text(level, m.coord()));
        if (!m.is_leaf() && patch(m.first_child).parent != g + c)
          invariant_failed("child link of " + coord_text(level, m.coord()));
      }
    }
  for (int p = 0; p < num_patches(); ++p) {
    const PatchMeta m = patch(p);
    if (find_patch(m.level, m.coord()) != p)
      invariant_failed("lookup of " + coord_text(m.level, m.coord()) + " does not find it");
    for (int n = 0; n < 27; ++n) {
      const int q = neighbour_patch(p, n);
      const PatchCoord pc = m.coord();
      if (q != find_patch(m.level, {pc[0] + n % 3 - 1, pc[1] + (n / 3) % 3 - 1, pc[2] + n / 9 - 1}))
        invariant_failed("neighbour link " + std::to_string(n) + " of " + coord_text(m.level, pc) +
                         " is stale");
      if (p % kFamilySize != 0) continue;
      // The family's links, both ways.
      const int f = family_neighbour(p, n);
      if (f != find_patch(m.level, {pc[0] + 2 * (n % 3 - 1), pc[1] + 2 * ((n / 3) % 3 - 1),
                                    pc[2] + 2 * (n / 9 - 1)}))
        invariant_failed("family link " + std::to_string(n) + " of " + coord_text(m.level, pc) +
                         " is stale");
      if (f != kNoPatch && family_neighbour(f, opposite(n)) != p)
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
      if (wrap(m.level, pc) && neighbour_patch(p, n) == kNoPatch)
        invariant_failed("proper nesting: refined " + coord_text(m.level, m.coord()) +
                         " lacks a neighbour on its own level");
    }
  }
  if (flags_.size() != std::size_t(num_patches()) / kFamilySize)
    invariant_failed("the family flags are not one per family");
  for (int level = 0; level < num_levels(); ++level)
    for (const int g : groups_[level])
      if (flags_[g / kFamilySize] != compute_flags(g))
        invariant_failed("the flags (sides, coarse blocks) of " +
                         coord_text(level, patch(g).coord()) + " are stale");
}

}  // namespace tessera::mesh
