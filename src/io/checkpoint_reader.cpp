// Checkpoint reader (layout: docs/checkpoints.md; the writer is checkpoint.cpp). It checks
// the format, its version, the precision, the fields and the shape of everything before it
// trusts a number; every dataset's Fletcher32 checksum and XXH3-64 digest are checked as it
// is read.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "src/io/checkpoint_layout.hpp"
#include "src/io/digest.hpp"
#include "src/io/hdf5_util.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/real.hpp"
#include "tessera/io/checkpoint.hpp"

namespace tessera::io {

using detail::Handle;
using detail::Hdf5File;
using detail::level_name;
using detail::level_patch_range;

namespace {

// Reading: the failing step becomes Error(kIo) ("cannot read checkpoint ..."), or kInput
// for a file that is readable but not what this build can continue from.
class Reader : public Hdf5File {
 public:
  // `digests`: the datasets carry Digest attributes (format version 2 on), checked on read;
  // `rows`: each the digest of its rows' digests (version 3 on; RowDigest), else of its
  // bytes.
  Reader(const std::string& path, bool digests, bool rows = false)
      : Hdf5File("read checkpoint", path), digests_(digests), rows_(rows) {}

  [[noreturn]] void incompatible(const std::string& what) const {
    throw Error(ErrorKind::kInput, "cannot use checkpoint '" + path() + "': " + what);
  }
  [[noreturn]] void corrupt(const std::string& what) const {
    throw Error(ErrorKind::kIo, "cannot read checkpoint '" + path() + "': " + what);
  }

  std::string string_attribute(hid_t loc, const char* name) const {
    const std::string step = std::string("reading attribute '") + name + "'";
    if (H5Aexists(loc, name) <= 0) corrupt(std::string("attribute '") + name + "' is missing");
    Handle attr = own(H5Aopen(loc, name, H5P_DEFAULT), H5Aclose, step);
    Handle type = own(H5Aget_type(attr.get()), H5Tclose, step);
    if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) != 0)
      corrupt(std::string("attribute '") + name + "' is not a fixed-length string");
    std::vector<char> buf(H5Tget_size(type.get()) + 1, '\0');
    check(H5Aread(attr.get(), type.get(), buf.data()), step);
    return std::string(buf.data());
  }

