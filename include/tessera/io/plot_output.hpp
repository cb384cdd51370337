// Builds a plot file (the plotted fields of every leaf patch, in primitive form) from the
// mesh.
#pragma once

#include <functional>
#include <string>

#include "tessera/core/real.hpp"
#include "tessera/io/plot_file.hpp"
#include "tessera/mesh/mesh.hpp"

namespace tessera::io {

// Converts one cell's conserved variables, u[v * stride] for every field v of the mesh in
// pool order, into their primitive values w[v], in pool order (the physics supplies it).
using ToPrimitive = std::function<void(const Real* u, int stride, Real* w)>;

// The plotted fields (FieldInfo::plotted) in the registry's plot_order, under their names,
// converted cell by cell by `to_primitive`; `gamma` is recorded in the file.
PlotFile make_plot_file(const mesh::Mesh& mesh, const ToPrimitive& to_primitive, double gamma,
                        const std::string& problem, int cycle, double time,
                        const std::string& parameters);

}  // namespace tessera::io
