// The run's history file, "<output.dir>/<problem>.hst" (output.history): a row per root step
// or per interval with the time, the time step, the conserved totals, the floored cells,
// the cells per level and the wall time per stage, in the spirit of Athena++'s .hst.
// Plain text: '#' header lines (the run, then the columns as "[1]=step [2]=time ..."), then
// one line of numbers per row, readable by numpy.loadtxt. Each row is flushed when written,
// so a run that dies leaves every row it reached.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace tessera::io {

std::string history_file_name(const std::string& dir, const std::string& problem);
// The RunId a history file names in its first line; nullopt when it has none (not a
// Tessera history file, or unreadable).
std::optional<std::string> history_run_id(const std::string& path);

class HistoryFile {
 public:
  // restart_step < 0: a fresh run, the file is written anew. Else the file of this run
  // family is kept up to that step (later rows came from a continuation the restart
  // replaces and are dropped) and rows are appended; a file of other columns (or none)
  // is moved aside to "<path>.before<step>" (the log says so) and a new one begun.
  // Error(kIo) when the file cannot be written.
  HistoryFile(std::string path, std::vector<std::string> columns, const std::string& run_id,
              const std::string& problem, long long restart_step);
  ~HistoryFile();
  HistoryFile(const HistoryFile&) = delete;
  HistoryFile& operator=(const HistoryFile&) = delete;

  // One row: values[0] is the step (written as an integer), one value per column.
  void row(const std::vector<double>& values);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::size_t columns_;
  std::FILE* file_ = nullptr;
};

}  // namespace tessera::io
