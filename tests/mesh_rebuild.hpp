// A mesh rebuilt from scratch for a new hierarchy, as every regrid did before regrids
// became incremental: families that existed are copied, new ones are prolonged. The
// reference of the incremental-regrid test and the baseline of tessera_regrid_scaling.
#pragma once

#include <algorithm>

#include "tessera/mesh/mesh.hpp"
#include "tessera/mesh/prolongation.hpp"

namespace tessera::mesh::testing {

inline Mesh rebuild(const Mesh& old, const Hierarchy& next) {
  Mesh m(old.geometry(), old.fields(), next);
  CoarseBox scratch;
  for (int level = 0; level < m.num_levels(); ++level)
    for (int g : m.groups(level)) {
      const int o = old.find_patch(level, m.patch(g).coord());
      if (o == kNoPatch) {
        prolong_family(m, g, scratch);
        continue;
      }
      for (int c = 0; c < kFamilySize; ++c)
        std::copy_n(old.current(o + c), old.patch_reals(), m.current(g + c));
    }
  return m;
}

}  // namespace tessera::mesh::testing
