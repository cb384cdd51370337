// Plot-file writer: the Athena++ .athdf layout, so yt's athena_pp frontend reads Tessera output
// with no reader of its own, plus the XDMF 2 companion that ParaView and VisIt open.
#include "tessera/io/plot_file.hpp"

#include <cerrno>
#include <fstream>
#include <locale>
#include <optional>
#include <string>
#include <vector>

#include "src/io/hdf5_util.hpp"
#include "tessera/core/error.hpp"

namespace tessera::io {
namespace {

// ---------------------------------------------------------------------------------------------
// Files and names

using detail::Handle;
using detail::real_type;
using detail::TempFile;

[[noreturn]] void fail_io(const std::string& path, const std::string& step, int error_number) {
  detail::fail_io("plot file", path, step, error_number);
}

std::string base_name(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A PlotFile that does not describe itself consistently is a bug of the caller, not an I/O
// problem; checked before any file is created so that nothing is left behind.
void validate(const std::string& path, const PlotFile& plot) {
  auto fail = [&](const std::string& what) {
    throw Error(ErrorKind::kInternal, "cannot write plot file '" + path + "': " + what);
  };
  if (plot.block_size <= 0) fail("block_size must be positive");
  if (plot.blocks.empty()) fail("no mesh blocks");
  if (plot.variables.empty()) fail("no variables");
  for (const std::string& name : plot.variables) {
    if (name.empty()) fail("empty variable name");
  }
  const std::size_t cells = static_cast<std::size_t>(plot.block_size) * plot.block_size *
                            static_cast<std::size_t>(plot.block_size);
  const std::size_t held = plot.own_blocks ? plot.own_blocks->size() : plot.blocks.size();
  if (plot.values.size() != plot.variables.size() * held * cells) {
    fail("values holds " + std::to_string(plot.values.size()) + " entries, expected " +
         std::to_string(plot.variables.size() * held * cells));
  }
  if (plot.own_blocks)
    for (std::size_t i = 0; i < plot.own_blocks->size(); ++i)
      if ((*plot.own_blocks)[i] >= plot.blocks.size() ||
          (i > 0 && (*plot.own_blocks)[i] <= (*plot.own_blocks)[i - 1]))
        fail("own_blocks must name blocks in increasing order");
  if (!plot.datasets.empty()) {
    if (plot.datasets.size() != plot.variables.size())
      fail("datasets names " + std::to_string(plot.datasets.size()) + " variables, expected " +
           std::to_string(plot.variables.size()));
    for (std::size_t v = 1; v < plot.datasets.size(); ++v)
      for (std::size_t u = 0; u + 1 < v; ++u)
        if (plot.datasets[u] == plot.datasets[v] && plot.datasets[v - 1] != plot.datasets[v])
          fail("the variables of dataset '" + plot.datasets[v] + "' are not consecutive");
  }
  for (const PlotBlock& block : plot.blocks) {
    if (block.level < 0 || block.level > plot.max_level) {
      fail("block level " + std::to_string(block.level) +
           " outside [0, max_level = " + std::to_string(plot.max_level) + "]");
    }
  }
}

// The datasets of a plot file in order: name, first variable, number of variables.
struct DatasetGroup {
  std::string name;
  std::size_t first = 0;
  std::size_t count = 0;
};

std::vector<DatasetGroup> dataset_groups(const PlotFile& plot) {
  std::vector<DatasetGroup> groups;
  for (std::size_t v = 0; v < plot.variables.size(); ++v) {
    const std::string& name = plot.datasets.empty() ? std::string("prim") : plot.datasets[v];
    if (groups.empty() || groups.back().name != name) groups.push_back({name, v, 0});
    ++groups.back().count;
  }
  return groups;
}

// ---------------------------------------------------------------------------------------------
// The two files

void write_athdf(const std::string& path, const std::string& tmp_name, const PlotFile& plot,
                 const Collective* c) {
  detail::Hdf5File w("write plot file", path);
  w.set_collective(c);
  const std::size_t nblocks = plot.blocks.size();
  const std::size_t n = static_cast<std::size_t>(plot.block_size);

  // The HDF5 1.8 file format, at least and at most: attributes over 64 KiB (a long
  // Parameters text) need its dense attribute storage, which the default 1.6-compatible
  // object headers cannot hold, and capping it keeps the files readable by tools still built
  // on HDF5 1.8 (VisIt's bundled library among them) whatever HDF5 Tessera is built with.
  // STRONG close: H5Fclose closes whatever is still open instead of keeping the file open.
  Handle fapl = w.own(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "H5Pcreate");
  w.check(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_V18), "H5Pset_libver_bounds");
  w.check(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), "H5Pset_fclose_degree");
  if (c != nullptr) detail::set_collective_access(fapl.get());
  const hid_t created = H5Fcreate(tmp_name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get());
  w.check_agreed(created < 0 ? -1 : 0, "creating '" + tmp_name + "'");
  Handle file(created, H5Fclose);
  const hid_t f = file.get();

