// Linear-time parsing of parameter files with toml11 3.x: its parse_value and
// parse_key_value_pair specialised for the value type Tessera parses into (TomlValue), and
// integer literals read again from their text. Explicit specialisations must be seen
// before toml::parse is instantiated, so this header is included by src/core/params.cpp
// only, right after <toml.hpp>; its helpers have internal linkage.
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <toml.hpp>
#include <utility>
#include <vector>

namespace tessera {

namespace {

// std::map keeps keys sorted, so errors are reported in a reproducible order.
using TomlValue = toml::basic_value<toml::discard_comments, std::map, std::vector>;

// An integer literal read again from its text (toml11 3.x clamps a decimal, octal or
// hexadecimal literal beyond 64 bits to INT64_MAX/INT64_MIN and wraps a binary one).
struct IntegerLiteral {
  bool fits = true;        // within [INT64_MIN, INT64_MAX]
  std::int64_t value = 0;  // the value, when it fits
  double approx = 0;       // the value as a float, when it does not
};

std::optional<IntegerLiteral> read_integer_literal(const std::string& token) {
  std::size_t i = 0;
  bool negative = false;
  if (i < token.size() && (token[i] == '+' || token[i] == '-')) negative = token[i++] == '-';
  int base = 10;
  if (token.size() >= i + 2 && token[i] == '0' && std::strchr("xob", token[i + 1])) {
    base = token[i + 1] == 'x' ? 16 : token[i + 1] == 'o' ? 8 : 2;
    i += 2;
  }
  std::string digits;
  std::uint64_t magnitude = 0;
  bool overflow = false;
  double approx = 0;
  for (; i < token.size(); ++i) {
    const char c = token[i];
    if (c == '_') continue;
    int d = -1;
    if (c >= '0' && c <= '9') d = c - '0';
    if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    if (d < 0 || d >= base) return std::nullopt;  // not a literal the lexer accepts
    digits += c;
    approx = approx * base + d;
    overflow = overflow || __builtin_mul_overflow(magnitude, std::uint64_t(base), &magnitude) ||
               __builtin_add_overflow(magnitude, std::uint64_t(d), &magnitude);
  }
  if (digits.empty()) return std::nullopt;
  constexpr std::uint64_t kMin = std::uint64_t(1) << 63;  // |INT64_MIN|
  IntegerLiteral lit;
  lit.fits = !overflow && (negative ? magnitude <= kMin : magnitude < kMin);
  if (lit.fits) {
    lit.value = negative ? static_cast<std::int64_t>(0 - magnitude)  // two's complement
                         : static_cast<std::int64_t>(magnitude);
  } else {
    // Decimal: the correctly rounded float of the literal.
    if (base == 10) approx = std::strtod(digits.c_str(), nullptr);
    lit.approx = negative ? -approx : approx;
  }
  return lit;
}

// Runs toml11's parser `parse` for one token, which `Lexer` delimits, on a location that
// holds only that token; the result keeps the token's region in the file, for messages.
// Some of toml11's parsers try one form after another, and a failed try formats an error
// message that copies the whole line: alone, a try costs the length of the token only.
// Where the token does not parse alone, `parse` runs in place for toml11's own error.
template <typename Lexer, typename T>
toml::result<std::pair<T, toml::detail::region>, std::string> parse_alone(
    toml::detail::location& loc, toml::result<std::pair<T, toml::detail::region>, std::string> (
                                     *parse)(toml::detail::location&)) {
  const auto first = loc.iter();
  if (const auto token = Lexer::invoke(loc)) {
    toml::detail::location alone(loc.name(), token.unwrap().str());
    try {
      auto parsed = parse(alone);
      if (parsed && alone.iter() == alone.end())
        return toml::ok(std::make_pair(std::move(parsed.unwrap().first), token.unwrap()));
    } catch (const toml::exception&) {
      // Reported below, with its place in the file.
    }
  }
  loc.reset(first);
  return parse(loc);
}

// The value of a token, without looking for the comments around it.
template <typename T>
toml::result<TomlValue, std::string> value_of(
    toml::result<std::pair<T, toml::detail::region>, std::string>&& parsed) {
  if (parsed.is_err()) return toml::err(std::move(parsed.unwrap_err()));
  return toml::ok(TomlValue(std::move(parsed.unwrap()), std::vector<std::string>{}));
}

// An integer, read again from its text: exact within 64 bits, else a float.
toml::result<TomlValue, std::string> integer_value(
    toml::result<std::pair<toml::integer, toml::detail::region>, std::string>&& parsed) {
  if (parsed.is_ok()) {
    auto& [value, reg] = parsed.unwrap();
    if (const auto lit = read_integer_literal(reg.str())) {
      if (!lit->fits)
        return toml::ok(TomlValue(std::make_pair(toml::floating(lit->approx), reg),
                                  std::vector<std::string>{}));
      value = lit->value;
    }
  }
  return value_of(std::move(parsed));
}

}  // namespace
}  // namespace tessera

