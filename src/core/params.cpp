// Parameter loading with toml11: every mistake in a parameter file or an override is an
// error that says where it is and what was expected (no silent defaults for typos).
#include "tessera/core/params.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <toml.hpp>

#include "tessera/core/error.hpp"

namespace tessera {

namespace {

// std::map keeps keys sorted, so errors are reported in a reproducible order.
using TomlValue = toml::basic_value<toml::discard_comments, std::map, std::vector>;

std::string format_real(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  std::string s(buf, res.ptr);
  if (std::isfinite(v) && s.find_first_of(".eE") == std::string::npos) s += ".0";
  if (s == "inf") return "inf";
  if (s == "-inf") return "-inf";
  return s;
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
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
    const std::size_t d = edit_distance(word, c);
    if (d < best_d) best_d = d, best = c;
  }
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

// Where a value came from: "file.toml:12" or "command-line override 'a.b=c'".
struct Origin {
  std::string text;
  static Origin of(const TomlValue& v, const std::map<std::string, std::string>& overrides,
                   const std::string& name) {
    if (auto it = overrides.find(name); it != overrides.end())
      return {"command-line override '" + it->second + "'"};
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

std::string describe_toml(const TomlValue& v) {
  std::ostringstream os;
  os << v;
  std::string s = os.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

void check_number(const ParamSpec& spec, double x, const std::string& where,
                  const std::string& shown) {
  const bool bad_multiple =
      spec.multiple_of > 0 && static_cast<std::int64_t>(x) % spec.multiple_of != 0;
  if (!std::isfinite(x) || !spec.range.contains(x) || bad_multiple)
    fail(where, spec.name() + " = " + shown + " is out of range: expected " + spec.expected());
}

ParamValue convert(const ParamSpec& spec, const TomlValue& v, const std::string& where) {
  const std::string shown = describe_toml(v);
  auto wrong = [&]() -> ParamValue {
    fail(where, spec.name() + " = " + shown + " has the wrong type: expected " + spec.expected());
  };
  bool ok = false;
  switch (spec.type) {
    case ParamType::kInt: {
      if (!v.is_integer()) return wrong();
      check_number(spec, static_cast<double>(v.as_integer()), where, shown);
      return static_cast<std::int64_t>(v.as_integer());
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
        fail(where, spec.name() + " = " + quote(s) + " is not allowed: expected " +
                        spec.expected() + suggestion(s, spec.choices));
      return s;
    }
    case ParamType::kRealList: {
      std::vector<double> list;
      if (v.is_array()) {
        if (v.as_array().empty()) return wrong();
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
          if (!e.is_integer()) return wrong();
          ia[i] = e.as_integer();
          check_number(spec, static_cast<double>(ia[i]), where, shown);
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
    if (!known)
      fail(where, "unknown section [" + name + "]" + suggestion(name, schema.sections) +
                      "; sections are: " + join(schema.sections));
    if (!value.is_table()) fail(where, "'" + name + "' must be a section ([" + name + "])");
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
        fail(where, "unknown key '" + name + "'" + suggestion(key, known) + "; [" + section +
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
      fail("command-line override '" + text + "'", "expected the form section.key=value");
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
        if (!problem.empty())
          if (const ParamSpec* spec = find_spec(schema.problem_specs(problem), section, key))
            want_string = spec->type == ParamType::kString;
      } catch (const Error&) {
        // An unknown problem name is reported by validate() with its location.
      }
    }
    auto& top = root.as_table();
    if (!top.count(section)) top[section] = TomlValue::table_type{};
    if (!top[section].is_table())
      fail("command-line override '" + text + "'", "'" + section + "' is not a section");
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
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(ErrorKind::kInput, file + ": cannot open the parameter file");
  std::ostringstream text;
  text << in.rdbuf();
  return load_params_from_string(text.str(), file, overrides, schema);
}

Params load_params_from_string(const std::string& text, const std::string& source_name,
                               const std::vector<std::string>& overrides,
                               const ParamSchema& schema) {
  TomlValue root;
  try {
    std::istringstream is(text);
    root = toml::parse<toml::discard_comments, std::map, std::vector>(is, source_name);
  } catch (const toml::syntax_error& e) {
    throw Error(ErrorKind::kInput, source_name + ": TOML syntax error:\n" + e.what());
  } catch (const std::exception& e) {
    throw Error(ErrorKind::kInput, source_name + ": cannot parse: " + e.what());
  }
  return load_impl(std::move(root), source_name, overrides, schema);
}

}  // namespace tessera