  // Root attributes, with the names, file types and shapes of Athena++ (yt reads them).
  const int num_cycles = plot.cycle;
  w.attribute(f, "NumCycles", H5T_STD_I32BE, H5T_NATIVE_INT, {}, &num_cycles);
  w.attribute(f, "Time", H5T_IEEE_F64BE, H5T_NATIVE_DOUBLE, {}, &plot.time);
  w.string_attribute(f, "Coordinates", "cartesian");
  const char* root_grid_names[3] = {"RootGridX1", "RootGridX2", "RootGridX3"};
  for (int d = 0; d < 3; ++d) {
    // min, max and the geometric cell-size ratio; 1 keeps yt on its uniform-grid index.
    const double range[3] = {plot.domain_min[d], plot.domain_max[d], 1.0};
    w.attribute(f, root_grid_names[d], H5T_IEEE_F64BE, H5T_NATIVE_DOUBLE, {3}, range);
  }
  w.attribute(f, "RootGridSize", H5T_STD_I32BE, H5T_NATIVE_INT, {3}, plot.root_cells.data());
  const int num_blocks = static_cast<int>(nblocks);
  w.attribute(f, "NumMeshBlocks", H5T_STD_I32BE, H5T_NATIVE_INT, {}, &num_blocks);
  const int block_dims[3] = {plot.block_size, plot.block_size, plot.block_size};
  w.attribute(f, "MeshBlockSize", H5T_STD_I32BE, H5T_NATIVE_INT, {3}, block_dims);
  w.attribute(f, "MaxLevel", H5T_STD_I32BE, H5T_NATIVE_INT, {}, &plot.max_level);
  const std::vector<DatasetGroup> groups = dataset_groups(plot);
  std::vector<int> num_variables;
  std::vector<std::string> dataset_names;
  for (const DatasetGroup& g : groups) {
    num_variables.push_back(static_cast<int>(g.count));
    dataset_names.push_back(g.name);
  }
  w.attribute(f, "NumVariables", H5T_STD_I32BE, H5T_NATIVE_INT, {groups.size()},
              num_variables.data());
  w.string_array_attribute(f, "DatasetNames", dataset_names);
  w.string_array_attribute(f, "VariableNames", plot.variables);
  // Tessera's own provenance, ignored by Athena++ readers.
  w.string_attribute(f, "Problem", plot.problem);
  w.string_attribute(f, "Parameters", plot.parameters);
  w.attribute(f, "Gamma", H5T_IEEE_F64BE, H5T_NATIVE_DOUBLE, {}, &plot.gamma);
  w.attribute(f, "UnitLength", H5T_IEEE_F64BE, H5T_NATIVE_DOUBLE, {}, &plot.units_cgs[0]);
  w.attribute(f, "UnitMass", H5T_IEEE_F64BE, H5T_NATIVE_DOUBLE, {}, &plot.units_cgs[1]);
  w.attribute(f, "UnitTime", H5T_IEEE_F64BE, H5T_NATIVE_DOUBLE, {}, &plot.units_cgs[2]);
  w.attribute(f, "MeanMolecularWeight", H5T_IEEE_F64BE, H5T_NATIVE_DOUBLE, {}, &plot.mu);
  w.string_attribute(f, "CodeVersion", plot.code_version);
  if (!plot.run_id.empty()) w.string_attribute(f, "RunId", plot.run_id);
  w.string_attribute(f, "Precision", kPrecisionName);

