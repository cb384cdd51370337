// Ownership of an output directory: one run at a time writes into it, and the checkpoints
// a run may replace or delete are those of its own run family (the run and its restarts,
// identified by the RunId every checkpoint stores).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tessera::io {

// A new run identity: 128 random bits as 32 hexadecimal digits.
std::string new_run_id();

// The RunId a checkpoint stores ("" for a version-1 file), read from its header only;
// nullopt when the file cannot be opened as a Tessera checkpoint.
std::optional<std::string> checkpoint_run_id(const std::string& path);

// The plot files of `problem` in `dir` ("<problem>.<digits>.athdf" and the diagnostic
// "<problem>.failure.<digits>.athdf"; each has a ".xdmf" beside it), sorted by name.
std::vector<std::string> list_plot_files(const std::string& dir, const std::string& problem);
// The RunId a plot file stores ("" for a file written before plot files had one); nullopt
// when the file cannot be opened as HDF5.
std::optional<std::string> plot_run_id(const std::string& path);

// An exclusive lock on "<dir>/.tessera.lock" (flock), taken when constructed and held until
// destroyed or the process ends: the kernel releases it when its holder dies, so a killed
// run never leaves a directory locked. The file names the holder (pid, host, start time)
// for the error message of the run that finds the directory taken: Error(kInput). Creates
// `dir` if needed. On a file system without flock support the run goes on unlocked, with a
// warning in the log.
class OutputDirLock {
 public:
  explicit OutputDirLock(const std::string& dir);
  ~OutputDirLock();
  OutputDirLock(const OutputDirLock&) = delete;
  OutputDirLock& operator=(const OutputDirLock&) = delete;
  bool locked() const { return fd_ >= 0; }
  // Whether the directory and the lock file this run holds are still there (a user or a
  // clean-up script may remove output.dir during the run, and the next output would make
  // it again, unlocked): if not, they are made and locked again, with a warning; another
  // run that took the directory meanwhile is Error(kInput). Called before each output.
  void check();

 private:
  void acquire();
  std::string dir_;
  int fd_ = -1;
};

}  // namespace tessera::io
