// The subcommands of the tessera program.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace tessera::app {

// `restart`: "" (a new run), a checkpoint path, or "latest". Returns the exit code: 0
// finished, 10 stopped at the wall-time limit, 11 stopped by a signal.
int command_run(const std::string& file, const std::vector<std::string>& overrides,
                const std::string& restart, std::chrono::steady_clock::time_point start);
int command_check(const std::string& file, const std::vector<std::string>& overrides);
int command_problems();
int command_params();
std::string version_text();

}  // namespace tessera::app