  // Block metadata. Levels count from the root level, as in Athena++.
  std::vector<int> levels(nblocks);
  std::vector<std::int64_t> locations(3 * nblocks);
  std::vector<Real> faces[3], centres[3];
  for (int d = 0; d < 3; ++d) {
    faces[d].resize(nblocks * (n + 1));
    centres[d].resize(nblocks * n);
  }
  for (std::size_t b = 0; b < nblocks; ++b) {
    const PlotBlock& block = plot.blocks[b];
    levels[b] = block.level;
    for (int d = 0; d < 3; ++d) {
      locations[3 * b + d] = block.location[d];
      // Each position from the corner (not by accumulation) so faces of neighbouring
      // blocks agree to rounding and the last face is the block's upper corner.
      for (std::size_t i = 0; i <= n; ++i) {
        faces[d][b * (n + 1) + i] = static_cast<Real>(block.xmin[d] + i * block.dx);
      }
      for (std::size_t i = 0; i < n; ++i) {
        centres[d][b * n + i] = static_cast<Real>(block.xmin[d] + (i + 0.5) * block.dx);
      }
    }
  }
  w.dataset(f, "Levels", H5T_STD_I32BE, H5T_NATIVE_INT, {nblocks}, levels.data());
  w.dataset(f, "LogicalLocations", H5T_STD_I64BE, H5T_NATIVE_INT64, {nblocks, 3}, locations.data());
  const char* face_names[3] = {"x1f", "x2f", "x3f"};
  const char* centre_names[3] = {"x1v", "x2v", "x3v"};
  for (int d = 0; d < 3; ++d) {
    w.dataset(f, face_names[d], real_type(), real_type(), {nblocks, n + 1}, faces[d].data());
    w.dataset(f, centre_names[d], real_type(), real_type(), {nblocks, n}, centres[d].data());
  }

  // values is already [var][block][z][y][x], Athena++'s order: each dataset is written from
  // its slice, no copy. Collectively each rank writes its runs of blocks (first, count).
  std::vector<std::pair<hsize_t, hsize_t>> runs;
  if (plot.own_blocks) {
    for (const std::size_t b : *plot.own_blocks) {
      if (!runs.empty() && runs.back().first + runs.back().second == b)
        ++runs.back().second;
      else
        runs.push_back({b, 1});
    }
  }
  if (plot.own_blocks) {
    const std::size_t per_var = plot.own_blocks->size() * n * n * n;
    for (const DatasetGroup& g : groups)
      w.block_dataset(f, g.name.c_str(), real_type(), real_type(), {g.count, nblocks, n, n, n},
                      runs, plot.values.data() + g.first * per_var);
  } else {
    const std::size_t per_var = nblocks * n * n * n;
    for (const DatasetGroup& g : groups)
      w.dataset(f, g.name.c_str(), real_type(), real_type(), {g.count, nblocks, n, n, n},
                plot.values.data() + g.first * per_var);
  }

  // Each cell's refinement level, for the .xdmf (ParaView and VisIt colour by it): one byte
  // per cell; Athena++ readers, which read the datasets of DatasetNames, pass it by.
  {
    const std::size_t cells = std::size_t(n) * n * n;
    std::vector<std::uint8_t> cell_levels;
    if (plot.own_blocks) {
      for (const std::size_t b : *plot.own_blocks)
        cell_levels.insert(cell_levels.end(), cells, std::uint8_t(plot.blocks[b].level));
      w.block_dataset(f, "CellLevels", H5T_STD_U8LE, H5T_NATIVE_UINT8, {1, nblocks, n, n, n}, runs,
                      cell_levels.data());
    } else {
      for (std::size_t b = 0; b < nblocks; ++b)
        cell_levels.insert(cell_levels.end(), cells, std::uint8_t(plot.blocks[b].level));
      w.dataset(f, "CellLevels", H5T_STD_U8LE, H5T_NATIVE_UINT8, {1, nblocks, n, n, n},
                cell_levels.data());
    }
  }

