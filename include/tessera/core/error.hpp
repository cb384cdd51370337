// The one exception type of Tessera: carries a category that main() maps to an exit code.
#pragma once

#include <stdexcept>
#include <string>

namespace tessera {

// Exit codes are part of the user interface (docs/user_guide.md, "Exit codes").
enum class ErrorKind {
  kInput = 2,      // bad parameter file, override or command line
  kIo = 3,         // a file could not be read or written
  kNumerical = 4,  // the solution became unphysical
  kInternal = 5,   // a bug: an invariant of the code was violated
  kResources = 6,  // the run needs more memory than the machine, the job or the GPU has
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  ErrorKind kind() const { return kind_; }
  int exit_code() const { return static_cast<int>(kind_); }

 private:
  ErrorKind kind_;
};

}  // namespace tessera
