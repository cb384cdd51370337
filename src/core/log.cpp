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
// Warnings and notes of this thread's rank since take_rank_messages (several ranks).
thread_local std::vector<std::string> g_messages;
thread_local long long g_messages_dropped = 0;

bool is_message(const std::string& line) {
  return line.rfind("warning: ", 0) == 0 || line.rfind("note: ", 0) == 0;
}

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
  if (g_quiet) return;
  if (is_message(line)) {
    if (g_messages.size() < static_cast<std::size_t>(kHeldMessages))
      g_messages.push_back(line);
    else
      ++g_messages_dropped;
  }
  if (g_rank != 0 || g_stdout_gone) return;
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

std::vector<std::string> take_rank_messages() {
  std::vector<std::string> out;
  out.swap(g_messages);
  if (g_messages_dropped > 0)
    out.push_back(
        strprintf("warning: %lld more warnings and notes were not kept", g_messages_dropped));
  g_messages_dropped = 0;
  return out;
}

}  // namespace tessera