  w.check_agreed(H5Fflush(f, H5F_SCOPE_GLOBAL), "H5Fflush");
  w.check_agreed(file.close(), "H5Fclose");
}

// Athena++'s .athdf.xdmf: a spatial collection of one rectilinear grid per block, each a view
// (hyperslab) into the .athdf, which is named relative to the .xdmf so the pair can move.
void write_xdmf(const std::string& path, const std::string& tmp_name, const PlotFile& plot) {
  errno = 0;  // ofstream does not promise to set errno: no stale code in the message
  std::ofstream out(tmp_name, std::ios::out | std::ios::trunc | std::ios::binary);
  if (!out) fail_io(path + ".xdmf", "creating '" + tmp_name + "'", errno);
  out.imbue(std::locale::classic());  // '.' as decimal point whatever the global locale
  out.precision(17);                  // round-trips a double

  const std::string h5 = xml_escape(base_name(path));
  const std::size_t nblocks = plot.blocks.size();
  const std::vector<DatasetGroup> groups = dataset_groups(plot);
  const int n = plot.block_size;
  // XDMF's default is 4-byte floats; doubles must say so or readers convert them wrongly.
  const std::string real_item =
      std::string("NumberType=\"Float\" Precision=\"") + (sizeof(Real) == 8 ? "8" : "4") + "\"";

  out << "<?xml version=\"1.0\" ?>\n"
      << "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
      << "<Xdmf Version=\"2.0\">\n"
      << "<Domain>\n"
      << "<Grid Name=\"Mesh\" GridType=\"Collection\" CollectionType=\"Spatial\">\n"
      << "  <Time Value=\"" << plot.time << "\"/>\n";
  // Vectors: (name, its components' dataset and index), where all three are plotted.
  std::vector<std::pair<std::string, std::vector<std::pair<const DatasetGroup*, std::size_t>>>>
      vectors;
  for (const auto& [name, prefix] : {std::pair{"velocity", "vel"}, {"magnetic_field", "Bcc"}}) {
    std::vector<std::pair<const DatasetGroup*, std::size_t>> components;
    for (int c = 1; c <= 3; ++c)
      for (const DatasetGroup& g : groups)
        for (std::size_t i = 0; i < g.count; ++i)
          if (plot.variables[g.first + i] == prefix + std::to_string(c))
            components.push_back({&g, i});
    if (components.size() == 3) vectors.push_back({name, components});
  }
  const char* faces[3] = {"x1f", "x2f", "x3f"};
  for (std::size_t b = 0; b < nblocks; ++b) {
    out << "  <Grid Name=\"MeshBlock" << b << "\" GridType=\"Uniform\">\n"
        << "    <Topology TopologyType=\"3DRectMesh\" NumberOfElements=\"" << n + 1 << ' ' << n + 1
        << ' ' << n + 1 << "\"/>\n"
        << "    <Geometry GeometryType=\"VXVYVZ\">\n";
    for (const char* face : faces) {
      out << "      <DataItem ItemType=\"HyperSlab\" Dimensions=\"" << n + 1 << "\">\n"
          << "        <DataItem Dimensions=\"3 2\" NumberType=\"Int\"> " << b << " 0 1 1 1 "
          << n + 1 << " </DataItem>\n"
          << "        <DataItem Dimensions=\"" << nblocks << ' ' << n + 1 << "\" " << real_item
          << " Format=\"HDF\"> " << h5 << ":/" << face << " </DataItem>\n"
          << "      </DataItem>\n";
    }
    out << "    </Geometry>\n";
    // Block b's cells of variable i of a dataset of `count` variables.
    auto slab = [&](std::size_t i, std::size_t count, const std::string& dataset,
                    const std::string& type, const char* indent) {
      out << indent << "<DataItem ItemType=\"HyperSlab\" Dimensions=\"" << n << ' ' << n << ' ' << n
          << "\">\n"
          << indent << "  <DataItem Dimensions=\"3 5\" NumberType=\"Int\"> " << i << ' ' << b
          << " 0 0 0 1 1 1 1 1 1 1 " << n << ' ' << n << ' ' << n << " </DataItem>\n"
          << indent << "  <DataItem Dimensions=\"" << count << ' ' << nblocks << ' ' << n << ' '
          << n << ' ' << n << "\" " << type << " Format=\"HDF\"> " << h5 << ":/"
          << xml_escape(dataset) << " </DataItem>\n"
          << indent << "</DataItem>\n";
    };
    for (const DatasetGroup& g : groups)
      for (std::size_t i = 0; i < g.count; ++i) {
        out << "    <Attribute Name=\"" << xml_escape(plot.variables[g.first + i])
            << "\" Center=\"Cell\">\n";
        slab(i, g.count, g.name, real_item, "      ");
        out << "    </Attribute>\n";
      }
    out << "    <Attribute Name=\"level\" Center=\"Cell\">\n";
    slab(0, 1, "CellLevels", "NumberType=\"UChar\" Precision=\"1\"", "      ");
    out << "    </Attribute>\n";
    // The velocity and the magnetic field as vectors (glyphs and stream lines without a
    // calculator): their three components joined.
    for (const auto& [name, components] : vectors) {
      out << "    <Attribute Name=\"" << name << "\" AttributeType=\"Vector\" Center=\"Cell\">\n"
          << "      <DataItem ItemType=\"Function\" Function=\"JOIN($0, $1, $2)\" Dimensions=\""
          << n << ' ' << n << ' ' << n << " 3\">\n";
      for (const auto& [group, i] : components)
        slab(i, group->count, group->name, real_item, "        ");
      out << "      </DataItem>\n"
          << "    </Attribute>\n";
    }
    out << "  </Grid>\n";
  }
  out << "</Grid>\n"
      << "</Domain>\n"
      << "</Xdmf>\n";
  out.close();
  if (!out) fail_io(path + ".xdmf", "writing '" + tmp_name + "'", errno);
}

}  // namespace

