// Strictly validated run parameters: the schema, the loader and the effective parameter set.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tessera {

// kRealList: a number, or an array of numbers (e.g. one per refinement level).
enum class ParamType { kInt, kReal, kBool, kString, kInt3, kReal3, kRealList };

using ParamValue =
    std::variant<std::monostate, std::int64_t, double, bool, std::string,
                 std::array<std::int64_t, 3>, std::array<double, 3>, std::vector<double>>;

// Closed or open numeric interval applied to a number or to each element of an array.
struct Range {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;
  bool hi_open = false;
  bool contains(double v) const;
  std::string describe() const;  // "(0, 1]", ">= 16", ...
};

// One key of the parameter file. A spec without default value is required.
struct ParamSpec {
  std::string section;
  std::string key;
  ParamType type = ParamType::kReal;
  ParamValue default_value;  // std::monostate: required
  std::string help;
  Range range;
  std::int64_t multiple_of = 0;      // integers (and int arrays) must be multiples of this
  std::vector<std::string> choices;  // strings must be one of these, when not empty

  std::string name() const { return section + "." + key; }
  std::string expected() const;  // "a real number in (0, 1]", "one of: hll, hllc", ...
};

// The validated, complete parameter set of a run (defaults filled in).
class Params {
 public:
  std::int64_t integer(std::string_view name) const;
  double real(std::string_view name) const;
  bool boolean(std::string_view name) const;
  const std::string& string(std::string_view name) const;
  std::array<std::int64_t, 3> int3(std::string_view name) const;
  std::array<double, 3> real3(std::string_view name) const;
  // A kRealList value, always as an array (a single number gives one element).
  std::vector<double> real_list(std::string_view name) const;

  // The effective parameters as a TOML document, in schema order; parses back to the
  // same values (floats are written in their shortest round-trip form).
  std::string to_toml() const;

  void set(const ParamSpec& spec, ParamValue value);

  // Every key, in schema order, and its value (for comparing two parameter sets).
  const std::vector<ParamSpec>& specs() const { return specs_; }
  const ParamValue& value(std::string_view name) const;

 private:
  const ParamValue& get(std::string_view name, ParamType type) const;
  std::vector<ParamSpec> specs_;  // in insertion order
  std::map<std::string, ParamValue, std::less<>> values_;
};

// What the loader validates against: fixed sections plus the `[problem]` keys of the
// problem that `problem.name` selects.
struct ParamSchema {
  std::vector<ParamSpec> specs;
  std::vector<std::string> sections;  // allowed section names, in output order
  // Returns the problem's own specs (section "problem"), or throws tessera::Error for
  // an unknown problem name.
  std::function<std::vector<ParamSpec>(const std::string& problem)> problem_specs;
};

// Parses `file`, applies `overrides` ("section.key=value") and validates everything.
// Every error names the file and line (or the override), the key and what was expected,
// and is thrown as tessera::Error(kInput).
Params load_params(const std::string& file, const std::vector<std::string>& overrides,
                   const ParamSchema& schema);

// The text of parameter file `file`: a regular file, or a pipe (the shell's <(...), a named
// pipe) read up to its writer's end; a directory, an unreadable file or a pipe that no
// program writes to within 5 s is an Error(kInput) naming the file. A run of several ranks
// reads it on rank 0 only and hands the text to the others (a pipe can be read once).
std::string read_param_file(const std::string& file);

// Same as load_params, from TOML text (used by tests, by restart and by the ranks of a run
// other than rank 0).
Params load_params_from_string(const std::string& text, const std::string& source_name,
                               const std::vector<std::string>& overrides,
                               const ParamSchema& schema);

std::string format_param_value(const ParamValue& v);

// Text (a name, a string value, an override) for an error message: itself when short,
// else its first `max_chars` characters followed by "... (N characters)".
std::string shorten_for_message(std::string_view text, std::size_t max_chars = 64);

}  // namespace tessera
