#include "tessera/core/log.hpp"

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <vector>

namespace tessera {

namespace {
std::atomic<bool> g_quiet{false};
// Per thread: virtual ranks (parallel/virtual_ranks.hpp) are threads of one process.
thread_local int g_rank = 0;
// The log's reader went away (a closed pipe: `tessera run ... | head`): the run goes on
// without its log (SIGPIPE is ignored, app/signals.cpp), saying so once on stderr.
std::atomic<bool> g_stdout_gone{false};

std::string vformat(const char* fmt, va_list args) {
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::vector<char> buf(static_cast<std::size_t>(n > 0 ? n : 0) + 1);
  std::vsnprintf(buf.data(), buf.size(), fmt, args);
  return std::string(buf.data(), static_cast<std::size_t>(n > 0 ? n : 0));
}
}  // namespace

std::string strprintf(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string s = vformat(fmt, args);
  va_end(args);
  return s;
}

void log_line(const std::string& line) {
  if (g_quiet || g_rank != 0 || g_stdout_gone) return;
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  if (std::fflush(stdout) != 0 && errno == EPIPE && !g_stdout_gone.exchange(true))
    std::fputs(
        "tessera: the log's standard output was closed (a pipe's reader ended); the run "
        "goes on without its log, writing its plot files and checkpoints\n",
        stderr);
}

void log_line(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  const std::string s = vformat(fmt, args);
  va_end(args);
  log_line(s);
}

void set_log_quiet(bool quiet) {
  g_quiet = quiet;
}

void set_log_rank(int rank) {
  g_rank = rank;
}

}  // namespace tessera