std::string plot_file_name(const std::string& dir, const std::string& problem, int index) {
  if (index < 0) {
    throw Error(ErrorKind::kInternal, "plot file index must be >= 0, got " + std::to_string(index));
  }
  std::string number = std::to_string(index);
  if (number.size() < 5) number.insert(0, 5 - number.size(), '0');
  std::string name = problem + "." + number + ".athdf";
  if (dir.empty()) return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

void write_plot_file(const std::string& path, const PlotFile& plot, const Collective* c) {
  validate(path, plot);
  if (c != nullptr && !plot.own_blocks)
    throw Error(ErrorKind::kInternal, "a collective plot file needs own_blocks");
  if (c == nullptr && plot.own_blocks && plot.own_blocks->size() != plot.blocks.size())
    throw Error(ErrorKind::kInternal, "a plot file of one process needs every block's values");
  const detail::QuietHdf5Errors quiet;
  const double cells = static_cast<double>(plot.block_size) * plot.block_size * plot.block_size;
  detail::on_root(c, [&] {
    detail::check_free_space("plot file", path,
                             static_cast<double>(plot.variables.size()) * cells *
                                     static_cast<double>(plot.blocks.size()) * sizeof(Real) +
                                 static_cast<double>(plot.blocks.size()) * 64);
  });
  // Rank 0 owns the temporaries (removes them on failure, renames them); the .athdf goes
  // into place first, so a visible .xdmf never refers to a missing file.
  const std::string athdf_name = detail::collective_temp_name(c, path);
  const std::string xdmf_name = detail::collective_temp_name(c, path, ".xdmf");
  std::optional<TempFile> athdf, xdmf;
  if (c == nullptr || c->comm->rank() == 0) {
    athdf.emplace(athdf_name, "plot file");
    xdmf.emplace(xdmf_name, "plot file");
  }
  write_athdf(path, athdf_name, plot, c);
  detail::on_root(c, [&] {
    write_xdmf(path, xdmf->name(), plot);
    athdf->commit(path);
    xdmf->commit(path + ".xdmf");
  });
}

}  // namespace tessera::io
