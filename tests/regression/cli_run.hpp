// Runs the tessera program as a user would, for the tests of its command line: exit code,
// everything it printed, and the wall time it took.
#pragma once

#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace tessera::testing {

struct CliResult {
  int status = -1;     // exit code; -1 when killed by a signal or not started
  std::string output;  // stdout and stderr
  double seconds = 0;  // wall time
};

// `args` go to the shell after the binary's path (quote them as the shell needs).
inline CliResult run_tessera(const std::string& args) {
  const std::string cmd = std::string(TESSERA_BINARY) + " " + args + " 2>&1";
  CliResult r;
  const auto t0 = std::chrono::steady_clock::now();
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  while (std::fgets(buf, sizeof(buf), pipe)) r.output += buf;
  const int st = pclose(pipe);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace tessera::testing
