#include "tessera/io/history.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tessera/core/error.hpp"
#include "tessera/core/log.hpp"

namespace tessera::io {

namespace {

constexpr const char* kFirst = "# Tessera history of problem ";

std::string column_line(const std::vector<std::string>& columns) {
  std::string line = "#";
  for (std::size_t c = 0; c < columns.size(); ++c)
    line += strprintf(" [%zu]=%s", c + 1, columns[c].c_str());
  return line;
}

[[noreturn]] void io_error(const std::string& what, const std::string& path) {
  throw Error(ErrorKind::kIo, what + " '" + path + "': " + std::strerror(errno));
}

}  // namespace

std::string history_file_name(const std::string& dir, const std::string& problem) {
  return dir + "/" + problem + ".hst";
}

std::optional<std::string> history_run_id(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line) || line.rfind(kFirst, 0) != 0) return std::nullopt;
  const auto at = line.find(", run ");
  if (at == std::string::npos) return std::nullopt;
  return line.substr(at + 6);
}

HistoryFile::HistoryFile(std::string path, std::vector<std::string> columns,
                         const std::string& run_id, const std::string& problem,
                         long long restart_step)
    : path_(std::move(path)), columns_(columns.size()) {
  const std::string first = kFirst + problem + ", run " + run_id;
  const std::string names = column_line(columns);
  std::vector<std::string> kept;  // the rows of the run family up to restart_step
  namespace fs = std::filesystem;
  std::error_code ec;
  if (restart_step >= 0 && fs::exists(path_, ec)) {
    std::ifstream in(path_);
    std::string line, head, cols;
    std::getline(in, head);
    std::getline(in, cols);
    if (head == first && cols == names) {
      while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') {
          kept.push_back(line);
          continue;
        }
        // A row of the right width whose step is a number; else (a row cut off by a crash)
        // it and the rest are dropped.
        std::istringstream words(line);
        long long step = 0;
        std::size_t width = 0;
        bool number = static_cast<bool>(words >> step);
        for (std::string w; number && words >> w;) ++width;
        if (!number || width + 1 != columns_) {
          log_line("history: '%s': a malformed row (cut off?) and the rows after it dropped",
                   path_.c_str());
          break;
        }
        if (step > restart_step) break;  // the replaced continuation
        kept.push_back(line);
      }
    } else {
      const std::string aside = path_ + strprintf(".before%lld", restart_step);
      fs::rename(path_, aside, ec);
      if (ec)
        throw Error(ErrorKind::kIo, "cannot move the history file '" + path_ + "' aside to '" +
                                        aside + "': " + ec.message());
      log_line(
          "history: '%s' has other columns or another run than this restart's: moved to '%s', "
          "a new one begins",
          path_.c_str(), aside.c_str());
    }
  }
  const fs::path parent = fs::path(path_).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);  // a failure shows at fopen
  // Written whole under a temporary name and renamed, so that a failure here leaves the
  // earlier file as it was; then appended to.
  const std::string temporary = path_ + ".tmp";
  std::FILE* f = std::fopen(temporary.c_str(), "w");
  if (!f) io_error("cannot write the history file", temporary);
  std::fprintf(f, "%s\n%s\n", first.c_str(), names.c_str());
  for (const std::string& line : kept) std::fprintf(f, "%s\n", line.c_str());
  if (restart_step >= 0) std::fprintf(f, "# restart from step %lld\n", restart_step);
  const bool written = std::fflush(f) == 0;
  if (std::fclose(f) != 0 || !written || std::rename(temporary.c_str(), path_.c_str()) != 0) {
    std::remove(temporary.c_str());
    io_error("cannot write the history file", path_);
  }
  file_ = std::fopen(path_.c_str(), "a");
  if (!file_) io_error("cannot write the history file", path_);
}

HistoryFile::~HistoryFile() {
  if (file_) std::fclose(file_);
}

void HistoryFile::row(const std::vector<double>& values) {
  if (values.size() != columns_)
    throw Error(ErrorKind::kInternal,
                strprintf("history row of %zu values for %zu columns", values.size(), columns_));
  std::string line = strprintf("%lld", static_cast<long long>(values[0]));
  for (std::size_t c = 1; c < values.size(); ++c) line += strprintf(" %.15e", values[c]);
  line += '\n';
  if (std::fputs(line.c_str(), file_) < 0 || std::fflush(file_) != 0)
    io_error("cannot write the history file", path_);
}

}  // namespace tessera::io
