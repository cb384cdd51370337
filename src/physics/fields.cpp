#include "tessera/physics/fields.hpp"

namespace tessera::physics {

using mesh::FieldInfo;
using mesh::FieldRegistry;

namespace {

FieldInfo field(std::string name, int component = -1) {
  FieldInfo f;
  f.name = std::move(name);
  f.vector_component = component;
  return f;
}

void add_scalars(std::vector<FieldInfo>& fields, int passive_scalars) {
  for (int s = 0; s < passive_scalars; ++s) {
    std::string name = "r";  // appended, not "r" + ...: GCC 12 warns about the latter (-Wrestrict)
    fields.push_back(field(name += std::to_string(s)));
  }
}

}  // namespace

FieldRegistry hydro_fields(bool energy, int passive_scalars) {
  // Pool order is the solver's (kernels/physics_*.hpp): density, momentum, energy, then
  // the scalars. Every field is a conserved density with two time levels, refluxed,
  // restricted and prolonged with limited slopes.
  std::vector<FieldInfo> fields = {field("rho"), field("vel1", 0), field("vel2", 1),
                                   field("vel3", 2)};
  if (energy) fields.push_back(field("press"));
  add_scalars(fields, passive_scalars);
  // Plot files list the primitive variables as Athena++ does: rho, press, vel1..3, r0, ...
  std::vector<int> plot_order = {0};
  if (energy) plot_order.push_back(4);
  for (int v = 1; v < static_cast<int>(fields.size()); ++v)
    if (v != 4 || !energy) plot_order.push_back(v);
  return FieldRegistry(std::move(fields), std::move(plot_order));
}

FieldRegistry mhd_fields(int passive_scalars) {
  // Pool order is the solver's (kernels/physics_mhd.hpp): density, momentum, energy, B,
  // psi, then the scalars; all conserved, two time levels, refluxed (the B fluxes are the
  // electric field, so refluxing conserves the magnetic flux through coarse-fine faces),
  // restricted and prolonged with limited slopes. Limited slopes of E, rho v and B can
  // leave a child's E below its kinetic plus magnetic energy (negative pressure, most
  // likely at low beta): the model's admissibility check then makes the prolongation of
  // that coarse cell injection for every field, conservative and as positive as the
  // parent (physics::Model::fields).
  std::vector<FieldInfo> fields = {field("rho"),     field("vel1", 0), field("vel2", 1),
                                   field("vel3", 2), field("press"),   field("Bcc1", 0),
                                   field("Bcc2", 1), field("Bcc3", 2), field("psi")};
  // Moved in, not assigned from a literal: GCC 12 warns about the latter (-Wrestrict).
  for (int d = 5; d < 8; ++d) fields[d].plot_dataset = std::string(1, 'B');
  add_scalars(fields, passive_scalars);
  // Athena++'s order: "prim" = rho, press, vel1..3, (scalars, psi); then "B" = Bcc1..3.
  std::vector<int> plot_order = {0, 4, 1, 2, 3};
  for (int v = 9; v < static_cast<int>(fields.size()); ++v) plot_order.push_back(v);
  plot_order.push_back(8);
  for (int d = 5; d < 8; ++d) plot_order.push_back(d);
  return FieldRegistry(std::move(fields), std::move(plot_order));
}

}  // namespace tessera::physics
