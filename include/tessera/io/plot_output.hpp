// Builds a plot file (primitive variables of every leaf patch) from the mesh.
#pragma once

#include <string>

#include "tessera/io/plot_file.hpp"
#include "tessera/mesh/mesh.hpp"
#include "tessera/physics/model.hpp"

namespace tessera::io {

PlotFile make_plot_file(const mesh::Mesh& mesh, const physics::Model& model,
                        const std::string& problem, int cycle, double time,
                        const std::string& parameters);

}  // namespace tessera::io
