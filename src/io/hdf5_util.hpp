// HDF5 and file plumbing shared by the plot-file and checkpoint writers and the checkpoint
// reader: RAII identifiers, quiet error stacks turned into tessera::Error, and temporary
// files that are synced and renamed into place (a crash never leaves a partial file under
// a final name).
#pragma once

#include <fcntl.h>
#include <hdf5.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "src/io/collective.hpp"
#include "src/io/digest.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/real.hpp"
#include "tessera/io/collective.hpp"

namespace tessera::io::detail {

// The floating-point type of field data: the native Real, so a single-precision build
// writes float without a conversion pass.
inline hid_t real_type() {
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

// HDF5 prints its error stack to stderr by default; Tessera reports errors through
// tessera::Error instead, so printing is off while a reader or writer runs and restored
// afterwards (other code of the process may rely on the default).
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
inline herr_t keep_innermost(unsigned, const H5E_error2_t* error, void* out) {
  if (error->desc != nullptr && error->desc[0] != '\0') {
    *static_cast<std::string*>(out) = error->desc;
  }
  return 0;
}

// The innermost message of the current HDF5 error stack ("" when there is none). Must run
// before any other HDF5 call, which would clear the stack. A failed system call is reduced
// to what the user can act on: "file write failed: ..., errno = 28, error message = 'No
// space left on device', buf = 0x..." becomes "file write failed: No space left on device
// (errno 28)".
inline std::string hdf5_error_detail() {
  std::string detail;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, keep_innermost, &detail);
  const std::size_t msg = detail.find("error message = '");
  const std::size_t err = detail.find("errno = ");
  if (msg != std::string::npos && err != std::string::npos) {
    const std::size_t begin = msg + 17;
    const std::size_t end = detail.find('\'', begin);
    const std::size_t colon = detail.find(':');
    std::string what = colon == std::string::npos ? std::string() : detail.substr(0, colon);
    const long code = std::strtol(detail.c_str() + err + 8, nullptr, 10);
    if (end != std::string::npos)
      return (what.empty() ? "" : what + ": ") + detail.substr(begin, end - begin) + " (errno " +
             std::to_string(code) + ")";
  }
  return detail;
}

// Checked HDF5 calls on one file: every failure becomes Error(kind) "cannot <verb>
// <what> '<path>': <step> failed (HDF5: ...)".
class Hdf5File {
 public:
  Hdf5File(std::string verb_what, std::string path, ErrorKind kind = ErrorKind::kIo)
      : verb_what_(std::move(verb_what)), path_(std::move(path)), kind_(kind) {}

  const std::string& path() const { return path_; }

  [[noreturn]] void fail(const std::string& step) const {
    const std::string detail = hdf5_error_detail();
    std::string message = "cannot " + verb_what_ + " '" + path_ + "': " + step + " failed";
    if (!detail.empty()) message += " (HDF5: " + detail + ")";
    throw Error(kind_, message);
  }
  Handle own(hid_t id, Handle::Closer closer, const std::string& step) const {
    if (id < 0) fail(step);
    return Handle(id, closer);
  }
  void check(herr_t status, const std::string& step) const {
    if (status < 0) fail(step);
  }

  // Collective writing (tessera/io/collective.hpp): every rank of `c` makes the same calls;
  // rank 0 writes the structure (the other ranks select nothing) and each rank the field
  // data of its patches (checked_rows, plot data). nullptr: one process writes everything.
  void set_collective(const Collective* c) { coll_ = c; }
  const Collective* collective() const { return coll_; }
  bool writes_structure() const { return coll_ == nullptr || coll_->comm->rank() == 0; }

  // A step that may fail on some ranks only (raw data, closing the file): collectively, the
  // ranks agree on it, so that all throw the lowest failing rank's error together rather
  // than some waiting in the next collective call for ranks that stopped.
  void check_agreed(herr_t status, const std::string& step) const {
    if (coll_ == nullptr) return check(status, step);
    std::exception_ptr error;
    if (status < 0) try {
        fail(step);
      } catch (...) {
        error = std::current_exception();
      }
    coll_->comm->agree(error);
  }

  Handle dataspace(const std::vector<hsize_t>& dims) const {
    if (dims.empty()) return own(H5Screate(H5S_SCALAR), H5Sclose, "H5Screate");
    return own(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose,
               "H5Screate_simple");
  }

