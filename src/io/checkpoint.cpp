// Checkpoint writer (layout: docs/checkpoints.md; the reader is checkpoint_reader.cpp).
// Three layers of protection: every dataset is chunked with the Fletcher32 checksum filter
// and carries the XXH3-64 digest of its data (checked on every read: restart and verify);
// the file uses the HDF5 1.8 format, whose superblock and object headers (where the
// attributes live) carry their own checksums; and a 512-byte user block at the start holds
// the XXH3-64 of every byte after it (checked by verify: a changed byte anywhere, even in
// space HDF5 never reads, is found).
#include "tessera/io/checkpoint.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstring>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "src/io/checkpoint_layout.hpp"
#include "src/io/digest.hpp"
#include "src/io/hdf5_util.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"
#include "tessera/core/real.hpp"

namespace tessera::io {

using detail::Handle;
using detail::Hdf5File;
using detail::level_name;
using detail::level_patch_range;

namespace {

constexpr hsize_t kPatchesPerChunk = 64;  // 1.3 MB of double data per chunk, 5 variables
constexpr const char* kChkInfix = ".chk.";
constexpr const char* kChkSuffix = ".h5";

// The user block: kSealPrefix, the digest text, a newline, zeros up to kUserBlock bytes.
constexpr std::size_t kUserBlock = 512;  // the smallest HDF5 allows
constexpr const char* kSealPrefix = "Tessera checkpoint; XXH3-64 of bytes 512 to end of file: ";

std::vector<char> seal_block(std::uint64_t digest) {
  std::vector<char> block(kUserBlock, '\0');
  const std::string text = kSealPrefix + detail::digest_text(digest) + "\n";
  std::copy(text.begin(), text.end(), block.begin());
  return block;
}

// XXH3-64 of the bytes of an open file from offset kUserBlock to its end.
bool digest_after_block(int fd, std::uint64_t& digest) {
  detail::StreamDigest d;
  std::vector<char> buf(8 << 20);
  off_t offset = kUserBlock;
  for (;;) {
    const ssize_t n = ::pread(fd, buf.data(), buf.size(), offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) break;
    d.update(buf.data(), static_cast<std::size_t>(n));
    offset += n;
  }
  digest = d.value();
  return true;
}

// Writes the user block of a closed checkpoint file: the digest of everything after it.
void seal_file(const std::string& file, const std::string& final_name) {
  const int fd = ::open(file.c_str(), O_RDWR);
  if (fd < 0) detail::fail_io("checkpoint", final_name, "opening '" + file + "' to seal it", errno);
  std::uint64_t digest = 0;
  const bool read_ok = digest_after_block(fd, digest);
  const int read_errno = errno;
  if (!read_ok) {
    ::close(fd);
    detail::fail_io("checkpoint", final_name, "reading back '" + file + "'", read_errno);
  }
  const std::vector<char> block = seal_block(digest);
  std::size_t done = 0;
  int write_errno = 0;
  while (done < block.size()) {  // a short write is retried: its retry reports the cause
    const ssize_t n =
        ::pwrite(fd, block.data() + done, block.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      write_errno = n < 0 ? errno : 0;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (done != block.size())
    detail::fail_io("checkpoint", final_name, "writing the digest block of '" + file + "'",
                    write_errno);
}

}  // namespace

std::string checkpoint_file_name(const std::string& dir, const std::string& problem,
                                 std::int64_t step) {
  const std::string name =
      problem + kChkInfix + strprintf("%08" PRId64, static_cast<std::int64_t>(step)) + kChkSuffix;
  if (dir.empty()) return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

std::vector<std::string> list_checkpoints(const std::string& dir, const std::string& problem) {
  namespace fs = std::filesystem;
  std::vector<std::pair<long long, std::string>> found;
  std::error_code ec;
  const std::string prefix = problem + kChkInfix;
  for (fs::directory_iterator it(dir.empty() ? "." : dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    // "<problem>.chk.<digits>.h5" exactly: temporaries ("....h5.tmp.<pid>") never match.
    if (name.size() <= prefix.size() + 3 || name.compare(0, prefix.size(), prefix) != 0 ||
        name.compare(name.size() - 3, 3, kChkSuffix) != 0)
      continue;
    const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - 3);
    if (digits.empty() || !std::all_of(digits.begin(), digits.end(),
                                       [](unsigned char c) { return std::isdigit(c) != 0; }))
      continue;
    if (!it->is_regular_file(ec)) continue;
    found.push_back({std::stoll(digits), it->path().string()});
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

namespace {

// The (first patch, patches) runs of a level's patches [first, first + count) that this
// rank writes, counted from `first`, and their data packed in that order. Without a
// Collective: the whole level, which a dense canonical mesh holds as one slab (no copy).
struct LevelRows {
  std::vector<std::pair<hsize_t, hsize_t>> runs;
  std::vector<Real> packed;
  const Real* data = nullptr;
};

LevelRows level_rows(const mesh::Mesh& m, int level, int first, int count, const Collective* c) {
  LevelRows out;
  const int slot = m.current_slot(level);
  if (c == nullptr) {
    if (count > 0) out.runs.push_back({0, static_cast<hsize_t>(count)});
    out.data = count > 0 ? m.data(slot, first) : nullptr;
    return out;
  }
  const std::size_t reals = m.patch_reals();
  for (int p = first; p < first + count; ++p) {
    if (!c->owns(p)) continue;
    const hsize_t row = static_cast<hsize_t>(p - first);
    if (!out.runs.empty() && out.runs.back().first + out.runs.back().second == row)
      ++out.runs.back().second;
    else
      out.runs.push_back({row, 1});
    const Real* u = m.data(slot, p);
    out.packed.insert(out.packed.end(), u, u + reals);
  }
  out.data = out.packed.data();
  return out;
}

}  // namespace

void write_checkpoint(const std::string& path, const mesh::Mesh& m, const CheckpointHeader& header,
                      const CheckpointState& state, const Collective* collective) {
  const detail::QuietHdf5Errors quiet;
  const Collective* c = collective;
  detail::on_root(c, [&] {
    detail::check_free_space("checkpoint", path,
                             static_cast<double>(m.num_patches()) *
                                 (static_cast<double>(m.patch_reals()) * sizeof(Real) + 16));
  });
  // The process id (rank 0's) keeps two runs writing into one directory from sharing a
  // temporary; rank 0 alone removes it if the write fails, and renames it.
  const std::string tmp_name = detail::collective_temp_name(c, path);
  std::optional<detail::TempFile> tmp;
  if (c == nullptr || c->comm->rank() == 0) tmp.emplace(tmp_name, "checkpoint");
  {
    Hdf5File w("write checkpoint", path);
    w.set_collective(c);
    const int nlev = m.num_levels();
    if (static_cast<int>(state.level_steps.size()) < nlev ||
        static_cast<int>(state.level_max_speed.size()) < nlev)
      throw Error(ErrorKind::kInternal, "checkpoint state has fewer levels than the mesh");

    // HDF5 1.8 format: checksummed superblock and object headers (so the attributes are
    // covered too) and dense storage for a long Parameters attribute.
    Handle fapl = w.own(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "H5Pcreate");
    w.check(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_V18),
            "H5Pset_libver_bounds");
    w.check(H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG), "H5Pset_fclose_degree");
    if (c != nullptr) detail::set_collective_access(fapl.get());
    Handle fcpl = w.own(H5Pcreate(H5P_FILE_CREATE), H5Pclose, "H5Pcreate");
    w.check(H5Pset_userblock(fcpl.get(), kUserBlock), "H5Pset_userblock");
    const hid_t created = H5Fcreate(tmp_name.c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl.get());
    w.check_agreed(created < 0 ? -1 : 0, "creating '" + tmp_name + "'");
    Handle file(created, H5Fclose);
    const hid_t f = file.get();

    // Self-description, for the reader's checks and for people running h5dump -A.
    w.string_attribute(f, "Format", kCheckpointFormat);
    const int version = kCheckpointFormatVersion;
    w.attribute(f, "FormatVersion", H5T_STD_I32LE, H5T_NATIVE_INT, {}, &version);
    w.string_attribute(f, "CodeVersion", header.code_version);
    w.string_attribute(f, "Precision", kPrecisionName);
    w.string_attribute(f, "Problem", header.problem);
    w.string_attribute(f, "RunId", header.run_id);
    w.string_attribute(f, "Parameters", header.parameters);
    w.attribute(f, "Time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {}, &state.time);
    w.attribute(f, "Step", H5T_STD_I64LE, H5T_NATIVE_INT64, {}, &state.step);
    w.attribute(f, "NumLevels", H5T_STD_I32LE, H5T_NATIVE_INT, {}, &nlev);

    // Loop state: one checksummed dataset per quantity.
    Handle st = w.group(f, "state");
    const hid_t s = st.get();
    auto f64 = [&](const char* name, const double* v, hsize_t n) {
      w.checked_dataset(s, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {n}, v, n);
    };
    auto i64 = [&](const char* name, const std::int64_t* v, hsize_t n) {
      w.checked_dataset(s, name, H5T_STD_I64LE, H5T_NATIVE_INT64, {n}, v, n);
    };
    f64("time", &state.time, 1);
    i64("step", &state.step, 1);
    i64("level_steps", state.level_steps.data(), nlev);
    f64("level_max_speed", state.level_max_speed.data(), nlev);
    i64("plot_index", &state.plot_index, 1);
    f64("next_plot_time", &state.next_plot_time, 1);
    i64("last_plot_step", &state.last_plot_step, 1);
    f64("next_checkpoint_time", &state.next_checkpoint_time, 1);
    i64("cell_updates", &state.cell_updates, 1);
    i64("regrid_count", &state.regrid_count, 1);
    i64("floored", &state.floored, 1);
    i64("corrected", &state.corrected, 1);
    i64("reflux_withheld", &state.reflux_withheld, 1);
    f64("initial_totals", state.initial_totals.data(), state.initial_totals.size());

    // The octree: the parent coordinates of every family above the root (what rebuilds
    // the mesh in the same order), and every patch's level and corner (what the reader
    // checks the rebuilt mesh against, and what analysis tools read).
    Handle mg = w.group(f, "mesh");
    const auto& geo = m.geometry();
    w.checked_dataset(mg.get(), "root_cells", H5T_STD_I32LE, H5T_NATIVE_INT, {3},
                      geo.root_cells.data(), 3);
    w.checked_dataset(mg.get(), "xmin", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {3}, geo.xmin.data(), 3);
    w.checked_dataset(mg.get(), "xmax", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {3}, geo.xmax.data(), 3);
    const mesh::Hierarchy h = m.hierarchy();
    for (int level = 1; level < nlev; ++level) {
      const auto& parents = h[level - 1];
      w.checked_dataset(mg.get(), level_name("parents_level_", level).c_str(), H5T_STD_I32LE,
                        H5T_NATIVE_INT, {parents.size(), 3}, parents.data(), 4096);
    }
    const std::size_t np = m.num_patches();
    std::vector<int> levels(np), corners(3 * np);
    for (std::size_t p = 0; p < np; ++p) {
      levels[p] = m.patch(static_cast<int>(p)).level;
      for (int d = 0; d < 3; ++d) corners[3 * p + d] = m.patch(static_cast<int>(p)).corner[d];
    }
    w.checked_dataset(mg.get(), "levels", H5T_STD_I32LE, H5T_NATIVE_INT, {np}, levels.data(),
                      65536);
    w.checked_dataset(mg.get(), "corners", H5T_STD_I32LE, H5T_NATIVE_INT, {np, 3}, corners.data(),
                      65536);

    // Field data: the current time level of each level, the fields in pool order, in the
    // build's precision [patch][var][z][y][x]. Every field is written, those that are not
    // `checkpointed` too: each level stays one slab of the pool, written with no copy, and
    // FieldCheckpointed records which ones a restart needs (all fields of every physics so
    // far). The reader compares FieldNames with the run's fields.
    Handle dg = w.group(f, "data");
    const mesh::FieldRegistry& fields = m.fields();
    std::vector<std::string> names;
    std::vector<int> checkpointed;
    for (const auto& field : fields.all()) {
      names.push_back(field.name);
      checkpointed.push_back(field.checkpointed ? 1 : 0);
    }
    const int nfields = fields.size();
    w.attribute(dg.get(), "NumFields", H5T_STD_I32LE, H5T_NATIVE_INT, {}, &nfields);
    w.string_array_attribute(dg.get(), "FieldNames", names);
    w.attribute(dg.get(), "FieldCheckpointed", H5T_STD_I32LE, H5T_NATIVE_INT,
                {static_cast<hsize_t>(nfields)}, checkpointed.data());
    // Collectively each rank writes its own patches (the rows of the level's dataset).
    const hsize_t n = mesh::kPatchSize;
    for (int level = 0; level < nlev; ++level) {
      const auto [first, count] = level_patch_range(m, level);
      const LevelRows rows = level_rows(m, level, first, count, c);
      w.checked_rows(dg.get(), level_name("level_", level).c_str(), detail::real_type(),
                     detail::real_type(),
                     {static_cast<hsize_t>(count), static_cast<hsize_t>(m.nvar()), n, n, n},
                     kPatchesPerChunk, rows.runs, rows.data);
    }
    w.check_agreed(H5Fflush(f, H5F_SCOPE_GLOBAL), "H5Fflush");
    st.close();
    mg.close();
    dg.close();
    w.check_agreed(file.close(), "H5Fclose");
  }
  // The file is complete and closed on every rank: rank 0 seals it and renames it.
  detail::on_root(c, [&] {
    seal_file(tmp->name(), path);
    tmp->commit(path);
  });
}

void require_checkpoint_file(const std::string& path) {
  auto refuse = [&](const std::string& what) {
    throw Error(ErrorKind::kIo, "cannot read checkpoint '" + path + "': " + what);
  };
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) refuse("no such file");
  if (std::filesystem::is_directory(status))
    refuse(
        "it is a directory, not a checkpoint file (give one of its .chk. files, or "
        "--restart latest with output.dir set to it)");
  // Opening a named pipe would wait for a writer that may never come, and HDF5 needs a
  // file it can seek in.
  if (!std::filesystem::is_regular_file(status))
    refuse("it is not a regular file (a pipe, socket or device): a checkpoint is an HDF5 file");
}

bool check_file_digest(const std::string& path) {
  auto corrupt = [&](const std::string& what) {
    throw Error(ErrorKind::kIo, "cannot read checkpoint '" + path + "': " + what);
  };
  require_checkpoint_file(path);
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) corrupt(std::string("cannot open it: ") + std::strerror(errno));
  std::vector<char> block(kUserBlock, '\0');
  const ssize_t n = ::pread(fd, block.data(), block.size(), 0);
  const std::string prefix = kSealPrefix;
  if (n != static_cast<ssize_t>(block.size()) ||
      !std::equal(prefix.begin(), prefix.end(), block.begin())) {
    ::close(fd);
    return false;
  }
  std::uint64_t have = 0;
  const bool read_ok = digest_after_block(fd, have);
  const int read_errno = errno;
  ::close(fd);
  if (!read_ok) corrupt(std::string("reading it failed: ") + std::strerror(read_errno));
  // The whole block must be exactly what the writer made from the stored digest, so that a
  // changed byte in the block itself (text or padding) is found as well.
  const std::size_t text_end = prefix.size() + std::string(detail::kDigestPrefix).size() + 16;
  const auto stored = detail::parse_digest_text(
      std::string(block.begin() + prefix.size(), block.begin() + text_end));
  if (!stored || seal_block(*stored) != block)
    corrupt("its digest block (the first 512 bytes) is damaged");
  if (have != *stored)
    corrupt("the file does not match its digest (stored " + detail::digest_text(*stored) +
            ", file " + detail::digest_text(have) + "): bytes changed after it was written");
  return true;
}

}  // namespace tessera::io
