// A backend's typed key/value (zl_named_value: a device attribute or a state
// reading) read into an ordinary value, so nothing the backend owns is kept
// past the call that returned it.
#pragma once

#include <zl/backend.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace zl {

struct NamedValue {
  std::string name;
  zl_value_type type = ZL_VALUE_STRING;
  std::string text;     // ZL_VALUE_STRING
  int64_t integer = 0;  // ZL_VALUE_INT64, ZL_VALUE_BOOL
  double real = 0;      // ZL_VALUE_DOUBLE

  // The value as one would print it: "hopper", "132", "4915.2", "true".
  std::string display() const;
  // A number for INT64, DOUBLE and BOOL; nullopt for a string.
  std::optional<double> number() const;
};

using NamedValues = std::vector<NamedValue>;

// Reads `count` values strided by the first one's struct_size (an older or
// newer zl_named_value indexes correctly). A value without a name, of an
// unknown type, or whose struct_size does not reach double_value is
// skipped: the rest are still good.
NamedValues read_named_values(const zl_named_value* first, size_t count);

// The value named `name`, or nullptr.
const NamedValue* find_value(const NamedValues& values, const std::string& name);

}  // namespace zl
