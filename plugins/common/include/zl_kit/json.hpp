// A small JSON reader for vendor tool output (amd-smi, rocm-smi,
// mthreads-gmi). Read-only, no writer: backends only ever consume JSON.
// Objects keep their keys in document order, and lookups can ignore key case
// because some tools changed key case between releases (rocm-smi 6.1 -> 6.2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace zl_kit {

class Json {
 public:
  enum class Type { Null, Bool, Number, String, Array, Object };

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::Null; }
  bool is_bool() const { return type_ == Type::Bool; }
  bool is_number() const { return type_ == Type::Number; }
  bool is_string() const { return type_ == Type::String; }
  bool is_array() const { return type_ == Type::Array; }
  bool is_object() const { return type_ == Type::Object; }

  bool as_bool() const { return bool_; }
  double as_number() const { return number_; }
  // String value, or the literal text of a number ("12", "1.5e3").
  const std::string& text() const { return text_; }
  const std::vector<Json>& items() const { return items_; }
  const std::vector<std::pair<std::string, Json>>& members() const { return members_; }

  // Member lookup; nullptr when absent or when this is not an object.
  const Json* get(std::string_view key) const;
  // Same, comparing keys case-insensitively and ignoring surrounding spaces.
  const Json* iget(std::string_view key) const;

  // A scalar rendered as text: strings as they are, numbers as written,
  // true/false, "" for null and containers.
  std::string scalar_text() const;
  // A whole-number value from a number or a numeric string ("42", " 42 ").
  std::optional<int64_t> as_int() const;

  // Parses one JSON document (surrounding whitespace allowed). On failure
  // returns nullopt and, when error is given, one line saying where and why.
  static std::optional<Json> parse(std::string_view text, std::string* error = nullptr);

 private:
  friend class JsonParser;
  Type type_ = Type::Null;
  bool bool_ = false;
  double number_ = 0;
  std::string text_;
  std::vector<Json> items_;
  std::vector<std::pair<std::string, Json>> members_;
};

}  // namespace zl_kit
