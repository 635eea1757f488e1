#include "zlcore/bool_text.hpp"

#include <zl/backend_kit.h>

namespace zl {

// The words live in the SDK's kit, so a backend's switch set to yes means
// what ZL_ISOLATE_TUNER_CACHE=yes means without compiling anything of the core.
std::optional<bool> parse_bool(const std::string& text) {
  const int b = zl_kit_bool_word(text.c_str());
  if (b < 0) return std::nullopt;
  return b == 1;
}

const char* bool_words() { return "1/0, true/false, yes/no, on/off"; }

}  // namespace zl
