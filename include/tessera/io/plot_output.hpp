// Builds a plot file (the plotted fields of every leaf patch, in primitive form) from the
// mesh.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tessera/core/real.hpp"
#include "tessera/io/plot_file.hpp"
#include "tessera/mesh/mesh.hpp"

namespace tessera::io {

// Converts one cell's conserved variables, u[v * stride] for every field v of the mesh in
// pool order, into their primitive values w[v], in pool order (the physics supplies it).
using ToPrimitive = std::function<void(const Real* u, int stride, Real* w)>;

// A field computed from the mesh for plot files only (e.g. div B): compute(patch, out)
// fills out[kPatchCells] for a leaf patch. Written after the registry's fields, in
// `dataset` (Athena++ writes user-defined output variables in "uov").
struct DerivedField {
  std::string name;
  std::string dataset = "uov";
  std::function<void(int patch, Real* out)> compute;
};

// The plotted fields (FieldInfo::plotted) in the registry's plot_order, under their names
// and in their datasets, converted cell by cell by `to_primitive`, then the derived fields;
// `gamma` is recorded in the file. With `owns` (a rank of a collective write), every leaf
// is a block of the file but only the values of the leaves it owns are formed (own_blocks).
PlotFile make_plot_file(const mesh::Mesh& mesh, const ToPrimitive& to_primitive, double gamma,
                        const std::string& problem, int cycle, double time,
                        const std::string& parameters,
                        const std::vector<DerivedField>& derived = {},
                        const std::function<bool(int patch)>& owns = nullptr);

}  // namespace tessera::io
