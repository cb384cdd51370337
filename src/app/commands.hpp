// The subcommands of the tessera program.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace tessera::app {

// `restart`: "" (a new run), a checkpoint path, or "latest". `overwrite`: delete other
// runs' checkpoints in output.dir instead of refusing it (evolve::claim_output_dir).
// Returns the exit code: 0 finished, 10 stopped at the wall-time limit, 11 stopped by a
// signal.
int command_run(const std::string& file, const std::vector<std::string>& overrides,
                const std::string& restart, bool overwrite,
                std::chrono::steady_clock::time_point start);
// `ranks` > 0: also how a run on that many MPI ranks would be decomposed.
int command_check(const std::string& file, const std::vector<std::string>& overrides,
                  int ranks = 0);
// Reads every dataset of a checkpoint (checksums included) and prints what it holds.
int command_verify(const std::string& checkpoint);
// Prints the analytic density of the problem of `file` at time t for each cell "x y z h"
// (centre and width) read from standard input, one value per line.
int command_analytic(const std::string& file, const std::vector<std::string>& overrides,
                     double time);
// Without a name: every problem with its description. With one: its description, its
// parameters and its shipped parameter files (an unknown name is an input error).
int command_problems(const std::string& name = "");
int command_params(const std::string& only);
std::string version_text();

}  // namespace tessera::app
