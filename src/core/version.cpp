#include "tessera/core/version.hpp"

#include "tessera/core/real.hpp"

namespace tessera {

std::string version_string() {
  return std::string(version()) + " (" + git_hash() + ", " + kPrecisionName + " precision)";
}

}  // namespace tessera