  // Fixed-length, null-terminated strings of `length` characters: yt decodes attributes as
  // bytes (attrs["Coordinates"].decode()), which h5py only returns for fixed-length types.
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

  // A contiguous dataset (plot files: what every reader handles).
  void dataset(hid_t loc, const char* name, hid_t file_type, hid_t mem_type,
               const std::vector<hsize_t>& dims, const void* data) const {
    write_dataset(loc, name, file_type, mem_type, dims, data, H5P_DEFAULT);
  }

  // A chunked dataset with the Fletcher32 checksum filter (a read of a chunk whose bytes
  // changed fails instead of returning them) and a "Digest" attribute: the XXH3-64 of the
  // data as written (in memory type), which the reader recomputes over what it read, so
  // any change that Fletcher-32 misses is caught too. Chunks hold up to `chunk_rows`
  // entries of the first dimension (the whole dataset when it is smaller).
  //
  // The digest is RowDigest's (digest.hpp): rows along the first dimension. Collectively,
  // every rank passes the same data (the structure every rank holds) and rank 0 writes it.
  void checked_dataset(hid_t loc, const char* name, hid_t file_type, hid_t mem_type,
                       const std::vector<hsize_t>& dims, const void* data,
                       hsize_t chunk_rows = 1) const {
    const std::string step = std::string("creating dataset '") + name + "'";
    Handle dcpl = checked_create_list(dims, chunk_rows, step);
    const std::size_t rows = dims.empty() ? 1 : static_cast<std::size_t>(dims[0]);
    const std::string digest = digest_text(rows_digest(data, rows, row_bytes(dims, mem_type)));
    write_dataset(loc, name, file_type, mem_type, dims, data, dcpl.get(), &digest);
  }

