// Reading one field of a record or a child's report (JSON someone else
// wrote) without trusting its shape: a missing member, or one of another
// type, reads as absent or as the fallback, never as an error.
#pragma once

#include <rapidjson/document.h>

#include <filesystem>
#include <string>

namespace zl::autotune_internal {

// The member `key` of an object, or nullptr (no such member, or `v` is not
// an object).
const rapidjson::Value* member(const rapidjson::Value& v, const char* key);

// The member as a string; "" when missing or not a string.
std::string str_member(const rapidjson::Value& v, const char* key);

// The member as an int; `fallback` when missing or not an int.
int int_member(const rapidjson::Value& v, const char* key, int fallback);

// Parsed JSON of a file, or an empty object when it is missing or unreadable:
// side files are bookkeeping, never a reason to fail a finished run. A file
// that is there but does not parse gets one line on stderr naming it.
rapidjson::Document load_json(const std::filesystem::path& file);

}  // namespace zl::autotune_internal
