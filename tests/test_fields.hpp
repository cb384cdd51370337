// Field registries for tests of the mesh on its own: `n` scalar fields f0, f1, ... with
// FieldInfo's defaults (two time levels, refluxed, restricted, limited linear prolongation).
#pragma once

#include <string>
#include <vector>

#include "tessera/mesh/fields.hpp"

namespace tessera::mesh::testing {

inline FieldRegistry plain_fields(int n) {
  std::vector<FieldInfo> fields(n);
  for (int v = 0; v < n; ++v) (fields[v].name = "f") += std::to_string(v);
  return FieldRegistry(std::move(fields));
}

}  // namespace tessera::mesh::testing
