// Ownership of an output directory: one run at a time writes into it, and the checkpoints
// a run may replace or delete are those of its own run family (the run and its restarts,
// identified by the RunId every checkpoint stores).
#pragma once

#include <optional>
#include <string>

namespace tessera::io {

// A new run identity: 128 random bits as 32 hexadecimal digits.
std::string new_run_id();

// The RunId a checkpoint stores ("" for a version-1 file), read from its header only;
// nullopt when the file cannot be opened as a Tessera checkpoint.
std::optional<std::string> checkpoint_run_id(const std::string& path);

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

 private:
  int fd_ = -1;
};

}  // namespace tessera::io