  // A one-dimensional array of fixed-length strings (string_array_attribute's layout).
  std::vector<std::string> string_array_attribute(hid_t loc, const char* name) const {
    const std::string step = std::string("reading attribute '") + name + "'";
    if (H5Aexists(loc, name) <= 0) corrupt(std::string("attribute '") + name + "' is missing");
    Handle attr = own(H5Aopen(loc, name, H5P_DEFAULT), H5Aclose, step);
    Handle type = own(H5Aget_type(attr.get()), H5Tclose, step);
    Handle space = own(H5Aget_space(attr.get()), H5Sclose, step);
    if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) != 0 ||
        H5Sget_simple_extent_ndims(space.get()) != 1)
      corrupt(std::string("attribute '") + name + "' is not an array of fixed-length strings");
    const std::size_t count = static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.get()));
    const std::size_t length = H5Tget_size(type.get());
    std::vector<char> buf(count * length + 1, '\0');
    check(H5Aread(attr.get(), type.get(), buf.data()), step);
    std::vector<std::string> out(count);
    for (std::size_t i = 0; i < count; ++i) {
      const char* text = buf.data() + i * length;
      out[i].assign(text, std::find(text, text + length, '\0'));
    }
    return out;
  }

  template <class T>
  T scalar_attribute(hid_t loc, const char* name, hid_t mem_type) const {
    const std::string step = std::string("reading attribute '") + name + "'";
    if (H5Aexists(loc, name) <= 0) corrupt(std::string("attribute '") + name + "' is missing");
    Handle attr = own(H5Aopen(loc, name, H5P_DEFAULT), H5Aclose, step);
    Handle space = own(H5Aget_space(attr.get()), H5Sclose, step);
    if (H5Sget_simple_extent_npoints(space.get()) != 1)
      corrupt(std::string("attribute '") + name + "' is not a single value");
    T value{};
    check(H5Aread(attr.get(), mem_type, &value), step);
    return value;
  }

  // Reads a checksummed dataset of exactly `dims` into `out` (converted to mem_type).
  void dataset(hid_t loc, const std::string& name, hid_t mem_type, const std::vector<hsize_t>& dims,
               void* out) const {
    Handle set = open_checked(loc, name, dims);
    hsize_t count = 1;
    for (hsize_t d : dims) count *= d;
    if (count == 0) return;
    if (H5Dread(set.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0) read_failed(name);
    const std::size_t bytes = static_cast<std::size_t>(count) * H5Tget_size(mem_type);
    const std::size_t rows = dims.empty() ? 1 : static_cast<std::size_t>(dims[0]);
    check_digest(
        set.get(), name,
        rows_ ? detail::rows_digest(out, rows, bytes / rows) : detail::digest64(out, bytes));
  }

  // Reads a checksummed dataset of exactly `dims` in slabs of at most `rows` along its
  // first dimension, in order, calling each(first row, rows, data) for each: every byte is
  // read and digested, but no more than a slab is held at a time (a rank of several keeps
  // only its own patches of a checkpoint).
  template <class F>
  void dataset_slabs(hid_t loc, const std::string& name, hid_t mem_type,
                     const std::vector<hsize_t>& dims, hsize_t rows, F&& each) const {
    const std::string step = "reading dataset '" + name + "'";
    Handle set = open_checked(loc, name, dims);
    hsize_t row_count = 1;
    for (std::size_t d = 1; d < dims.size(); ++d) row_count *= dims[d];
    if (dims.empty() || dims[0] * row_count == 0) return;
    const std::size_t row_bytes = static_cast<std::size_t>(row_count) * H5Tget_size(mem_type);
    std::vector<unsigned char> buf(static_cast<std::size_t>(std::min(rows, dims[0])) * row_bytes);
    Handle file_space = own(H5Dget_space(set.get()), H5Sclose, step);
    detail::StreamDigest digest;
    detail::RowDigest row_digest;
    for (hsize_t first = 0; first < dims[0]; first += rows) {
      std::vector<hsize_t> start(dims.size(), 0), count = dims;
      start[0] = first;
      count[0] = std::min(rows, dims[0] - first);
      Handle mem = own(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr),
                       H5Sclose, step);
      check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr,
                                count.data(), nullptr),
            step);
      if (H5Dread(set.get(), mem_type, mem.get(), file_space.get(), H5P_DEFAULT, buf.data()) < 0)
        read_failed(name);
      const std::size_t bytes = static_cast<std::size_t>(count[0]) * row_bytes;
      if (rows_)
        row_digest.add_rows(buf.data(), static_cast<std::size_t>(count[0]), row_bytes);
      else
        digest.update(buf.data(), bytes);
      each(first, count[0], static_cast<const void*>(buf.data()));
    }
    check_digest(set.get(), name, rows_ ? row_digest.value() : digest.value());
  }

 private:
  // Opens dataset `name`, checking that it exists, has exactly `dims` and carries its
  // Fletcher32 checksum.
  Handle open_checked(hid_t loc, const std::string& name, const std::vector<hsize_t>& dims) const {
    const std::string step = "reading dataset '" + name + "'";
    if (H5Lexists(loc, name.c_str(), H5P_DEFAULT) <= 0)
      corrupt("dataset '" + name + "' is missing");
    Handle set = own(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), H5Dclose, step);
    Handle space = own(H5Dget_space(set.get()), H5Sclose, step);
    const int rank = H5Sget_simple_extent_ndims(space.get());
    std::vector<hsize_t> have(std::max(rank, 0));
    if (rank < 0 || H5Sget_simple_extent_dims(space.get(), have.data(), nullptr) < 0) fail(step);
    if (have != dims) {
      auto text = [](const std::vector<hsize_t>& d) {
        std::string s;
        for (std::size_t i = 0; i < d.size(); ++i)
          s += (i ? " x " : "") + std::to_string(static_cast<unsigned long long>(d[i]));
        return s.empty() ? std::string("scalar") : s;
      };
      corrupt("dataset '" + name + "' has shape " + text(have) + ", expected " + text(dims));
    }
    Handle dcpl = own(H5Dget_create_plist(set.get()), H5Pclose, step);
    unsigned flags = 0, config = 0;
    std::size_t nelmts = 0;
    if (H5Pget_filter_by_id2(dcpl.get(), H5Z_FILTER_FLETCHER32, &flags, &nelmts, nullptr, 0,
                             nullptr, &config) < 0)
      corrupt("dataset '" + name + "' carries no Fletcher32 checksum");
    return set;
  }

  [[noreturn]] void read_failed(const std::string& name) const {
    const std::string detail = detail::hdf5_error_detail();
    corrupt("dataset '" + name + "' failed its checksum or could not be read" +
            (detail.empty() ? "" : " (HDF5: " + detail + ")"));
  }

  void check_digest(hid_t set, const std::string& name, std::uint64_t actual) const {
    if (!digests_) return;
    const auto stored = detail::parse_digest_text(string_attribute(set, "Digest"));
    if (!stored) corrupt("dataset '" + name + "' has a malformed Digest attribute");
    if (actual != *stored)
      corrupt("dataset '" + name + "' does not match its digest (stored " +
              detail::digest_text(*stored) + ", data " + detail::digest_text(actual) +
              "): its bytes changed after it was written");
  }

 public:
  template <class T>
  T one(hid_t loc, const std::string& name, hid_t mem_type) const {
    T value{};
    dataset(loc, name, mem_type, {1}, &value);
    return value;
  }

 private:
  bool digests_;
  bool rows_;
};

