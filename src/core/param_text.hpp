// Text for parameter messages and for the effective-parameter listing: values quoted and
// cut short, "did you mean" suggestions, a syntax error's line around its column.
// Internal to the parameter loader (src/core/params.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::param_text {

// Values in error messages are shown inline and cut short: an array's first elements,
// a string's first characters, then how long the whole is.
inline constexpr std::size_t kShownElements = 8;    // of an array or table, at the top level
inline constexpr std::size_t kShownNested = 3;      // of an array or table inside another
inline constexpr std::size_t kShownChars = 64;      // of a string or a name
inline constexpr std::size_t kShownValue = 400;     // of a value shown whole
inline constexpr std::size_t kShownOverride = 120;  // of an override's text

// The shortest text that reads back as `v`, with a decimal point (1.0, 1e+20, inf).
std::string format_real(double v);
// A TOML basic string (control characters escaped, so that it parses back).
std::string quote(std::string_view s);
bool utf8_continuation(char c);
std::size_t count_chars(std::string_view s);
// The first `max_chars` bytes of `s`, not ending inside a UTF-8 character.
std::string_view head(std::string_view s, std::size_t max_chars);
// A string value for a message: quoted, cut after `max_chars`.
std::string quote_for_message(std::string_view s, std::size_t max_chars);
// " (did you mean 'x'?)" for the closest candidate, or "" when none is close.
std::string suggestion(const std::string& word, const std::vector<std::string>& candidates);
// The same for a value outside a choice list, knowing common other names of a choice.
std::string choice_suggestion(const std::string& word, const std::vector<std::string>& choices);
std::string join(const std::vector<std::string>& v, const char* sep = ", ");
// Line `line` of `text` around `column` (counted in characters, from 1), with a mark.
std::string excerpt(std::string_view text, std::size_t line, std::size_t column);

}  // namespace tessera::param_text
