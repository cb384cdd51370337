// Parameter loading with toml++: every mistake in a parameter file or an override is an
// error that says where it is and what was expected (no silent defaults for typos).
#include "tessera/core/params.hpp"

#include <toml++/toml.h>
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

#include "src/core/param_text.hpp"
#include "tessera/core/error.hpp"

namespace tessera {

using namespace param_text;

namespace {

using TomlValue = toml::node;

std::string override_origin(const std::string& text) {
  return "command-line override '" + shorten_for_message(text, kShownOverride) + "'";
}

// Where a value came from: "file.toml:12" or "command-line override 'a.b=c'".
struct Origin {
  std::string text;
  static Origin of(const TomlValue& v, const std::map<std::string, std::string>& overrides,
                   const std::string& name) {
    if (auto it = overrides.find(name); it != overrides.end()) return {override_origin(it->second)};
    const auto& src = v.source();
    return {(src.path ? *src.path : std::string()) + ":" + std::to_string(src.begin.line)};
  }
};

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw Error(ErrorKind::kInput, where + ": " + what);
}

double as_number(const TomlValue& v, bool* ok) {
  *ok = true;
  if (auto i = v.as_integer()) return static_cast<double>(i->get());
  if (auto f = v.as_floating_point()) return f->get();
  *ok = false;
  return 0;
}

// A TOML value for an error message, inline and short whatever its size.
std::string describe_toml(const TomlValue& v, int depth = 0) {
  const std::size_t shown = depth == 0 ? kShownElements : kShownNested;
  const std::size_t chars = depth == 0 ? kShownChars : kShownChars / 4;
  switch (v.type()) {
    case toml::node_type::boolean:
      return v.as_boolean()->get() ? "true" : "false";
    case toml::node_type::integer:
      return std::to_string(v.as_integer()->get());
    case toml::node_type::floating_point:
      return format_real(v.as_floating_point()->get());
    case toml::node_type::string:
      return quote_for_message(v.as_string()->get(), chars);
    case toml::node_type::array: {
      const auto& a = *v.as_array();
      if (depth >= 2) return a.empty() ? "[]" : "[...]";
      std::string out = "[";
      for (std::size_t i = 0; i < std::min(a.size(), shown); ++i)
        out += (i ? ", " : "") + describe_toml(a[i], depth + 1);
      if (a.size() > shown) out += ", ... (" + std::to_string(a.size()) + " elements)";
      return out + "]";
    }
    case toml::node_type::table: {
      const auto& t = *v.as_table();
      if (depth >= 2) return t.empty() ? "{}" : "{...}";
      std::string out = "{";
      std::size_t i = 0;
      for (auto it = t.begin(); it != t.end() && i < shown; ++it, ++i)
        out += (i ? ", " : "") + std::string(head(it->first.str(), chars)) + " = " +
               describe_toml(it->second, depth + 1);
      if (t.size() > shown) out += ", ... (" + std::to_string(t.size()) + " keys)";
      return out + "}";
    }
    default: {  // dates and times, short
      std::ostringstream os;
      os << toml::node_view<const toml::node>(v);
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
// wrong type, but an integral one beyond 64 bits (1e19) is out of range. (An integer
// literal beyond 64 bits is a syntax error of the parser.)
std::optional<std::int64_t> as_int64(const ParamSpec& spec, const TomlValue& v,
                                     const std::string& where, const std::string& shown) {
  if (auto i = v.as_integer()) return i->get();
  if (auto f = v.as_floating_point()) {
    const double x = f->get();
    constexpr double kTwo63 = 9223372036854775808.0;
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
    const auto* f = v.as_floating_point();
    const bool integral_float = f && std::isfinite(f->get()) && std::trunc(f->get()) == f->get();
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
      return v.as_boolean()->get();
    case ParamType::kString: {
      if (!v.is_string()) return wrong();
      std::string s = v.as_string()->get();
      if (!spec.choices.empty() &&
          std::find(spec.choices.begin(), spec.choices.end(), s) == spec.choices.end())
        fail(where, spec.name() + " = " + quote_for_message(s, kShownChars) +
                        " is not allowed: expected " + spec.expected() +
                        choice_suggestion(s, spec.choices));
      return s;
    }
    case ParamType::kRealList: {
      std::vector<double> list;
      if (const auto* a = v.as_array()) {
        if (a->empty()) return wrong();
        list.reserve(a->size());
        for (const auto& e : *a) {
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
      if (!v.is_array() || v.as_array()->size() != 3) return wrong();
      std::array<std::int64_t, 3> ia{};
      std::array<double, 3> ra{};
      for (int i = 0; i < 3; ++i) {
        const auto& e = *v.as_array()->get(i);
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
// `type` is the key's type where the key is known. A number TOML refuses (an integer
// literal beyond 64 bits) is an error that says why, except for a real-valued key, which
// takes it as the real number written (run.t_end=100000000000000000000).
void set_override_value(toml::table& section, const std::string& key, const std::string& name,
                        const std::string& text, std::optional<ParamType> type,
                        const std::string& override_text) {
  if (type == ParamType::kString) {
    std::string s = text;
    if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front())
      s = s.substr(1, s.size() - 2);
    section.insert_or_assign(key, s);
    return;
  }
  try {
    auto doc = toml::parse("v = " + text, std::string_view("<override>"));
    section.insert_or_assign(key, std::move(*doc.get("v")));
  } catch (const toml::parse_error& e) {
    const bool numeric = !text.empty() && std::strchr("0123456789+-.", text.front()) != nullptr;
    if (numeric && type == ParamType::kReal) {
      char* end = nullptr;
      const double x = std::strtod(text.c_str(), &end);
      if (end == text.c_str() + text.size() && std::isfinite(x)) {
        section.insert_or_assign(key, x);
        return;
      }
    }
    if (numeric && type)
      fail(override_origin(override_text),
           name + " = " + shorten_for_message(text, kShownChars) + " is not a TOML value: " +
               shorten_for_message(std::string(e.description()), kShownValue));
    section.insert_or_assign(key, text);
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

Params validate(toml::table& top, const std::map<std::string, std::string>& overrides,
                const std::string& source, const ParamSchema& schema) {
  // Top level: only known sections, each a table.
  for (auto&& [key, value] : top) {
    const std::string name(key.str());
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
  if (const toml::node* v = top["problem"]["name"].node()) {
    const std::string where = Origin::of(*v, overrides, "problem.name").text;
    if (!v->is_string()) fail(where, "problem.name has the wrong type: expected a string");
    std::vector<ParamSpec> extra;
    try {
      extra = schema.problem_specs(v->as_string()->get());
    } catch (const Error& e) {
      fail(where, e.what());
    }
    specs.insert(specs.end(), extra.begin(), extra.end());
  }
  Params params;
  for (const auto& section : schema.sections) {
    const toml::table empty;
    const auto* in_file = top.get_as<toml::table>(section);
    const auto& table = in_file ? *in_file : empty;
    for (auto&& [k, value] : table) {
      const std::string key(k.str());
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

Params load_impl(toml::table root, const std::string& source,
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
    std::optional<ParamType> type;
    if (const ParamSpec* spec = find_spec(schema.specs, section, key)) type = spec->type;
    if (section == "problem" && key != "name") {
      try {
        std::string problem;
        if (origin.count("problem.name")) {
          const auto& o = origin.at("problem.name");
          problem = o.substr(o.find('=') + 1);
        } else if (const auto* name = root["problem"]["name"].as_string()) {
          problem = name->get();
        }
        if (!problem.empty()) {
          // The specs must outlive the pointer find_spec returns into them.
          const std::vector<ParamSpec> specs = schema.problem_specs(problem);
          if (const ParamSpec* spec = find_spec(specs, section, key)) type = spec->type;
        }
      } catch (const Error&) {
        // An unknown problem name is reported by validate() with its location.
      }
    }
    if (!root.contains(section)) root.insert(section, toml::table{});
    auto* table = root.get_as<toml::table>(section);
    if (!table)
      fail(override_origin(text),
           "'" + shorten_for_message(section, kShownChars) + "' is not a section");
    set_override_value(*table, key, name, text.substr(eq + 1), type, text);
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

Params load_params_from_string(const std::string& text, const std::string& source_name,
                               const std::vector<std::string>& overrides,
                               const ParamSchema& schema) {
  toml::table root;
  try {
    root = toml::parse(text, std::string_view(source_name));
  } catch (const toml::parse_error& e) {
    const auto& at = e.source().begin;
    throw Error(ErrorKind::kInput,
                source_name + ":" + std::to_string(at.line) + ": TOML syntax error: " +
                    shorten_for_message(e.description(), kShownValue) + " (column " +
                    std::to_string(at.column) + ")\n" + excerpt(text, at.line, at.column));
  }
  return load_impl(std::move(root), source_name, overrides, schema);
}

}  // namespace tessera
