#include "zlcore/named_value.hpp"

#include <cmath>
#include <cstdio>

namespace zl {

std::string NamedValue::display() const {
  switch (type) {
    case ZL_VALUE_STRING: return text;
    case ZL_VALUE_INT64: return std::to_string(integer);
    case ZL_VALUE_BOOL: return integer != 0 ? "true" : "false";
    case ZL_VALUE_DOUBLE: {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.6g", real);
      return buf;
    }
  }
  return text;
}

std::optional<double> NamedValue::number() const {
  switch (type) {
    case ZL_VALUE_INT64:
    case ZL_VALUE_BOOL: return static_cast<double>(integer);
    case ZL_VALUE_DOUBLE: return std::isfinite(real) ? std::optional<double>(real) : std::nullopt;
    default: return std::nullopt;
  }
}

NamedValues read_named_values(const zl_named_value* first, size_t count) {
  NamedValues out;
  if (first == nullptr || count == 0) return out;
  // Step by the backend's struct_size, not ours: the two may differ by minor.
  const size_t stride = first->struct_size;
  if (stride < sizeof(size_t)) return out;
  const auto* base = reinterpret_cast<const char*>(first);
  for (size_t i = 0; i < count; ++i) {
    const auto& v = *reinterpret_cast<const zl_named_value*>(base + i * stride);
    if (!ZL_STRUCT_HAS_FIELD(&v, zl_named_value, double_value) || v.name == nullptr || *v.name == '\0') continue;
    NamedValue n;
    n.name = v.name;
    n.type = v.type;
    switch (v.type) {
      case ZL_VALUE_STRING:
        if (v.string_value == nullptr) continue;
        n.text = v.string_value;
        break;
      case ZL_VALUE_INT64: n.integer = v.int64_value; break;
      case ZL_VALUE_BOOL: n.integer = v.int64_value != 0 ? 1 : 0; break;
      case ZL_VALUE_DOUBLE: n.real = v.double_value; break;
      default: continue;  // a type from a later minor
    }
    out.push_back(std::move(n));
  }
  return out;
}

const NamedValue* find_value(const NamedValues& values, const std::string& name) {
  for (const NamedValue& v : values) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

}  // namespace zl
