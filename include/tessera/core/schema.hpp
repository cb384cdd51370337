// The complete list of Tessera's parameters: the single source for validation, for the
// effective-parameter dump and for the generated reference (docs/parameters.md).
#pragma once

#include "tessera/core/params.hpp"

namespace tessera {

// Core sections plus the [problem] keys of every registered problem.
const ParamSchema& parameter_schema();

// Loads and validates a parameter file with overrides against parameter_schema().
Params load_run_params(const std::string& file, const std::vector<std::string>& overrides);

// Markdown reference of every parameter (core sections, then each problem).
std::string parameter_reference_markdown();

}  // namespace tessera