// The fields of a checkpoint written before /data carried FieldNames: hydrodynamics with
// total energy and no scalars (physics::hydro_fields(true, 0)).
const std::vector<std::string> kLegacyFields = {"rho", "vel1", "vel2", "vel3", "press"};

std::string name_list(const std::vector<std::string>& names) {
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + names[i];
  return "(" + s + ")";
}

// The reader of a checkpoint's datasets, checking the digests its format version carries.
Reader checked_reader(const CheckpointReader& c) {
  return Reader(c.path(), c.has_digests(), c.header().format_version >= 3);
}

// The NumLevels attribute, checked against what a mesh can hold.
int stored_levels(const Reader& r, hid_t f) {
  const int nlev = r.scalar_attribute<int>(f, "NumLevels", H5T_NATIVE_INT);
  if (nlev < 1 || nlev > mesh::kMaxLevels) r.corrupt(strprintf("NumLevels = %d", nlev));
  return nlev;
}

}  // namespace

CheckpointReader::CheckpointReader(std::string path) : path_(std::move(path)) {
  const detail::QuietHdf5Errors quiet;
  const Reader r(path_, false);
  require_checkpoint_file(path_);
  if (H5Fis_hdf5(path_.c_str()) <= 0)
    r.corrupt("not an HDF5 file, or a truncated one (HDF5: " + detail::hdf5_error_detail() + ")");
  file_ = H5Fopen(path_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file_ < 0)
    r.corrupt("the file cannot be opened: truncated or damaged (HDF5: " +
              detail::hdf5_error_detail() + ")");
  // A constructor that throws runs no destructor: the file is closed here, or it would stay
  // open (and could not be opened for writing) for the rest of the process.
  try {
    read_header();
  } catch (...) {
    H5Fclose(static_cast<hid_t>(file_));
    file_ = -1;
    throw;
  }
}

