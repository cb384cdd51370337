#include "tessera/mesh/fields.hpp"

namespace tessera::mesh {

FieldRegistry hydro_fields(bool energy, int passive_scalars) {
  std::vector<FieldInfo> f;
  f.push_back({"rho"});
  for (int d = 0; d < 3; ++d) {
    FieldInfo v{"vel" + std::to_string(d + 1)};
    v.vector_component = d;
    f.push_back(v);
  }
  if (energy) f.push_back({"press"});
  for (int i = 0; i < passive_scalars; ++i) f.push_back({"r" + std::to_string(i)});
  return FieldRegistry(std::move(f));
}

}  // namespace tessera::mesh
