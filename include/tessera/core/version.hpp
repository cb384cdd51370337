// Code version and the git commit the binary was built from (set at configure time).
#pragma once

#include <string>

namespace tessera {

const char* version();
const char* git_hash();
// "0.1.0 (abcdef123456, double precision)": what outputs record and --version prints.
std::string version_string();

}  // namespace tessera