  // A checked dataset whose rows the ranks write where they are (field data: a row is a
  // patch): `runs` are the (first row, rows) ranges this rank writes, in increasing order,
  // and `packed` holds their rows one after the other. Every row is written by exactly one
  // rank. The row digests are formed where the rows are and combined in row order on rank
  // 0, so the Digest is the one a single process writes. Without a Collective the runs
  // must cover the dataset. Each rank's data go in rounds of at most max_transfer_bytes()
  // (MPI-IO counts are ints: a call of 2^31 bytes or more fails or corrupts silently in
  // some MPI libraries), the same number of collective calls on every rank.
  void checked_rows(hid_t loc, const char* name, hid_t file_type, hid_t mem_type,
                    const std::vector<hsize_t>& dims, hsize_t chunk_rows,
                    const std::vector<std::pair<hsize_t, hsize_t>>& runs,
                    const void* packed) const {
    const std::string step = std::string("writing dataset '") + name + "'";
    Handle dcpl = checked_create_list(dims, chunk_rows, step);
    const std::size_t rb = row_bytes(dims, mem_type);
    const auto* bytes = static_cast<const unsigned char*>(packed);
    const std::string digest = digest_text(combined_row_digest(dims[0], runs, bytes, rb));

    Handle space = dataspace(dims);
    Handle set =
        own(H5Dcreate2(loc, name, file_type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
            H5Dclose, step);
    write_runs(set.get(), mem_type, dims, {}, runs, bytes, rb, step);
    string_attribute(set.get(), "Digest", digest);
    check(set.close(), step);
  }

  // A contiguous dataset of dims {variables, blocks, ...} of which this rank holds the
  // blocks `runs` (along the second dimension) of every variable, packed [variable][its
  // blocks][...]: plot-file data, each rank writing its own blocks.
  void block_dataset(hid_t loc, const char* name, hid_t file_type, hid_t mem_type,
                     const std::vector<hsize_t>& dims,
                     const std::vector<std::pair<hsize_t, hsize_t>>& runs,
                     const void* packed) const {
    const std::string step = std::string("writing dataset '") + name + "'";
    Handle space = dataspace(dims);
    Handle set =
        own(H5Dcreate2(loc, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
            H5Dclose, step);
    const std::vector<hsize_t> rows(dims.begin() + 1, dims.end());
    const std::size_t rb = row_bytes(rows, mem_type);
    std::size_t mine = 0;
    for (const auto& r : runs) mine += static_cast<std::size_t>(r.second);
    const auto* bytes = static_cast<const unsigned char*>(packed);
    for (hsize_t v = 0; v < dims[0]; ++v)
      write_runs(set.get(), mem_type, dims, {v}, runs, bytes + v * mine * rb, rb, step);
    check(set.close(), step);
  }

  Handle group(hid_t loc, const char* name) const {
    return own(H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
               std::string("creating group '") + name + "'");
  }

 private:
  void write_dataset(hid_t loc, const char* name, hid_t file_type, hid_t mem_type,
                     const std::vector<hsize_t>& dims, const void* data, hid_t dcpl,
                     const std::string* digest = nullptr) const {
    const std::string step = std::string("writing dataset '") + name + "'";
    Handle space = dataspace(dims);
    Handle set = own(H5Dcreate2(loc, name, file_type, space.get(), H5P_DEFAULT, dcpl, H5P_DEFAULT),
                     H5Dclose, step);
    hsize_t count = 1;
    for (hsize_t d : dims) count *= d;
    if (count > 0) {
      Handle dxpl = transfer_list(step);
      if (writes_structure()) {
        check_agreed(H5Dwrite(set.get(), mem_type, H5S_ALL, H5S_ALL,
                              dxpl.get() < 0 ? H5P_DEFAULT : dxpl.get(), data),
                     step);
      } else {  // a collective write in which this rank writes nothing
        Handle none = own(H5Dget_space(set.get()), H5Sclose, step);
        check(H5Sselect_none(none.get()), step);
        check_agreed(H5Dwrite(set.get(), mem_type, none.get(), none.get(), dxpl.get(), data), step);
      }
    }
    if (digest != nullptr) string_attribute(set.get(), "Digest", *digest);
    check(set.close(), step);
  }

  // Writes this rank's `runs` of rows along dimension lead.size() of a dataset of `dims`,
  // at the leading indices `lead` (a plot file's variable), from `packed`: in rounds of at
  // most max_transfer_bytes() per rank, every rank making the same number of calls.
  void write_runs(hid_t set, hid_t mem_type, const std::vector<hsize_t>& dims,
                  const std::vector<hsize_t>& lead,
                  const std::vector<std::pair<hsize_t, hsize_t>>& runs, const unsigned char* packed,
                  std::size_t rb, const std::string& step) const {
    const std::size_t axis = lead.size();
    std::size_t mine = 0;
    for (const auto& r : runs) mine += static_cast<std::size_t>(r.second);
    Handle dxpl = transfer_list(step);
    const std::size_t per_round =
        std::max<std::size_t>(1, max_transfer_bytes() / std::max<std::size_t>(rb, 1));
    long long rounds = static_cast<long long>((mine + per_round - 1) / per_round);
    if (coll_ != nullptr)
      rounds = static_cast<long long>(coll_->comm->max(static_cast<double>(rounds)));
    std::size_t run = 0, offset = 0, done = 0;  // position in the runs
    for (long long round = 0; round < rounds; ++round) {
      Handle file_space = own(H5Dget_space(set), H5Sclose, step);
      check(H5Sselect_none(file_space.get()), step);
      const std::size_t first_done = done;
      while (run < runs.size() && done - first_done < per_round) {
        const std::size_t take =
            std::min<std::size_t>(runs[run].second - offset, per_round - (done - first_done));
        std::vector<hsize_t> start(dims.size(), 0), count = dims;
        for (std::size_t d = 0; d < axis; ++d) start[d] = lead[d], count[d] = 1;
        start[axis] = runs[run].first + offset;
        count[axis] = take;
        check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_OR, start.data(), nullptr,
                                  count.data(), nullptr),
              step);
        done += take;
        offset += take;
        if (offset == runs[run].second) ++run, offset = 0;
      }
      std::vector<hsize_t> mem_dims(dims.begin() + static_cast<long>(axis), dims.end());
      mem_dims[0] = std::max<std::size_t>(done - first_done, 1);
      Handle mem = dataspace(mem_dims);
      if (done == first_done) check(H5Sselect_none(mem.get()), step);
      const herr_t status =
          H5Dwrite(set, mem_type, mem.get(), file_space.get(),
                   dxpl.get() < 0 ? H5P_DEFAULT : dxpl.get(), packed + first_done * rb);
      check_agreed(status, step);
    }
  }

