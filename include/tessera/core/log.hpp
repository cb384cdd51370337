// Run log on standard output (one line per step, summaries), printf-style.
#pragma once

#include <string>
#include <vector>

namespace tessera {

// Formats like printf into a std::string.
std::string strprintf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Writes one line to standard output and flushes, so batch logs are complete at a crash.
void log_line(const std::string& line);
void log_line(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Silences log_line (tests that run many simulations).
void set_log_quiet(bool quiet);

// The rank the calling thread works for (a run of several ranks): only rank 0 logs.
void set_log_rank(int rank);

// Several ranks: the "warning: ..." and "note: ..." lines the calling thread's rank logged
// since the last call (on rank 0, those it printed; elsewhere, those it held back, at
// most kHeldMessages of them and a line saying how many more), for
// parallel::forward_rank_messages to print once on rank 0.
inline constexpr int kHeldMessages = 64;
std::vector<std::string> take_rank_messages();

}  // namespace tessera