void CheckpointReader::read_header() {
  const Reader r(path_, false);
  const hid_t f = static_cast<hid_t>(file_);
  // H5Aexists fails (< 0) when the root object header fails its checksum: damage, not
  // another kind of file.
  const htri_t has_format = H5Aexists(f, "Format");
  if (has_format < 0)
    r.corrupt("its root object header cannot be read (HDF5: " + detail::hdf5_error_detail() + ")");
  if (has_format == 0 || r.string_attribute(f, "Format") != kCheckpointFormat)
    r.incompatible("not a Tessera checkpoint (a plot file or another program's HDF5 file?)");
  header_.format_version = r.scalar_attribute<int>(f, "FormatVersion", H5T_NATIVE_INT);
  header_.code_version = r.string_attribute(f, "CodeVersion");
  if (header_.format_version < 1 || header_.format_version > kCheckpointFormatVersion)
    r.incompatible(
        strprintf("checkpoint format version %d (written by Tessera %s); this "
                  "build reads versions 1 to %d",
                  header_.format_version, header_.code_version.c_str(), kCheckpointFormatVersion));
  header_.precision = r.string_attribute(f, "Precision");
  if (header_.precision != kPrecisionName)
    r.incompatible("written by a " + header_.precision + "-precision build; this build is " +
                   kPrecisionName + " precision (TESSERA_PRECISION): restart with a " +
                   header_.precision + "-precision build");
  header_.problem = r.string_attribute(f, "Problem");
  header_.parameters = r.string_attribute(f, "Parameters");
  // Version 1 (Tessera 0.1) had neither run identities nor digests; it is read as before.
  if (header_.format_version >= 2) header_.run_id = r.string_attribute(f, "RunId");
  const Reader checked = checked_reader(*this);
  header_.time = checked.one<double>(f, "state/time", H5T_NATIVE_DOUBLE);
  header_.step = checked.one<std::int64_t>(f, "state/step", H5T_NATIVE_INT64);
}

std::mutex& hdf5_mutex() {
  static std::mutex m;
  return m;
}

bool CheckpointReader::has_digests() const {
  return header_.format_version >= 2;
}

void CheckpointReader::verify_file_digest() const {
  if (has_digests() && !check_file_digest(path_))
    Reader(path_, true).corrupt("its digest block (the first 512 bytes) is damaged");
}

CheckpointReader::~CheckpointReader() {
  if (file_ >= 0) H5Fclose(static_cast<hid_t>(file_));
}

CheckpointState CheckpointReader::state() const {
  const detail::QuietHdf5Errors quiet;
  const Reader r = checked_reader(*this);
  const hid_t f = static_cast<hid_t>(file_);
  const int nlev = stored_levels(r, f);
  CheckpointState s;
  s.time = header_.time;
  s.step = header_.step;
  s.level_steps.resize(nlev);
  s.level_max_speed.resize(nlev);
  r.dataset(f, "state/level_steps", H5T_NATIVE_INT64, {hsize_t(nlev)}, s.level_steps.data());
  r.dataset(f, "state/level_max_speed", H5T_NATIVE_DOUBLE, {hsize_t(nlev)},
            s.level_max_speed.data());
  s.plot_index = r.one<std::int64_t>(f, "state/plot_index", H5T_NATIVE_INT64);
  s.next_plot_time = r.one<double>(f, "state/next_plot_time", H5T_NATIVE_DOUBLE);
  s.last_plot_step = r.one<std::int64_t>(f, "state/last_plot_step", H5T_NATIVE_INT64);
  s.next_checkpoint_time = r.one<double>(f, "state/next_checkpoint_time", H5T_NATIVE_DOUBLE);
  s.cell_updates = r.one<std::int64_t>(f, "state/cell_updates", H5T_NATIVE_INT64);
  s.regrid_count = r.one<std::int64_t>(f, "state/regrid_count", H5T_NATIVE_INT64);
  s.floored = r.one<std::int64_t>(f, "state/floored", H5T_NATIVE_INT64);
  // Written since the end-of-run line counts corrected cells; 0 in an older checkpoint.
  if (H5Lexists(f, "state/corrected", H5P_DEFAULT) > 0)
    s.corrected = r.one<std::int64_t>(f, "state/corrected", H5T_NATIVE_INT64);
  // Written since refluxing withholds corrections that would leave a cell unphysical.
  if (H5Lexists(f, "state/reflux_withheld", H5P_DEFAULT) > 0)
    s.reflux_withheld = r.one<std::int64_t>(f, "state/reflux_withheld", H5T_NATIVE_INT64);
  // One total per field: 5 in a file without FieldNames.
  s.initial_totals.resize(field_names().size());
  r.dataset(f, "state/initial_totals", H5T_NATIVE_DOUBLE, {hsize_t(s.initial_totals.size())},
            s.initial_totals.data());
  return s;
}

