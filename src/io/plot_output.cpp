#include "tessera/io/plot_output.hpp"

#include "tessera/core/version.hpp"

namespace tessera::io {

PlotFile make_plot_file(const mesh::Mesh& m, const physics::Model& model,
                        const std::string& problem, int cycle, double time,
                        const std::string& parameters) {
  const auto& geo = m.geometry();
  PlotFile f;
  f.problem = problem;
  f.cycle = cycle;
  f.time = time;
  f.domain_min = geo.xmin;
  f.domain_max = geo.xmax;
  f.root_cells = geo.root_cells;
  f.block_size = mesh::kPatchSize;
  f.max_level = m.num_levels() - 1;
  f.variables = {"rho", "press", "vel1", "vel2", "vel3"};
  f.parameters = parameters;
  f.gamma = model.params().adiabatic.gamma;
  f.code_version = version_string();
  std::vector<int> leaves;
  // Canonical order: the same file whatever the history of the pool's slots.
  for (const int p : m.canonical_order())
    if (m.patch(p).is_leaf()) leaves.push_back(p);
  const std::size_t nb = leaves.size(), nc = mesh::kPatchCells;
  f.values.resize(f.variables.size() * nb * nc);
  for (std::size_t b = 0; b < nb; ++b) {
    const auto& meta = m.patch(leaves[b]);
    PlotBlock blk;
    blk.level = meta.level;
    blk.dx = m.dx(meta.level);
    for (int d = 0; d < 3; ++d) {
      blk.location[d] = meta.corner[d] / mesh::kPatchSize;
      blk.xmin[d] = geo.xmin[d] + meta.corner[d] * blk.dx;
    }
    f.blocks.push_back(blk);
    const Real* u = m.current(leaves[b]);
    for (std::size_t c = 0; c < nc; ++c) {
      Real w[kernels::kMaxPassiveScalars + 5];
      model.to_primitive(u + c, nc, w);
      const Real vals[5] = {w[0], w[4], w[1], w[2], w[3]};
      for (std::size_t v = 0; v < 5; ++v) f.values[(v * nb + b) * nc + c] = vals[v];
    }
  }
  return f;
}

}  // namespace tessera::io