  static std::size_t row_bytes(const std::vector<hsize_t>& dims, hid_t mem_type) {
    std::size_t n = H5Tget_size(mem_type);
    for (std::size_t d = 1; d < dims.size(); ++d) n *= static_cast<std::size_t>(dims[d]);
    return n;
  }

  // Chunks of up to `chunk_rows` rows (the whole dataset when it is smaller) with the
  // Fletcher32 filter; collectively, no fill values (every byte is written).
  Handle checked_create_list(const std::vector<hsize_t>& dims, hsize_t chunk_rows,
                             const std::string& step) const {
    Handle dcpl = own(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, step);
    std::vector<hsize_t> chunk = dims;
    if (!chunk.empty()) chunk[0] = std::max<hsize_t>(1, std::min(chunk[0], chunk_rows));
    for (hsize_t& c : chunk) c = std::max<hsize_t>(c, 1);  // empty levels still get a chunk
    check(H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data()), step);
    check(H5Pset_fletcher32(dcpl.get()), step);
    if (coll_ != nullptr) check(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), step);
    return dcpl;
  }

  // Collectively a transfer list for collective MPI-IO; else none (id < 0: H5P_DEFAULT).
  Handle transfer_list(const std::string& step) const {
    if (coll_ == nullptr) return Handle(H5I_INVALID_HID, H5Pclose);
    Handle dxpl = own(H5Pcreate(H5P_DATASET_XFER), H5Pclose, step);
    set_collective_transfer(dxpl.get());
    return dxpl;
  }

  // The Digest of a dataset of `rows` rows of which this rank holds `runs` (packed).
  std::uint64_t combined_row_digest(hsize_t rows,
                                    const std::vector<std::pair<hsize_t, hsize_t>>& runs,
                                    const unsigned char* packed, std::size_t rb) const {
    std::vector<std::pair<hsize_t, std::uint64_t>> mine;
    std::size_t at = 0;
    for (const auto& r : runs)
      for (hsize_t i = 0; i < r.second; ++i, ++at)
        mine.push_back({r.first + i, digest64(packed + at * rb, rb)});
    if (coll_ != nullptr) {
      // Row numbers and digests travel as the bits of doubles (exchange's type).
      parallel::Comm& comm = *coll_->comm;
      std::vector<std::vector<double>> send(comm.size());
      for (const auto& [row, d] : mine) {
        double v[2];
        const std::uint64_t r64 = row;
        std::memcpy(&v[0], &r64, 8);
        std::memcpy(&v[1], &d, 8);
        send[0].insert(send[0].end(), v, v + 2);
      }
      const auto got = comm.exchange(std::move(send));
      std::uint64_t result = 0;
      std::vector<std::vector<double>> back(comm.size());
      if (comm.rank() == 0) {
        mine.clear();
        for (const auto& g : got)
          for (std::size_t i = 0; i + 1 < g.size(); i += 2) {
            std::uint64_t r64 = 0, d = 0;
            std::memcpy(&r64, &g[i], 8);
            std::memcpy(&d, &g[i + 1], 8);
            mine.push_back({r64, d});
          }
        std::sort(mine.begin(), mine.end());
        result = combine_in_order(rows, mine);
        double v;
        std::memcpy(&v, &result, 8);
        for (auto& b : back) b = {v};
      }
      const auto answer = comm.exchange(std::move(back));
      if (comm.rank() != 0) std::memcpy(&result, &answer[0][0], 8);
      return result;
    }
    return combine_in_order(rows, mine);
  }

  static std::uint64_t combine_in_order(
      hsize_t rows, const std::vector<std::pair<hsize_t, std::uint64_t>>& sorted) {
    if (sorted.size() != rows)
      throw Error(ErrorKind::kInternal,
                  "a collective write covers " + std::to_string(sorted.size()) + " of " +
                      std::to_string(static_cast<unsigned long long>(rows)) + " rows");
    RowDigest d;
    for (hsize_t i = 0; i < rows; ++i) {
      if (sorted[i].first != i)
        throw Error(ErrorKind::kInternal, "a collective write misses or repeats row " +
                                              std::to_string(static_cast<unsigned long long>(i)));
      d.add_row(sorted[i].second);
    }
    return d.value();
  }

  std::string verb_what_;
  std::string path_;
  ErrorKind kind_;
  const Collective* coll_ = nullptr;
};

