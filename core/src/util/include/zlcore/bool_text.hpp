// The one spelling of a boolean that zlcore accepts, in flags and in
// environment variables alike: 1/0, true/false, yes/no, on/off, in any case.
// The words are the SDK kit's (zl_kit_bool_word in zl/backend_kit.h), which
// backends use too, so a backend's switch set to yes means what
// ZL_ISOLATE_TUNER_CACHE=yes means.
#pragma once

#include <optional>
#include <string>

namespace zl {

// True or false for a word of the set, nullopt for anything else (the empty
// string included: callers decide what unset means).
std::optional<bool> parse_bool(const std::string& text);

// The accepted words, for messages: "1/0, true/false, yes/no, on/off".
const char* bool_words();

}  // namespace zl