// Linear-time parsing with toml11 3.x, whose parser is quadratic in the length of a
// line: a parameter file of one array of n elements on one line took O(n^2) (40,000
// elements 3 s, 80,000 11 s, a million half an hour). For every value it parses, toml11
// collects the comments around it by scanning the value's whole line, even when comments
// are discarded; and it reads a string or a key by trying one form after another, each
// failed try formatting an error message that copies the whole line. These explicit
// specialisations of its parse_value and parse_key_value_pair, for the value type Tessera
// parses into (only in this file, the only one that includes toml11), are toml11's own
// (3.7.1, MIT licence) with three changes: no comments are collected (value_of), strings
// and keys are parsed alone (parse_alone), and integer literals are read again
// (integer_value), so that one beyond 64 bits is neither clamped to INT64_MAX nor wrapped
// around but becomes a float, which an integer key rejects as out of range and a real key
// takes as written.
static_assert(TOML11_VERSION_MAJOR == 3, "written for the parser of toml11 3.x");

namespace toml::detail {

template <>
result<tessera::TomlValue, std::string> parse_value<tessera::TomlValue>(location& loc) {
  using tessera::value_of;
  const auto first = loc.iter();
  if (first == loc.end()) {
    return err(format_underline("toml::parse_value: input is empty", {{source_location(loc), ""}}));
  }
  const auto type = guess_value_type(loc);
  if (!type) return err(type.unwrap_err());
  switch (type.unwrap()) {
    case value_t::boolean:
      return value_of(parse_boolean(loc));
    case value_t::integer:
      return tessera::integer_value(parse_integer(loc));
    case value_t::floating:
      return value_of(parse_floating(loc));
    case value_t::string:
      return value_of(tessera::parse_alone<lex_string>(loc, parse_string));
    case value_t::offset_datetime:
      return value_of(parse_offset_datetime(loc));
    case value_t::local_datetime:
      return value_of(parse_local_datetime(loc));
    case value_t::local_date:
      return value_of(parse_local_date(loc));
    case value_t::local_time:
      return value_of(parse_local_time(loc));
    case value_t::array:
      return value_of(parse_array<tessera::TomlValue>(loc));
    case value_t::table:
      return value_of(parse_inline_table<tessera::TomlValue>(loc));
    default: {
      const auto msg = format_underline("toml::parse_value: unknown token appeared",
                                        {{source_location(loc), "unknown"}});
      loc.reset(first);
      return err(msg);
    }
  }
}

template <>
result<std::pair<std::pair<std::vector<key>, region>, tessera::TomlValue>, std::string>
parse_key_value_pair<tessera::TomlValue>(location& loc) {
  const auto first = loc.iter();
  auto key_reg = tessera::parse_alone<lex_key>(loc, parse_key);
  if (!key_reg) {
    std::string msg = std::move(key_reg.unwrap_err());
    // if the next token is keyvalue-separator, it means that there are no
    // key. then we need to show error as "empty key is not allowed".
    if (const auto keyval_sep = lex_keyval_sep::invoke(loc)) {
      loc.reset(first);
      msg = format_underline(
          "toml::parse_key_value_pair: "
          "empty key is not allowed.",
          {{source_location(loc), "key expected before '='"}});
    }
    return err(std::move(msg));
  }

  const auto kvsp = lex_keyval_sep::invoke(loc);
  if (!kvsp) {
    std::string msg;
    // if the line contains '=' after the invalid sequence, possibly the
    // error is in the key (like, invalid character in bare key).
    const auto line_end = std::find(loc.iter(), loc.end(), '\n');
    if (std::find(loc.iter(), line_end, '=') != line_end) {
      msg = format_underline(
          "toml::parse_key_value_pair: "
          "invalid format for key",
          {{source_location(loc), "invalid character in key"}},
          {"Did you forget '.' to separate dotted-key?",
           "Allowed characters for bare key are [0-9a-zA-Z_-]."});
    } else  // if not, the error is lack of key-value separator.
    {
      msg = format_underline(
          "toml::parse_key_value_pair: "
          "missing key-value separator `=`",
          {{source_location(loc), "should be `=`"}});
    }
    loc.reset(first);
    return err(std::move(msg));
  }

  const auto after_kvsp = loc.iter();  // err msg
  auto val = parse_value<tessera::TomlValue>(loc);
  if (!val) {
    std::string msg;
    loc.reset(after_kvsp);
    // check there is something not a comment/whitespace after `=`
    if (sequence<maybe<lex_ws>, maybe<lex_comment>, lex_newline>::invoke(loc)) {
      loc.reset(after_kvsp);
      msg = format_underline(
          "toml::parse_key_value_pair: "
          "missing value after key-value separator '='",
          {{source_location(loc), "expected value, but got nothing"}});
    } else  // there is something not a comment/whitespace, so invalid format.
    {
      msg = std::move(val.unwrap_err());
    }
    loc.reset(first);
    return err(msg);
  }
  return ok(std::make_pair(std::move(key_reg.unwrap()), std::move(val.unwrap())));
}

}  // namespace toml::detail
