// Parameter loading with toml11: every mistake in a parameter file or an override is an
// error that says where it is and what was expected (no silent defaults for typos).
#include "tessera/core/params.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <toml.hpp>

#include "src/core/toml_linear.hpp"
#include "tessera/core/error.hpp"

namespace tessera {

namespace {

std::string format_real(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  std::string s(buf, res.ptr);
  if (std::isfinite(v) && s.find_first_of(".eE") == std::string::npos) s += ".0";
  if (s == "inf") return "inf";
  if (s == "-inf") return "-inf";
  return s;
}

// A TOML basic string (control characters escaped, so that it parses back).
std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
      case '\\':
        out += '\\';
        out += c;
        break;
      case '\b':
        out += "\\b";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// Values in error messages are shown inline and cut short: an array's first elements,
// a string's first characters, then how long the whole is.
constexpr std::size_t kShownElements = 8;    // of an array or table, at the top level
constexpr std::size_t kShownNested = 3;      // of an array or table inside another
constexpr std::size_t kShownChars = 64;      // of a string or a name
constexpr std::size_t kShownValue = 400;     // of a value shown whole
constexpr std::size_t kShownOverride = 120;  // of an override's text

bool utf8_continuation(char c) {
  return (static_cast<unsigned char>(c) & 0xc0) == 0x80;
}

std::size_t count_chars(std::string_view s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return !utf8_continuation(c); }));
}

// The first `max_chars` bytes of `s`, not ending inside a UTF-8 character.
std::string_view head(std::string_view s, std::size_t max_chars) {
  if (s.size() <= max_chars) return s;
  std::size_t n = max_chars;
  while (n > 0 && utf8_continuation(s[n])) --n;
  return s.substr(0, n);
}

// A string value for a message: quoted, cut after `max_chars`.
std::string quote_for_message(std::string_view s, std::size_t max_chars) {
  if (s.size() <= max_chars) return quote(s);
  std::string q = quote(head(s, max_chars));
  q.insert(q.size() - 1, "...");
  return q + " (" + std::to_string(count_chars(s)) + " characters)";
}

// Levenshtein distance, for "did you mean" hints on mistyped keys.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string suggestion(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = 3;  // only close matches are worth suggesting
  for (const auto& c : candidates) {
    // The distance is at least the difference in length (which spares long names).
    if (std::max(word.size(), c.size()) - std::min(word.size(), c.size()) >= best_d) continue;
    const std::size_t d = edit_distance(word, c);
    if (d < best_d) best_d = d, best = c;
  }
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

// For a value outside a choice list: the choice a common other name means (a user who
// types run.backend = "gpu" means "cuda", not the "cpu" one letter away), else the closest.
std::string choice_suggestion(const std::string& word, const std::vector<std::string>& choices) {
  static const std::pair<const char*, const char*> kMeans[] = {
      {"gpu", "cuda"}, {"nvidia", "cuda"}, {"device", "cuda"}, {"host", "cpu"}};
  std::string lower = word;
  for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& [other, choice] : kMeans)
    if (lower == other && std::find(choices.begin(), choices.end(), choice) != choices.end())
      return std::string(" (did you mean '") + choice + "'?)";
  return suggestion(word, choices);
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

std::string override_origin(const std::string& text) {
  return "command-line override '" + shorten_for_message(text, kShownOverride) + "'";
}

// Where a value came from: "file.toml:12" or "command-line override 'a.b=c'".
struct Origin {
  std::string text;
  static Origin of(const TomlValue& v, const std::map<std::string, std::string>& overrides,
                   const std::string& name) {
    if (auto it = overrides.find(name); it != overrides.end()) return {override_origin(it->second)};
    const auto loc = v.location();
    return {loc.file_name() + ":" + std::to_string(loc.line())};
  }
};

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw Error(ErrorKind::kInput, where + ": " + what);
}

double as_number(const TomlValue& v, bool* ok) {
  *ok = true;
  if (v.is_integer()) return static_cast<double>(v.as_integer());
  if (v.is_floating()) return v.as_floating();
  *ok = false;
  return 0;
}

