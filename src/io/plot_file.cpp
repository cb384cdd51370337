// Plot-file writer: the Athena++ .athdf layout, so yt's athena_pp frontend reads Tessera output
// with no reader of its own, plus the XDMF 2 companion that ParaView and VisIt open.
#include "tessera/io/plot_file.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <locale>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/core/error.hpp"

namespace tessera::io {
namespace {

// ---------------------------------------------------------------------------------------------
// HDF5 plumbing

// The floating-point type of the data (and of the coordinates, as Athena++ does): the native
// Real, so a single-precision build writes float without a conversion pass.
hid_t real_type() {
  return std::is_same_v<Real, double> ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT;
}

// Owns one HDF5 identifier and closes it with the matching H5?close, so that every exit
// path, exceptions included, releases it. close() reports the status where it matters.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept
      : id_(std::exchange(other.id_, H5I_INVALID_HID)), closer_(other.closer_) {}
  Handle& operator=(Handle&&) = delete;
  ~Handle() {
    if (id_ >= 0) closer_(id_);
  }
  hid_t get() const { return id_; }
  herr_t close() { return id_ >= 0 ? closer_(std::exchange(id_, H5I_INVALID_HID)) : 0; }

 private:
  hid_t id_;
  Closer closer_;
};

// HDF5 prints its error stack to stderr by default; the writer reports errors through
// tessera::Error instead, so printing is off while it runs and restored afterwards (other
// code of the process may rely on the default).
class QuietHdf5Errors {
 public:
  QuietHdf5Errors() {
    saved_ok_ = H5Eget_auto2(H5E_DEFAULT, &func_, &data_) >= 0;
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  QuietHdf5Errors(const QuietHdf5Errors&) = delete;
  QuietHdf5Errors& operator=(const QuietHdf5Errors&) = delete;
  ~QuietHdf5Errors() {
    if (saved_ok_) H5Eset_auto2(H5E_DEFAULT, func_, data_);
  }

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
  bool saved_ok_ = false;
};

// Walking downward ends at the function that detected the error, whose description is
// the informative one ("unable to open file: name = ..., errno = 2, ...").
herr_t keep_innermost(unsigned, const H5E_error2_t* error, void* out) {
  if (error->desc != nullptr && error->desc[0] != '\0') {
    *static_cast<std::string*>(out) = error->desc;
  }
  return 0;
}

// Creates the .athdf; every failure becomes Error(kIo) naming the final path and the step.
class Hdf5Writer {
 public:
  explicit Hdf5Writer(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& step) const {
    // Must run before any other HDF5 call, which would clear the error stack.
    std::string detail;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, keep_innermost, &detail);
    std::string message = "cannot write plot file '" + path_ + "': " + step + " failed";
    if (!detail.empty()) message += " (HDF5: " + detail + ")";
    throw Error(ErrorKind::kIo, message);
  }
  Handle own(hid_t id, Handle::Closer closer, const std::string& step) const {
    if (id < 0) fail(step);
    return Handle(id, closer);
  }
  void check(herr_t status, const std::string& step) const {
    if (status < 0) fail(step);
  }

  Handle dataspace(const std::vector<hsize_t>& dims) const {
    if (dims.empty()) return own(H5Screate(H5S_SCALAR), H5Sclose, "H5Screate");
    return own(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose,
               "H5Screate_simple");
  }

  // Fixed-length, null-terminated strings of `length` characters: yt decodes the attributes
  // as bytes (attrs["Coordinates"].decode()), which h5py only returns for fixed-length types.
  Handle string_type(std::size_t length) const {
    Handle type = own(H5Tcopy(H5T_C_S1), H5Tclose, "H5Tcopy");
    check(H5Tset_size(type.get(), length + 1), "H5Tset_size");
    check(H5Tset_strpad(type.get(), H5T_STR_NULLTERM), "H5Tset_strpad");
    return type;
  }

