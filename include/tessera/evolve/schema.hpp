// The complete list of Tessera's parameters: the single source for validation, for the
// effective-parameter dump and for the generated reference (docs/parameters.md).
#pragma once

#include <optional>
#include <string>

#include "tessera/core/params.hpp"

namespace tessera {

// Core sections plus the [problem] keys of every registered problem.
const ParamSchema& parameter_schema();

// Loads and validates a parameter file with overrides against parameter_schema().
Params load_run_params(const std::string& file, const std::vector<std::string>& overrides);
// The same from the file's text (read_param_file), `file` naming it in messages.
Params load_run_params_text(const std::string& text, const std::string& file,
                            const std::vector<std::string>& overrides);

// Seconds of a run.wall_time value ("hh:mm:ss"; "" gives 0: no limit); nullopt when malformed.
std::optional<double> parse_wall_time(const std::string& text);

// Whether a key may differ between a checkpoint and the run restarted from it: the end of
// the run, threads, backend, GPU batching and outputs; nothing that changes the solution.
bool may_change_on_restart(const std::string& name);
// Those keys, listed for messages and docs (names in backticks when `markdown`).
std::string restart_changeable_keys(bool markdown);

// Markdown reference of every parameter (core sections, then each problem).
std::string parameter_reference_markdown(const std::string& only = "");

}  // namespace tessera
