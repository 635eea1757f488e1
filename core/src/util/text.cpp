#include "text.hpp"

#include <algorithm>

namespace zl::text {

std::string one_line(std::string s, size_t limit) {
  for (char& c : s) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  if (limit != std::string::npos && s.size() > limit) s = s.substr(0, limit > 3 ? limit - 3 : 0) + "...";
  return s;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

std::string join_some(const std::vector<std::string>& items, size_t max_items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < max_items; ++i) out += (i ? sep : "") + items[i];
  if (items.size() > max_items) out += sep + "and " + std::to_string(items.size() - max_items) + " more";
  return out;
}

std::string trim(std::string_view s, std::string_view chars) {
  const size_t b = s.find_first_not_of(chars);
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(chars) - b + 1));
}

std::string trim_end(std::string_view s, std::string_view chars) {
  const size_t e = s.find_last_not_of(chars);
  return e == std::string_view::npos ? "" : std::string(s.substr(0, e + 1));
}

std::vector<std::string> split(std::string_view s, std::string_view separators, std::string_view trim_chars) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t end = s.find_first_of(separators, start);
    const std::string_view piece =
        s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    std::string item = trim_chars.empty() ? std::string(piece) : trim(piece, trim_chars);
    if (!item.empty()) out.push_back(std::move(item));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

std::vector<std::string> split_keep_empty(std::string_view s, std::string_view separators) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t end = s.find_first_of(separators, start);
    out.emplace_back(s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::vector<std::string> nearest(const std::string& given, const std::vector<std::string>& candidates,
                                 size_t max_distance) {
  if (given.empty()) return {};
  std::vector<std::string> prefixed;
  for (const std::string& c : candidates) {
    const bool related = c.rfind(given, 0) == 0 || given.rfind(c, 0) == 0;
    if (c != given && related && std::min(c.size(), given.size()) >= 3) prefixed.push_back(c);
  }
  if (!prefixed.empty()) return prefixed;
  size_t best = max_distance + 1;
  std::vector<std::string> out;
  for (const std::string& c : candidates) {
    const size_t d = edit_distance(given, c);
    // Half the word changed is another word, not a slip of it.
    if (d > max_distance || 2 * d > given.size()) continue;
    if (d < best) {
      best = d;
      out.clear();
    }
    if (d == best) out.push_back(c);
  }
  return out;
}

}  // namespace zl::text