mesh::Hierarchy CheckpointReader::hierarchy() const {
  const detail::QuietHdf5Errors quiet;
  const Reader r = checked_reader(*this);
  const hid_t f = static_cast<hid_t>(file_);
  const int nlev = stored_levels(r, f);
  mesh::Hierarchy h(nlev - 1);
  for (int level = 1; level < nlev; ++level) {
    const std::string name = "mesh/" + level_name("parents_level_", level);
    if (H5Lexists(f, name.c_str(), H5P_DEFAULT) <= 0)
      r.corrupt("dataset '" + name + "' is missing");
    Handle set = r.own(H5Dopen2(f, name.c_str(), H5P_DEFAULT), H5Dclose, "opening " + name);
    Handle space = r.own(H5Dget_space(set.get()), H5Sclose, "opening " + name);
    hsize_t dims[2] = {0, 0};
    if (H5Sget_simple_extent_ndims(space.get()) != 2 ||
        H5Sget_simple_extent_dims(space.get(), dims, nullptr) < 0 || dims[1] != 3)
      r.corrupt("dataset '" + name + "' is not an N x 3 array");
    h[level - 1].resize(dims[0]);
    r.dataset(f, name, H5T_NATIVE_INT, {dims[0], 3}, h[level - 1].data());
  }
  return h;
}

std::vector<std::string> CheckpointReader::field_names() const {
  const detail::QuietHdf5Errors quiet;
  const Reader r = checked_reader(*this);
  const hid_t f = static_cast<hid_t>(file_);
  if (H5Lexists(f, "data", H5P_DEFAULT) <= 0) r.corrupt("group 'data' is missing");
  Handle dg = r.own(H5Gopen2(f, "data", H5P_DEFAULT), H5Gclose, "opening group 'data'");
  if (H5Aexists(dg.get(), "FieldNames") <= 0) return kLegacyFields;
  std::vector<std::string> names = r.string_array_attribute(dg.get(), "FieldNames");
  if (names.empty() || r.scalar_attribute<int>(dg.get(), "NumFields", H5T_NATIVE_INT) !=
                           static_cast<int>(names.size()))
    r.corrupt("the FieldNames and NumFields attributes of 'data' disagree");
  return names;
}

