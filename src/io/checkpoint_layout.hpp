// What the checkpoint writer (checkpoint.cpp) and reader (checkpoint_reader.cpp) share
// about the layout of the field data (docs/checkpoints.md).
#pragma once

#include <string>
#include <utility>

#include "tessera/core/error.hpp"
#include "tessera/mesh/mesh.hpp"

namespace tessera::io::detail {

// In a canonical mesh (Mesh::is_canonical: what a mesh built from its hierarchy is, and
// what Simulation makes it before writing) the patches of a level are contiguous, so each
// level's data is one slab of the pool: written and read with no copy.
inline std::pair<int, int> level_patch_range(const mesh::Mesh& m, int level) {
  if (!m.is_canonical())
    throw Error(ErrorKind::kInternal, "checkpoint of a mesh that is not in canonical order");
  const auto& groups = m.groups(level);
  if (groups.empty()) return {0, 0};
  return {groups.front(), static_cast<int>(groups.size()) * mesh::kFamilySize};
}

inline std::string level_name(const char* prefix, int level) {
  return std::string(prefix) + std::to_string(level);
}

}  // namespace tessera::io::detail
