// The field registry: every variable the patch pool holds, with what the mesh, the
// pipeline and the outputs do with it (docs/architecture.md, "Field registry"). Mesh,
// prepare, prolongation, restriction, flux registers, physical boundaries, checkpoints and
// plot files read these declarations; none of them knows which physics made the fields.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/admissible.hpp"
#include "tessera/core/real.hpp"

namespace tessera::mesh {

// How fine data are made from coarse data (new patches and coarse-fine ghost zones).
enum class Prolongation {
  kLimitedLinear,  // conservative, minmod-limited linear (Schive et al. 2010 §2.1)
  kInjection,      // every child takes the parent's value (conservative, first order)
  kLinear,         // unlimited central slopes: conservative, second order where the field is smooth
                   // (the potential, whose coarse-fine ghost values are the Dirichlet boundary of a
                   // refined level's Poisson solve; limited slopes would be first order at extrema)
};

struct FieldInfo {
  std::string name;            // as plot files write it (Athena++ names: rho, vel1, press, r0, ...)
  int time_levels = 2;         // 2: old and new state, interpolated in time for a finer level's
                               // ghost zones; 1: one state, updated in place, carried across steps
  bool flux_corrected = true;  // refluxed at coarse-fine faces (conserved densities)
  bool restricted = true;      // replaced by the average of the children on a refined patch
  Prolongation prolongation = Prolongation::kLimitedLinear;
  // 0, 1 or 2 when the field is that component of a vector (momentum, magnetic field): its
  // sign flips at a reflecting wall normal to that direction. -1: a scalar.
  int vector_component = -1;
  bool checkpointed = true;  // written to checkpoints (what a bitwise restart needs)
  bool plotted = true;       // written to plot files (as the physics' primitive form)
  // The plot-file dataset that holds it: "prim" (rho, press, vel1..3, scalars, ...) or "B"
  // (Bcc1..3), as Athena++ writes MHD runs. A dataset's fields are consecutive in the
  // plot order.
  std::string plot_dataset = "prim";
};

// Whether one cell's state is physically admissible (kernels/admissible.hpp). Prolongation
// falls back to injection for a coarse cell whose limited-linear children are not
// (mesh/prolongation.hpp), and refluxing withholds a correction that would make a cell so.
using AdmissibleState = kernels::AdmissibleState;

// Fields in pool order: field i is variable i of every patch ([patch][var][z][y][x]).
class FieldRegistry {
 public:
  FieldRegistry() = default;
  // plot_order: the plotted fields in the order plot files list them (Athena++ writes
  // rho, press, vel1, vel2, vel3, then r0, r1, ...); empty: pool order.
  explicit FieldRegistry(std::vector<FieldInfo> fields, std::vector<int> plot_order = {})
      : fields_(std::move(fields)), plot_order_(std::move(plot_order)) {
    if (plot_order_.empty()) plot_order_ = select([](const FieldInfo& f) { return f.plotted; });
  }

  int size() const { return static_cast<int>(fields_.size()); }
  const FieldInfo& operator[](int i) const { return fields_[i]; }
  const std::vector<FieldInfo>& all() const { return fields_; }
  // Index of the field called `name`, or -1.
  int find(const std::string& name) const {
    for (int i = 0; i < size(); ++i)
      if (fields_[i].name == name) return i;
    return -1;
  }
  // Indices of the fields with a property, in pool order.
  template <class Pred>
  std::vector<int> select(Pred pred) const {
    std::vector<int> out;
    for (int i = 0; i < size(); ++i)
      if (pred(fields_[i])) out.push_back(i);
    return out;
  }
  const std::vector<int>& plot_order() const { return plot_order_; }
  std::vector<int> flux_corrected() const {
    return select([](const FieldInfo& f) { return f.flux_corrected; });
  }
  const AdmissibleState& admissible() const { return admissible_; }
  void set_admissible(AdmissibleState check) { admissible_ = check; }

 private:
  std::vector<FieldInfo> fields_;
  std::vector<int> plot_order_;
  AdmissibleState admissible_;
};

}  // namespace tessera::mesh