// A TOML value for an error message, inline and short whatever its size.
std::string describe_toml(const TomlValue& v, int depth = 0) {
  const std::size_t shown = depth == 0 ? kShownElements : kShownNested;
  const std::size_t chars = depth == 0 ? kShownChars : kShownChars / 4;
  switch (v.type()) {
    case toml::value_t::boolean:
      return v.as_boolean() ? "true" : "false";
    case toml::value_t::integer:
      return std::to_string(v.as_integer());
    case toml::value_t::floating:
      return format_real(v.as_floating());
    case toml::value_t::string:
      return quote_for_message(v.as_string().str, chars);
    case toml::value_t::array: {
      const auto& a = v.as_array();
      if (depth >= 2) return a.empty() ? "[]" : "[...]";
      std::string out = "[";
      for (std::size_t i = 0; i < std::min(a.size(), shown); ++i)
        out += (i ? ", " : "") + describe_toml(a[i], depth + 1);
      if (a.size() > shown) out += ", ... (" + std::to_string(a.size()) + " elements)";
      return out + "]";
    }
    case toml::value_t::table: {
      const auto& t = v.as_table();
      if (depth >= 2) return t.empty() ? "{}" : "{...}";
      std::string out = "{";
      std::size_t i = 0;
      for (auto it = t.begin(); it != t.end() && i < shown; ++it, ++i)
        out += (i ? ", " : "") + std::string(head(it->first, chars)) + " = " +
               describe_toml(it->second, depth + 1);
      if (t.size() > shown) out += ", ... (" + std::to_string(t.size()) + " keys)";
      return out + "}";
    }
    default: {  // dates and times, short
      std::ostringstream os;
      os << v;
      std::string s = os.str();
      while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
      return s;
    }
  }
}

std::string describe_value(const TomlValue& v) {
  const std::string s = describe_toml(v);
  return s.size() <= kShownValue ? s : std::string(head(s, kShownValue)) + "...";
}

[[noreturn]] void out_of_range(const ParamSpec& spec, const std::string& where,
                               const std::string& shown, const std::string& note = "") {
  fail(where, spec.name() + " = " + shown + " is out of range: expected " + spec.expected() + note);
}

void check_number(const ParamSpec& spec, double x, const std::string& where,
                  const std::string& shown) {
  if (!std::isfinite(x) || !spec.range.contains(x)) out_of_range(spec, where, shown);
}

void check_integer(const ParamSpec& spec, std::int64_t i, const std::string& where,
                   const std::string& shown) {
  check_number(spec, static_cast<double>(i), where, shown);
  if (spec.multiple_of > 0 && i % spec.multiple_of != 0) out_of_range(spec, where, shown);
}

// The value of an integer key (or of one element of it): a TOML integer. A float is the
// wrong type, but an integral one beyond 64 bits (as toml11 gives an integer literal too
// large for 64 bits, see read_integer_literal) is out of range.
std::optional<std::int64_t> as_int64(const ParamSpec& spec, const TomlValue& v,
                                     const std::string& where, const std::string& shown) {
  if (v.is_integer()) return v.as_integer();
  if (v.is_floating()) {
    const double x = v.as_floating();
    constexpr double kTwo63 = 9223372036854775808.0;
    // -2^63 itself, as a float, stands for a literal that was rounded to it.
    if (std::isfinite(x) && std::trunc(x) == x && (x >= kTwo63 || x <= -kTwo63))
      out_of_range(spec, where, shown,
                   " (integers are 64-bit: from -9223372036854775808 to 9223372036854775807)");
  }
  return std::nullopt;
}

