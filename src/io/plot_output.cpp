#include "tessera/io/plot_output.hpp"

#include <vector>

#include "tessera/core/version.hpp"

namespace tessera::io {

PlotFile make_plot_file(const mesh::Mesh& m, const ToPrimitive& to_primitive, double gamma,
                        const std::string& problem, int cycle, double time,
                        const std::string& parameters, const std::vector<DerivedField>& derived,
                        const std::function<bool(int patch)>& owns) {
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
  const mesh::FieldRegistry& fields = m.fields();
  std::vector<int> plotted;
  for (const int v : fields.plot_order())
    if (fields[v].plotted) {
      plotted.push_back(v);
      f.variables.push_back(fields[v].name);
      f.datasets.push_back(fields[v].plot_dataset);
    }
  for (const DerivedField& d : derived) {
    f.variables.push_back(d.name);
    f.datasets.push_back(d.dataset);
  }
  f.parameters = parameters;
  f.gamma = gamma;
  f.code_version = version_string();
  std::vector<int> leaves;
  // Canonical order: the same file whatever the history of the pool's slots.
  for (const int p : m.canonical_order())
    if (m.patch(p).is_leaf()) leaves.push_back(p);
  std::vector<std::size_t> held;  // the blocks whose values are formed
  for (std::size_t b = 0; b < leaves.size(); ++b) {
    const auto& meta = m.patch(leaves[b]);
    PlotBlock blk;
    blk.level = meta.level;
    blk.dx = m.dx(meta.level);
    for (int d = 0; d < 3; ++d) {
      blk.location[d] = meta.corner[d] / mesh::kPatchSize;
      blk.xmin[d] = geo.xmin[d] + meta.corner[d] * blk.dx;
    }
    f.blocks.push_back(blk);
    if (!owns || owns(leaves[b])) held.push_back(b);
  }
  const std::size_t nb = held.size(), nc = mesh::kPatchCells, np = plotted.size();
  f.values.resize((np + derived.size()) * nb * nc);
  std::vector<Real> w(m.nvar());
  for (std::size_t b = 0; b < nb; ++b) {
    const int p = leaves[held[b]];
    const Real* u = m.current(p);
    for (std::size_t c = 0; c < nc; ++c) {
      to_primitive(u + c, static_cast<int>(nc), w.data());
      for (std::size_t i = 0; i < np; ++i) f.values[(i * nb + b) * nc + c] = w[plotted[i]];
    }
    for (std::size_t i = 0; i < derived.size(); ++i)
      derived[i].compute(p, f.values.data() + ((np + i) * nb + b) * nc);
  }
  if (owns) f.own_blocks = std::move(held);
  return f;
}

}  // namespace tessera::io
