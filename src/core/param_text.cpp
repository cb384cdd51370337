// Text for parameter messages: see param_text.hpp.
#include "src/core/param_text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "tessera/core/params.hpp"

namespace tessera {

namespace param_text {

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

namespace {

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

}  // namespace

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

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

// A syntax error's line of the file, shown around the error's column (one line of
// megabytes, a long array, is cut), with a mark under that column:
//    8 | lohner_refine = [0.5, 0.5 x]
//      |                           ^
std::string excerpt(std::string_view text, std::size_t line, std::size_t column) {
  constexpr std::size_t kBefore = 40, kWidth = 100;
  std::size_t begin = 0;
  for (std::size_t l = 1; l < line; ++l) {
    begin = text.find('\n', begin);
    if (begin == std::string_view::npos) return "";
    ++begin;
  }
  std::string_view row = text.substr(begin, text.find('\n', begin) - begin);
  if (!row.empty() && row.back() == '\r') row.remove_suffix(1);
  std::size_t col = 0;  // toml++ counts columns in characters, from 1
  for (std::size_t c = 1; c < column && col < row.size(); ++c)
    while (++col < row.size() && utf8_continuation(row[col])) {
    }
  std::size_t from = col > kBefore ? col - kBefore : 0;
  while (from > 0 && utf8_continuation(row[from])) --from;
  std::size_t to = std::min(row.size(), from + kWidth);
  while (to < row.size() && utf8_continuation(row[to])) ++to;
  std::string out(1, ' ');
  out += std::to_string(line);
  const std::size_t bar = out.size() + 1;  // the column of '|'
  out += " | ";
  if (from > 0) out += "...";
  out += row.substr(from, to - from);
  if (to < row.size()) out += "...";
  out += '\n';
  out.append(bar, ' ');
  out += "| ";
  out.append((from > 0 ? 3 : 0) + count_chars(row.substr(from, col - from)), ' ');
  return out + "^";
}

}  // namespace param_text

std::string shorten_for_message(std::string_view text, std::size_t max_chars) {
  if (text.size() <= max_chars) return std::string(text);
  return std::string(param_text::head(text, max_chars)) + "... (" +
         std::to_string(param_text::count_chars(text)) + " characters)";
}

}  // namespace tessera