ParamValue convert(const ParamSpec& spec, const TomlValue& v, const std::string& where) {
  const std::string shown = describe_value(v);
  auto wrong = [&]() -> ParamValue {
    std::string hint;
    // 1e6 or 16.0 for an integer key: say how an integer is written.
    const bool integral_float = v.is_floating() && std::isfinite(v.as_floating()) &&
                                std::trunc(v.as_floating()) == v.as_floating();
    if ((spec.type == ParamType::kInt || spec.type == ParamType::kInt3) && integral_float)
      hint = " (write integers without a decimal point or exponent)";
    fail(where,
         spec.name() + " = " + shown + " has the wrong type: expected " + spec.expected() + hint);
  };
  bool ok = false;
  switch (spec.type) {
    case ParamType::kInt: {
      const auto i = as_int64(spec, v, where, shown);
      if (!i) return wrong();
      check_integer(spec, *i, where, shown);
      return *i;
    }
    case ParamType::kReal: {
      const double x = as_number(v, &ok);
      if (!ok) return wrong();
      check_number(spec, x, where, shown);
      return x;
    }
    case ParamType::kBool:
      if (!v.is_boolean()) return wrong();
      return v.as_boolean();
    case ParamType::kString: {
      if (!v.is_string()) return wrong();
      std::string s = v.as_string().str;
      if (!spec.choices.empty() &&
          std::find(spec.choices.begin(), spec.choices.end(), s) == spec.choices.end())
        fail(where, spec.name() + " = " + quote_for_message(s, kShownChars) +
                        " is not allowed: expected " + spec.expected() +
                        choice_suggestion(s, spec.choices));
      return s;
    }
    case ParamType::kRealList: {
      std::vector<double> list;
      if (v.is_array()) {
        if (v.as_array().empty()) return wrong();
        list.reserve(v.as_array().size());
        for (const auto& e : v.as_array()) {
          list.push_back(as_number(e, &ok));
          if (!ok) return wrong();
        }
      } else {
        list.push_back(as_number(v, &ok));
        if (!ok) return wrong();
      }
      for (double x : list) check_number(spec, x, where, shown);
      return list;
    }
    case ParamType::kInt3:
    case ParamType::kReal3: {
      if (!v.is_array() || v.as_array().size() != 3) return wrong();
      std::array<std::int64_t, 3> ia{};
      std::array<double, 3> ra{};
      for (int i = 0; i < 3; ++i) {
        const auto& e = v.as_array()[i];
        if (spec.type == ParamType::kInt3) {
          const auto n = as_int64(spec, e, where, shown);
          if (!n) return wrong();
          ia[i] = *n;
          check_integer(spec, ia[i], where, shown);
        } else {
          ra[i] = as_number(e, &ok);
          if (!ok) return wrong();
          check_number(spec, ra[i], where, shown);
        }
      }
      if (spec.type == ParamType::kInt3) return ia;
      return ra;
    }
  }
  return wrong();
}

// Parses an override's value as TOML; text that is not a TOML value (e.g. `y` in
// `problem.direction=y`) is taken as a string so users need not quote on the shell.
TomlValue parse_override_value(const std::string& text, bool want_string) {
  if (want_string) {
    std::string s = text;
    if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front())
      s = s.substr(1, s.size() - 2);
    return TomlValue(s);
  }
  try {
    std::istringstream is("v = " + text);
    auto doc = toml::parse<toml::discard_comments, std::map, std::vector>(is, "<override>");
    return doc.as_table().at("v");
  } catch (const std::exception&) {
    return TomlValue(text);
  }
}

const ParamSpec* find_spec(const std::vector<ParamSpec>& specs, const std::string& section,
                           const std::string& key) {
  for (const auto& s : specs)
    if (s.section == section && s.key == key) return &s;
  return nullptr;
}

std::vector<std::string> keys_of(const std::vector<ParamSpec>& specs, const std::string& section) {
  std::vector<std::string> out;
  for (const auto& s : specs)
    if (s.section == section) out.push_back(s.key);
  return out;
}

