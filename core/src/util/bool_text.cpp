#include "zlcore/bool_text.hpp"

#include <cctype>

namespace zl {

std::optional<bool> parse_bool(const std::string& text) {
  std::string w;
  for (char c : text) w += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (w == "1" || w == "true" || w == "yes" || w == "on") return true;
  if (w == "0" || w == "false" || w == "no" || w == "off") return false;
  return std::nullopt;
}

const char* bool_words() { return "1/0, true/false, yes/no, on/off"; }

}  // namespace zl
