#include "text.hpp"

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

}  // namespace zl::text