Params validate(TomlValue& root, const std::map<std::string, std::string>& overrides,
                const std::string& source, const ParamSchema& schema) {
  if (!root.is_table()) fail(source, "expected a TOML table at top level");
  auto& top = root.as_table();
  // Top level: only known sections, each a table.
  for (auto& [name, value] : top) {
    const bool known =
        std::find(schema.sections.begin(), schema.sections.end(), name) != schema.sections.end();
    const std::string where = Origin::of(value, overrides, name).text;
    const std::string shown = shorten_for_message(name, kShownChars);
    if (!known)
      fail(where, "unknown section [" + shown + "]" + suggestion(name, schema.sections) +
                      "; sections are: " + join(schema.sections));
    if (!value.is_table()) fail(where, "'" + shown + "' must be a section ([" + shown + "])");
  }
  // The problem's own keys depend on problem.name, so resolve that first.
  std::vector<ParamSpec> specs = schema.specs;
  if (top.count("problem") && top.at("problem").as_table().count("name")) {
    const auto& v = top.at("problem").as_table().at("name");
    const std::string where = Origin::of(v, overrides, "problem.name").text;
    if (!v.is_string()) fail(where, "problem.name has the wrong type: expected a string");
    std::vector<ParamSpec> extra;
    try {
      extra = schema.problem_specs(v.as_string().str);
    } catch (const Error& e) {
      fail(where, e.what());
    }
    specs.insert(specs.end(), extra.begin(), extra.end());
  }
  Params params;
  for (const auto& section : schema.sections) {
    const TomlValue::table_type empty;
    const auto& table = top.count(section) ? top.at(section).as_table() : empty;
    for (const auto& [key, value] : table) {
      const std::string name = section + "." + key;
      const std::string where = Origin::of(value, overrides, name).text;
      if (!find_spec(specs, section, key)) {
        const auto known = keys_of(specs, section);
        fail(where, "unknown key '" + shorten_for_message(name, kShownChars) + "'" +
                        suggestion(key, known) + "; [" + section +
                        "] accepts: " + (known.empty() ? std::string("no keys") : join(known)));
      }
    }
    for (const auto& spec : specs) {
      if (spec.section != section) continue;
      if (auto it = table.find(spec.key); it != table.end()) {
        params.set(spec,
                   convert(spec, it->second, Origin::of(it->second, overrides, spec.name()).text));
      } else if (std::holds_alternative<std::monostate>(spec.default_value)) {
        fail(source, "missing required key '" + spec.name() + "': expected " + spec.expected() +
                         " (" + spec.help + ")");
      } else {
        params.set(spec, spec.default_value);
      }
    }
  }
  return params;
}

Params load_impl(TomlValue root, const std::string& source,
                 const std::vector<std::string>& overrides, const ParamSchema& schema) {
  std::map<std::string, std::string> origin;
  for (const auto& text : overrides) {
    const auto eq = text.find('=');
    const std::string lhs = eq == std::string::npos ? text : text.substr(0, eq);
    const auto dot = lhs.find('.');
    if (eq == std::string::npos || dot == std::string::npos || dot == 0 || dot + 1 == lhs.size() ||
        lhs.find('.', dot + 1) != std::string::npos)
      fail(override_origin(text), "expected the form section.key=value");
    const std::string section = lhs.substr(0, dot);
    const std::string key = lhs.substr(dot + 1);
    const std::string name = section + "." + key;
    origin[name] = text;
    origin.emplace(section, text);
    // String-typed keys (problem keys included) take the raw text, quoted or not.
    bool want_string = false;
    if (const ParamSpec* spec = find_spec(schema.specs, section, key))
      want_string = spec->type == ParamType::kString;
    if (section == "problem" && key != "name") {
      try {
        const auto& table = root.as_table();
        std::string problem;
        if (origin.count("problem.name")) {
          const auto& o = origin.at("problem.name");
          problem = o.substr(o.find('=') + 1);
        } else if (table.count("problem") && table.at("problem").as_table().count("name") &&
                   table.at("problem").as_table().at("name").is_string()) {
          problem = table.at("problem").as_table().at("name").as_string().str;
        }
        if (!problem.empty()) {
          // The specs must outlive the pointer find_spec returns into them.
          const std::vector<ParamSpec> specs = schema.problem_specs(problem);
          if (const ParamSpec* spec = find_spec(specs, section, key))
            want_string = spec->type == ParamType::kString;
        }
      } catch (const Error&) {
        // An unknown problem name is reported by validate() with its location.
      }
    }
    auto& top = root.as_table();
    if (!top.count(section)) top[section] = TomlValue::table_type{};
    if (!top[section].is_table())
      fail(override_origin(text),
           "'" + shorten_for_message(section, kShownChars) + "' is not a section");
    top[section].as_table()[key] = parse_override_value(text.substr(eq + 1), want_string);
  }
  return validate(root, origin, source, schema);
}

}  // namespace

bool Range::contains(double v) const {
  const bool lo_ok = lo_open ? v > lo : v >= lo;
  const bool hi_ok = hi_open ? v < hi : v <= hi;
  return lo_ok && hi_ok;
}

