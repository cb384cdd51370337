// The subcommands of the tessera program.
#pragma once

#include <string>
#include <vector>

namespace tessera::app {

int command_run(const std::string& file, const std::vector<std::string>& overrides);
int command_check(const std::string& file, const std::vector<std::string>& overrides);
int command_problems();
int command_params();
std::string version_text();

}  // namespace tessera::app
