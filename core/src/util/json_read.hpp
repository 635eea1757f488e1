// Reading JSON that someone else wrote (run identities, results lines,
// autotune records, a worker's replies) without trusting its shape: RapidJSON's
// default parser recurses once per nesting level, so 300,000 `[` overflow the
// stack. Here the parser is RapidJSON's iterative one, and nesting deeper than
// a limit fails the parse, so the recursive walks that follow (deep copies,
// writers, our own) stay bounded too.
#pragma once

#include <rapidjson/document.h>

#include <cstddef>
#include <string>

namespace zl::json {

// Deeper than anything zlcore or its plugins write (run_identity.json nests
// about 5 levels), shallow enough for every recursive walk.
constexpr unsigned kMaxDepth = 128;

// Parses `size` bytes at `data` into `doc`. Returns "" on success, else one
// line saying why and where ("nesting deeper than 128 levels at offset 128",
// "Missing a comma ... at offset 17"); `doc` is then null.
std::string parse(rapidjson::Document& doc, const char* data, size_t size, unsigned max_depth = kMaxDepth);
inline std::string parse(rapidjson::Document& doc, const std::string& text, unsigned max_depth = kMaxDepth) {
  return parse(doc, text.data(), text.size(), max_depth);
}

// The value at a dotted path of objects ("versions.torch"), or nullptr where a
// member is missing or a step is not an object.
const rapidjson::Value* at_path(const rapidjson::Value& root, const std::string& dotted);

}  // namespace zl::json