  // `dims` empty: a scalar attribute.
  void attribute(hid_t loc, const char* name, hid_t file_type, hid_t mem_type,
                 const std::vector<hsize_t>& dims, const void* data) const {
    const std::string step = std::string("writing attribute '") + name + "'";
    Handle space = dataspace(dims);
    Handle attr = own(H5Acreate2(loc, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                      H5Aclose, step);
    check(H5Awrite(attr.get(), mem_type, data), step);
    check(attr.close(), step);
  }
  void string_attribute(hid_t loc, const char* name, const std::string& value) const {
    Handle type = string_type(value.size());
    attribute(loc, name, type.get(), type.get(), {}, value.c_str());
  }
  void string_array_attribute(hid_t loc, const char* name,
                              const std::vector<std::string>& values) const {
    std::size_t length = 0;
    for (const std::string& v : values) length = std::max(length, v.size());
    // One zero-filled slot of length + 1 bytes per string, the layout of a fixed-length array.
    std::vector<char> packed(values.size() * (length + 1), '\0');
    for (std::size_t n = 0; n < values.size(); ++n) {
      std::copy(values[n].begin(), values[n].end(), packed.begin() + n * (length + 1));
    }
    Handle type = string_type(length);
    attribute(loc, name, type.get(), type.get(), {values.size()}, packed.data());
  }

  void dataset(hid_t loc, const char* name, hid_t file_type, hid_t mem_type,
               const std::vector<hsize_t>& dims, const void* data) const {
    const std::string step = std::string("writing dataset '") + name + "'";
    Handle space = dataspace(dims);
    Handle set =
        own(H5Dcreate2(loc, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
            H5Dclose, step);
    check(H5Dwrite(set.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), step);
    check(set.close(), step);
  }

 private:
  std::string path_;
};

// ---------------------------------------------------------------------------------------------
// Files and names

// error_number 0 (a stream that failed without setting errno) gives no misleading "Success".
[[noreturn]] void fail_io(const std::string& path, const std::string& step, int error_number) {
  throw Error(ErrorKind::kIo,
              "cannot write plot file '" + path + "': " + step + " failed (" +
                  (error_number != 0 ? std::strerror(error_number) : "stream error") + ")");
}

// Removes a temporary file unless it was renamed into place, so that a failed write leaves
// neither a partial final file nor a stray .tmp behind.
class TempFile {
 public:
  explicit TempFile(std::string name) : name_(std::move(name)) {}
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    // unlink, not remove(): never deletes a directory that happens to have this name.
    if (!committed_) ::unlink(name_.c_str());
  }
  const std::string& name() const { return name_; }

  // fsync before rename: otherwise a system crash soon after the rename can leave the final
  // name pointing at an empty or truncated file on common file systems.
  void commit(const std::string& final_name, const std::string& path_for_messages) {
    const int fd = ::open(name_.c_str(), O_RDONLY);
    if (fd < 0) fail_io(path_for_messages, "opening '" + name_ + "' to sync it", errno);
    const bool synced = ::fsync(fd) == 0;
    const int sync_errno = errno;
    ::close(fd);
    if (!synced) fail_io(path_for_messages, "fsync of '" + name_ + "'", sync_errno);
    if (std::rename(name_.c_str(), final_name.c_str()) != 0) {
      fail_io(path_for_messages, "renaming '" + name_ + "' to '" + final_name + "'", errno);
    }
    committed_ = true;
  }

 private:
  std::string name_;
  bool committed_ = false;
};

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
  if (plot.values.size() != plot.variables.size() * plot.blocks.size() * cells) {
    fail("values holds " + std::to_string(plot.values.size()) + " entries, expected " +
         std::to_string(plot.variables.size() * plot.blocks.size() * cells));
  }
  for (const PlotBlock& block : plot.blocks) {
    if (block.level < 0 || block.level > plot.max_level) {
      fail("block level " + std::to_string(block.level) +
           " outside [0, max_level = " + std::to_string(plot.max_level) + "]");
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The two files

void write_athdf(const std::string& path, const std::string& tmp_name, const PlotFile& plot) {
  const Hdf5Writer w(path);
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
  Handle file = w.own(H5Fcreate(tmp_name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose,
                      "creating '" + tmp_name + "'");
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
  const int num_variables = static_cast<int>(plot.variables.size());
  w.attribute(f, "NumVariables", H5T_STD_I32BE, H5T_NATIVE_INT, {1}, &num_variables);
  w.string_array_attribute(f, "DatasetNames", {"prim"});
  w.string_array_attribute(f, "VariableNames", plot.variables);
  // Tessera's own provenance, ignored by Athena++ readers.
  w.string_attribute(f, "Problem", plot.problem);
  w.string_attribute(f, "Parameters", plot.parameters);
  w.attribute(f, "Gamma", H5T_IEEE_F64BE, H5T_NATIVE_DOUBLE, {}, &plot.gamma);
  w.string_attribute(f, "CodeVersion", plot.code_version);
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

  // values is already [var][block][z][y][x], Athena++'s order: written as is, no copy.
  w.dataset(f, "prim", real_type(), real_type(), {plot.variables.size(), nblocks, n, n, n},
            plot.values.data());

  w.check(H5Fflush(f, H5F_SCOPE_GLOBAL), "H5Fflush");
  w.check(file.close(), "H5Fclose");
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
  const std::size_t nvar = plot.variables.size();
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
    for (std::size_t v = 0; v < nvar; ++v) {
      out << "    <Attribute Name=\"" << xml_escape(plot.variables[v]) << "\" Center=\"Cell\">\n"
          << "      <DataItem ItemType=\"HyperSlab\" Dimensions=\"" << n << ' ' << n << ' ' << n
          << "\">\n"
          << "        <DataItem Dimensions=\"3 5\" NumberType=\"Int\"> " << v << ' ' << b
          << " 0 0 0 1 1 1 1 1 1 1 " << n << ' ' << n << ' ' << n << " </DataItem>\n"
          << "        <DataItem Dimensions=\"" << nvar << ' ' << nblocks << ' ' << n << ' ' << n
          << ' ' << n << "\" " << real_item << " Format=\"HDF\"> " << h5 << ":/prim </DataItem>\n"
          << "      </DataItem>\n"
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

void write_plot_file(const std::string& path, const PlotFile& plot) {
  validate(path, plot);
  const QuietHdf5Errors quiet;
  // The .athdf goes into place first, so a visible .xdmf never refers to a missing file.
  TempFile athdf(path + ".tmp");
  TempFile xdmf(path + ".xdmf.tmp");
  write_athdf(path, athdf.name(), plot);
  write_xdmf(path, xdmf.name(), plot);
  athdf.commit(path, path);
  xdmf.commit(path + ".xdmf", path + ".xdmf");
}

}  // namespace tessera::io