// Range bounds read best in %g form ("(0, 1]"), unlike stored values, which round-trip.
std::string format_bound(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

std::string Range::describe() const {
  const bool has_lo = std::isfinite(lo);
  const bool has_hi = std::isfinite(hi);
  if (has_lo && has_hi)
    return std::string(lo_open ? "(" : "[") + format_bound(lo) + ", " + format_bound(hi) +
           (hi_open ? ")" : "]");
  if (has_lo) return std::string(lo_open ? "> " : ">= ") + format_bound(lo);
  if (has_hi) return std::string(hi_open ? "< " : "<= ") + format_bound(hi);
  return "";
}

std::string ParamSpec::expected() const {
  std::string what;
  const std::string in_range =
      range.describe().empty()
          ? ""
          : (range.describe()[0] == '[' || range.describe()[0] == '(' ? " in " + range.describe()
                                                                      : " " + range.describe());
  const std::string mult =
      multiple_of > 0 ? ", a multiple of " + std::to_string(multiple_of) : std::string();
  switch (type) {
    case ParamType::kInt:
      return "an integer" + in_range + mult;
    case ParamType::kReal:
      return "a number" + in_range;
    case ParamType::kBool:
      return "true or false";
    case ParamType::kString:
      return choices.empty() ? "a string" : "one of: " + join(choices);
    case ParamType::kInt3:
      return "an array of 3 integers" + in_range + mult;
    case ParamType::kReal3:
      return "an array of 3 numbers" + in_range;
    case ParamType::kRealList:
      return "a number or an array of numbers (one per level)" + in_range;
  }
  return what;
}

std::string format_param_value(const ParamValue& v) {
  struct Visitor {
    std::string operator()(std::monostate) const { return "(required)"; }
    std::string operator()(std::int64_t x) const { return std::to_string(x); }
    std::string operator()(double x) const { return format_real(x); }
    std::string operator()(bool x) const { return x ? "true" : "false"; }
    std::string operator()(const std::string& x) const { return quote(x); }
    std::string operator()(const std::array<std::int64_t, 3>& a) const {
      return "[" + std::to_string(a[0]) + ", " + std::to_string(a[1]) + ", " +
             std::to_string(a[2]) + "]";
    }
    std::string operator()(const std::vector<double>& a) const {
      if (a.size() == 1) return format_real(a[0]);
      std::string out = "[";
      for (std::size_t i = 0; i < a.size(); ++i) out += (i ? ", " : "") + format_real(a[i]);
      return out + "]";
    }
    std::string operator()(const std::array<double, 3>& a) const {
      return "[" + format_real(a[0]) + ", " + format_real(a[1]) + ", " + format_real(a[2]) + "]";
    }
  };
  return std::visit(Visitor{}, v);
}

void Params::set(const ParamSpec& spec, ParamValue value) {
  if (!values_.count(spec.name())) specs_.push_back(spec);
  values_[spec.name()] = std::move(value);
}

const ParamValue& Params::get(std::string_view name, ParamType type) const {
  auto it = values_.find(name);
  if (it == values_.end())
    throw Error(ErrorKind::kInternal, "parameter '" + std::string(name) + "' is not defined");
  for (const auto& s : specs_)
    if (s.name() == name && s.type != type)
      throw Error(ErrorKind::kInternal, "parameter '" + std::string(name) + "' read as wrong type");
  return it->second;
}

const ParamValue& Params::value(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end())
    throw Error(ErrorKind::kInternal, "parameter '" + std::string(name) + "' is not defined");
  return it->second;
}

std::int64_t Params::integer(std::string_view n) const {
  return std::get<std::int64_t>(get(n, ParamType::kInt));
}
double Params::real(std::string_view n) const {
  return std::get<double>(get(n, ParamType::kReal));
}
bool Params::boolean(std::string_view n) const {
  return std::get<bool>(get(n, ParamType::kBool));
}
const std::string& Params::string(std::string_view n) const {
  return std::get<std::string>(get(n, ParamType::kString));
}
std::array<std::int64_t, 3> Params::int3(std::string_view n) const {
  return std::get<std::array<std::int64_t, 3>>(get(n, ParamType::kInt3));
}
std::vector<double> Params::real_list(std::string_view n) const {
  return std::get<std::vector<double>>(get(n, ParamType::kRealList));
}
std::array<double, 3> Params::real3(std::string_view n) const {
  return std::get<std::array<double, 3>>(get(n, ParamType::kReal3));
}

std::string Params::to_toml() const {
  std::string out;
  std::string section;
  for (const auto& spec : specs_) {
    if (spec.section != section) {
      section = spec.section;
      out += (out.empty() ? "[" : "\n[") + section + "]\n";
    }
    out += spec.key + " = " + format_param_value(values_.at(spec.name())) + "\n";
  }
  return out;
}

