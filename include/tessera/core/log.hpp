// Run log on standard output (one line per step, summaries), printf-style.
#pragma once

#include <string>

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

}  // namespace tessera
