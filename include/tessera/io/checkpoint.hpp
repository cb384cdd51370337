// Checkpoints: everything a run needs to continue bit for bit (docs/checkpoints.md gives
// the layout). Written at root-step boundaries, where every level has reached the same
// time, so no flux register holds data and no old-time state is read before being
// rewritten: the current state of each level and the loop state below are the whole story.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/io/collective.hpp"
#include "tessera/mesh/mesh.hpp"

namespace tessera::io {

inline constexpr const char* kCheckpointFormat = "tessera-checkpoint";
// Version 2 added RunId, the per-dataset Digest attributes and the file digest; version 3
// made a Digest that of the dataset's rows' digests (digest.hpp: RowDigest), which the
// ranks writing a file together form where the rows are. Versions 1 and 2 are still read
// (version 1 without those checks).
inline constexpr int kCheckpointFormatVersion = 3;

// The time loop's state besides the mesh data.
struct CheckpointState {
  double time = 0;
  std::int64_t step = 0;
  std::vector<std::int64_t> level_steps;  // steps taken by each level
  std::vector<double> level_max_speed;    // last signal speed per level (sets the next dt)
  std::int64_t plot_index = 0;            // index of the next plot file
  double next_plot_time = 0;
  std::int64_t last_plot_step = 0;
  double next_checkpoint_time = 0;
  std::int64_t cell_updates = 0;
  std::int64_t regrid_count = 0;
  std::int64_t floored = 0;
  std::int64_t corrected = 0;        // cells recomputed by first-order flux correction
  std::int64_t reflux_withheld = 0;  // refluxing corrections withheld (unphysical result)
  // Conserved totals at t = 0 (for the log), one per field of the mesh, in pool order.
  std::vector<double> initial_totals;
};

// What a checkpoint says about itself, read before anything else.
struct CheckpointHeader {
  int format_version = 0;
  std::string code_version;
  std::string precision;
  std::string problem;
  // The identity of the run family (a fresh run and every restart of it): clean-up and
  // the output-directory checks touch only checkpoints of the same family. "" in version 1.
  std::string run_id;
  std::string parameters;  // effective parameters (TOML) of the run that wrote it
  double time = 0;
  std::int64_t step = 0;
};

// "<dir>/<problem>.chk.<step, 8 digits>.h5"
std::string checkpoint_file_name(const std::string& dir, const std::string& problem,
                                 std::int64_t step);
// Complete checkpoints of `problem` in `dir` (final names only; a temporary name is never
// listed), ordered by step, oldest first.
std::vector<std::string> list_checkpoints(const std::string& dir, const std::string& problem);

// Writes under a temporary name, syncs and renames: the previous checkpoint is intact
// until the new one is complete. Throws Error(kIo) naming the file on failure. With a
// Collective, every rank calls it with its store (the patches it owns) and all throw the
// same error; rank 0 checks the free space, seals the file and renames it.
void write_checkpoint(const std::string& path, const mesh::Mesh& mesh,
                      const CheckpointHeader& header, const CheckpointState& state,
                      const Collective* collective = nullptr);

// Error(kIo) unless `path` is a regular file: missing, a directory, or a pipe, socket or
// device (which would block or cannot be read as HDF5), each said so.
void require_checkpoint_file(const std::string& path);

// The file digest of a checkpoint written with one (format version 2 on): false when the
// file has no digest block (another format, or a block damaged beyond recognition: the
// caller decides with the format version); true when every byte after the block matches
// the stored digest; Error(kIo) naming the file when any byte changed. Reads the whole file
// and parses none of it, so it runs before HDF5 interprets damaged structures.
bool check_file_digest(const std::string& path);

// HDF5 (a build without its thread-safe option) must not be entered by two threads at once:
// the virtual ranks of a process (threads) take this lock around their reads of a
// checkpoint. MPI ranks are processes and never wait on it.
std::mutex& hdf5_mutex();

// Opens a checkpoint and checks what it is before anything is trusted. Errors:
// kInput for a file that is not a Tessera checkpoint of this format version and precision;
// kIo for an unreadable, truncated or corrupt file (checksum mismatch, missing dataset).
class CheckpointReader {
 public:
  explicit CheckpointReader(std::string path);
  ~CheckpointReader();
  CheckpointReader(const CheckpointReader&) = delete;
  CheckpointReader& operator=(const CheckpointReader&) = delete;

  const std::string& path() const { return path_; }
  const CheckpointHeader& header() const { return header_; }
  // Whether the datasets carry digests (format version 2 on); every read checks them.
  bool has_digests() const;
  // Checks the file digest (every byte after the 512-byte user block) against the one the
  // writer stored in that block; Error(kIo) when a byte changed anywhere. Reads the whole
  // file: `tessera verify` calls it, restarts rely on the dataset digests. No-op for version 1.
  void verify_file_digest() const;
  CheckpointState state() const;
  // The families above the root, as mesh::Mesh takes them.
  mesh::Hierarchy hierarchy() const;
  // The names of the fields the checkpoint holds, in pool order (the FieldNames attribute
  // of /data; files written before it existed hold the 5 hydro fields rho, vel1, vel2,
  // vel3, press).
  std::vector<std::string> field_names() const;
  // Fills the current time level of every patch of `mesh`, which must have been built from
  // hierarchy() with the checkpoint's geometry (checked patch by patch). Error(kInput) when
  // the mesh's fields are not the checkpoint's (names, in order). A sparse mesh (a rank's
  // store) receives the families it holds only; every byte is still read and checked
  // against the digests, a slab at a time.
  void read_data(mesh::Mesh& mesh) const;
  // hierarchy() and read_data() together: the whole mesh with the checkpoint's data, for
  // the geometry of the checkpoint's parameters and the fields of the run. with_data =
  // false: the structure only (a store holding nothing), for read_data once the families
  // to hold are chosen.
  std::unique_ptr<mesh::Mesh> read_mesh(const mesh::Geometry& geometry,
                                        const mesh::FieldRegistry& fields,
                                        bool with_data = true) const;

 private:
  void read_header();  // the constructor's checks of the open file

  std::string path_;
  long long file_ = -1;  // hid_t
  CheckpointHeader header_;
};

}  // namespace tessera::io
