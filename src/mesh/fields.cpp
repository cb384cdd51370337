#include "tessera/mesh/fields.hpp"

namespace tessera::mesh {

FieldRegistry hydro_fields(bool energy, int passive_scalars) {
  // Pool order is the solver's (kernels/hydro_state.hpp): density, momentum, energy, then
  // the scalars. Every field is a conserved density with two time levels, refluxed,
  // restricted and prolonged with limited slopes.
  auto field = [](std::string name, int component = -1) {
    FieldInfo f;
    f.name = std::move(name);
    f.vector_component = component;
    return f;
  };
  std::vector<FieldInfo> fields = {field("rho"), field("vel1", 0), field("vel2", 1),
                                   field("vel3", 2)};
  if (energy) fields.push_back(field("press"));
  for (int s = 0; s < passive_scalars; ++s) {
    std::string name = "r";  // appended, not "r" + ...: GCC 12 warns about the latter (-Wrestrict)
    fields.push_back(field(name += std::to_string(s)));
  }
  // Plot files list the primitive variables as Athena++ does: rho, press, vel1..3, r0, ...
  std::vector<int> plot_order = {0};
  if (energy) plot_order.push_back(4);
  for (int v = 1; v < static_cast<int>(fields.size()); ++v)
    if (v != 4 || !energy) plot_order.push_back(v);
  return FieldRegistry(std::move(fields), std::move(plot_order));
}

}  // namespace tessera::mesh