// Runs f on rank 0 of a collective write (on the one process otherwise) and makes every
// rank throw its error: the steps that touch the file system by name (free space, the
// file digest, the rename) are rank 0's.
template <class F>
void on_root(const Collective* c, F&& f) {
  if (c == nullptr) return f();
  std::exception_ptr error;
  if (c->comm->rank() == 0) try {
      f();
    } catch (...) {
      error = std::current_exception();
    }
  c->comm->agree(error);
}

// The temporary name of a file written collectively: rank 0's (temp_name), known to all.
inline std::string collective_temp_name(const Collective* c, const std::string& path,
                                        const char* suffix = "") {
  long pid = static_cast<long>(::getpid());
  if (c != nullptr)
    pid = static_cast<long>(c->comm->max(c->comm->rank() == 0 ? static_cast<double>(pid) : 0.0));
  return path + suffix + ".tmp." + std::to_string(pid);
}

// error_number 0 (a stream that failed without setting errno) gives no misleading "Success".
[[noreturn]] inline void fail_io(const std::string& what, const std::string& path,
                                 const std::string& step, int error_number) {
  throw Error(ErrorKind::kIo,
              "cannot write " + what + " '" + path + "': " + step + " failed (" +
                  (error_number != 0 ? std::strerror(error_number) : "stream error") + ")");
}

inline std::string parent_directory(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Refuses early, with the figures, a write that cannot fit in the free space of the file
// system of `path` (statvfs; quotas are not seen, so a write may still fail with ENOSPC:
// that path is handled too). `bytes`: the data the file holds (its overhead is small).
inline void check_free_space(const std::string& what, const std::string& path, double bytes) {
  struct statvfs fs {};
  const std::string dir = parent_directory(path);
  if (::statvfs(dir.c_str(), &fs) != 0) return;  // cannot tell: the write will report it
  const double free_bytes = static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize);
  if (bytes > free_bytes) {
    char text[160];
    std::snprintf(text, sizeof text, "it needs about %.1f MB and '%s' has %.1f MB free",
                  bytes / 1e6, dir.c_str(), free_bytes / 1e6);
    throw Error(ErrorKind::kIo,
                "cannot write " + what + " '" + path + "': " + text + " (No space left on device)");
  }
}

// A temporary name beside `path` that no other process uses: two runs (or a run and a
// tool) writing the same final name never share a temporary.
inline std::string temp_name(const std::string& path, const char* suffix = "") {
  return collective_temp_name(nullptr, path, suffix);
}

// Removes a temporary file unless it was renamed into place, so that a failed write leaves
// neither a partial final file nor a stray temporary behind.
class TempFile {
 public:
  // `what` names the kind of file in error messages ("plot file", "checkpoint").
  TempFile(std::string name, std::string what) : name_(std::move(name)), what_(std::move(what)) {}
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    // unlink, not remove(): never deletes a directory that happens to have this name.
    if (!committed_) ::unlink(name_.c_str());
  }
  const std::string& name() const { return name_; }

  // fsync before rename: otherwise a system crash soon after the rename can leave the final
  // name pointing at an empty or truncated file on common file systems; fsync of the
  // directory afterwards makes the rename itself durable.
  void commit(const std::string& final_name) {
    const int fd = ::open(name_.c_str(), O_RDONLY);
    if (fd < 0) fail_io(what_, final_name, "opening '" + name_ + "' to sync it", errno);
    const bool synced = ::fsync(fd) == 0;
    const int sync_errno = errno;
    ::close(fd);
    if (!synced) fail_io(what_, final_name, "fsync of '" + name_ + "'", sync_errno);
    if (std::rename(name_.c_str(), final_name.c_str()) != 0) {
      fail_io(what_, final_name, "renaming '" + name_ + "' to '" + final_name + "'", errno);
    }
    committed_ = true;
    // Best effort: some file systems refuse fsync on directories, and the data is in place.
    const int dir = ::open(parent_directory(final_name).c_str(), O_RDONLY | O_DIRECTORY);
    if (dir >= 0) {
      ::fsync(dir);
      ::close(dir);
    }
  }

 private:
  std::string name_;
  std::string what_;
  bool committed_ = false;
};

}  // namespace tessera::io::detail