Params load_params(const std::string& file, const std::vector<std::string>& overrides,
                   const ParamSchema& schema) {
  return load_params_from_string(read_param_file(file), file, overrides, schema);
}

std::string shorten_for_message(std::string_view text, std::size_t max_chars) {
  if (text.size() <= max_chars) return std::string(text);
  return std::string(head(text, max_chars)) + "... (" + std::to_string(count_chars(text)) +
         " characters)";
}

namespace {

// toml11's syntax errors quote lines of the file, each above a line that marks the place
// ("   |      ^--- here" or "~~~~"); one line of megabytes (a long array) would make a
// message of megabytes. Shows each quoted line only around its mark, and cuts every
// other line of the message. `line` receives the number of the last line quoted (where
// the error is; toml11's own location of the error is line 1 for some errors).
std::string shorten_toml_error(const std::string& what, std::string* line_number = nullptr) {
  constexpr std::size_t kBefore = 40, kWidth = 100, kMaxLine = 200, kMaxMessage = 1500;
  std::vector<std::string> lines;
  for (std::size_t pos = 0; pos <= what.size();) {
    const std::size_t end = std::min(what.find('\n', pos), what.size());
    lines.push_back(what.substr(pos, end - pos));
    pos = end + 1;
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    // " 8 | text" followed by "   |    ^--- comment": the same " | " column in both.
    const std::size_t bar = line.find(" | ");
    const bool quoted = bar != std::string::npos && bar > 0 && i + 1 < lines.size() &&
                        line.find_first_not_of(" 0123456789") == bar + 1 &&
                        lines[i + 1].compare(0, bar + 3, std::string(bar, ' ') + " | ") == 0;
    if (quoted && line_number)
      *line_number = line.substr(0, bar).substr(line.find_first_not_of(' '));
    if (!quoted || line.size() <= kMaxLine) {
      out += shorten_for_message(line, kMaxLine) + "\n";
      continue;
    }
    const std::string_view text = std::string_view(line).substr(bar + 3);
    const std::string_view mark_line = std::string_view(lines[i + 1]).substr(bar + 3);
    const std::size_t col = std::min(mark_line.find_first_not_of(' '), mark_line.size());
    std::string_view mark = mark_line.substr(col);
    std::size_t from = col > kBefore ? col - kBefore : 0;
    while (from > 0 && from < text.size() && utf8_continuation(text[from])) --from;
    std::size_t to = std::min(text.size(), from + kWidth);
    while (to < text.size() && utf8_continuation(text[to])) ++to;
    std::string shown = (from > 0 ? "..." : "") + std::string(text.substr(from, to - from)) +
                        (to < text.size() ? "..." : "");
    // An underline (~~~) ends with the excerpt; the comment after the mark stays.
    const std::size_t underline = std::min(mark.find_first_not_of('~'), mark.size());
    std::string mark_shown(mark);
    if (underline > 0) {
      const std::size_t keep =
          std::max<std::size_t>(1, std::min(underline, to > col ? to - col : 1));
      mark_shown = std::string(keep, '~') + std::string(mark.substr(underline));
    }
    out += line.substr(0, bar + 3) + shown + "\n" + lines[i + 1].substr(0, bar + 3) +
           std::string((from > 0 ? 3 : 0) + col - from, ' ') +
           shorten_for_message(mark_shown, kMaxLine) + "\n";
    ++i;
  }
  if (!out.empty()) out.pop_back();
  return out.size() <= kMaxMessage ? out : std::string(head(out, kMaxMessage)) + "\n...";
}

}  // namespace

Params load_params_from_string(const std::string& text, const std::string& source_name,
                               const std::vector<std::string>& overrides,
                               const ParamSchema& schema) {
  TomlValue root;
  try {
    std::istringstream is(text);
    root = toml::parse<toml::discard_comments, std::map, std::vector>(is, source_name);
  } catch (const toml::syntax_error& e) {
    std::string line;
    const std::string message = shorten_toml_error(e.what(), &line);
    throw Error(ErrorKind::kInput, source_name + (line.empty() ? "" : ":" + line) +
                                       ": TOML syntax error:\n" + message);
  } catch (const std::exception& e) {
    throw Error(ErrorKind::kInput, source_name + ": cannot parse: " + shorten_toml_error(e.what()));
  }
  return load_impl(std::move(root), source_name, overrides, schema);
}

}  // namespace tessera