void CheckpointReader::read_data(mesh::Mesh& m) const {
  const std::vector<std::string> stored = field_names();
  std::vector<std::string> wanted;
  for (const auto& field : m.fields().all()) wanted.push_back(field.name);
  if (stored != wanted) {
    // The equations are told apart by their fields: MHD runs hold the magnetic field.
    auto equations = [](const std::vector<std::string>& names) {
      const bool mhd = std::find(names.begin(), names.end(), "Bcc1") != names.end();
      return std::string(mhd ? "MHD (mhd.enabled = true)" : "hydrodynamics (mhd.enabled = false)");
    };
    const std::string was = equations(stored), is = equations(wanted);
    Reader(path_, false)
        .incompatible(
            (was != is ? "it was written by a run of " + was + " and this run is " + is + "; "
                       : "") +
            "it holds the " + std::to_string(stored.size()) + " fields " + name_list(stored) +
            " but this run has the " + std::to_string(wanted.size()) + " fields " +
            name_list(wanted) + ": restart with the physics (equations, passive scalars) " +
            "of the run that wrote it");
  }
  const detail::QuietHdf5Errors quiet;
  const Reader r = checked_reader(*this);
  const hid_t f = static_cast<hid_t>(file_);
  const auto& geo = m.geometry();
  std::array<int, 3> root{};
  std::array<double, 3> lo{}, hi{};
  r.dataset(f, "mesh/root_cells", H5T_NATIVE_INT, {3}, root.data());
  r.dataset(f, "mesh/xmin", H5T_NATIVE_DOUBLE, {3}, lo.data());
  r.dataset(f, "mesh/xmax", H5T_NATIVE_DOUBLE, {3}, hi.data());
  if (root != geo.root_cells || lo != geo.xmin || hi != geo.xmax)
    r.corrupt("its mesh geometry (root cells, domain) disagrees with its own parameters");
  const std::size_t np = m.num_patches();
  std::vector<int> levels(np), corners(3 * np);
  r.dataset(f, "mesh/levels", H5T_NATIVE_INT, {np}, levels.data());
  r.dataset(f, "mesh/corners", H5T_NATIVE_INT, {np, 3}, corners.data());
  for (std::size_t p = 0; p < np; ++p) {
    const auto& meta = m.patch(static_cast<int>(p));
    if (levels[p] != meta.level || corners[3 * p] != meta.corner[0] ||
        corners[3 * p + 1] != meta.corner[1] || corners[3 * p + 2] != meta.corner[2])
      r.corrupt(strprintf("patch %zu of the rebuilt octree does not match the stored one", p));
  }
  const hsize_t n = mesh::kPatchSize;
  for (int level = 0; level < m.num_levels(); ++level) {
    const auto [first, count] = level_patch_range(m, level);
    const std::string name = "data/" + level_name("level_", level);
    // A file whose attribute was edited but whose data has the other precision.
    if (H5Lexists(f, name.c_str(), H5P_DEFAULT) > 0) {
      Handle set = r.own(H5Dopen2(f, name.c_str(), H5P_DEFAULT), H5Dclose, "opening " + name);
      Handle type = r.own(H5Dget_type(set.get()), H5Tclose, "opening " + name);
      if (H5Tget_class(type.get()) != H5T_FLOAT || H5Tget_size(type.get()) != sizeof(Real))
        r.incompatible("dataset '" + name + "' does not hold " + kPrecisionName +
                       "-precision numbers");
    }
    const std::vector<hsize_t> dims = {static_cast<hsize_t>(count), static_cast<hsize_t>(m.nvar()),
                                       n, n, n};
    const int slot = m.current_slot(level);
    if (!m.sparse()) {
      r.dataset(f, name, detail::real_type(), dims, m.data(slot, first));
      continue;
    }
    // A store (a rank of several): the families it holds, read in slabs of 64 families
    // (about 10 MB of hydro) so that no more is in memory at once.
    const std::size_t family_bytes = mesh::kFamilySize * m.patch_reals() * sizeof(Real);
    r.dataset_slabs(f, name, detail::real_type(), dims, 64 * mesh::kFamilySize,
                    [&](hsize_t row, hsize_t rows, const void* data) {
                      const auto* bytes = static_cast<const unsigned char*>(data);
                      for (hsize_t i = 0; i < rows; i += mesh::kFamilySize) {
                        const int p = first + static_cast<int>(row + i);
                        if (m.holds(p))
                          std::memcpy(m.data(slot, p), bytes + i / mesh::kFamilySize * family_bytes,
                                      family_bytes);
                      }
                    });
  }
}

std::unique_ptr<mesh::Mesh> CheckpointReader::read_mesh(const mesh::Geometry& geometry,
                                                        const mesh::FieldRegistry& fields,
                                                        bool with_data) const {
  std::unique_ptr<mesh::Mesh> m;
  try {
    m = std::make_unique<mesh::Mesh>(geometry, fields, hierarchy(), with_data);
  } catch (const Error& e) {
    // The constructor reports a missing parent as a bug; here it is a damaged file.
    if (e.kind() != ErrorKind::kInternal) throw;
    Reader(path_, false).corrupt(std::string("its octree is inconsistent: ") + e.what());
  }
  {
    const detail::QuietHdf5Errors quiet;
    const Reader r = checked_reader(*this);
    if (stored_levels(r, static_cast<hid_t>(file_)) != m->num_levels())
      r.corrupt("its level count disagrees with its octree");
  }
  if (with_data) read_data(*m);
  return m;
}

}  // namespace tessera::io
