#include "zlcore/named_value.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "../util/printable.hpp"
#include "named_value_read.hpp"
#include "safe_read.hpp"
#include "table_read.hpp"

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
  return loader::read_named_values_checked(first, count, nullptr);
}

NamedValues loader::read_named_values_checked(const zl_named_value* first, size_t count, std::string* problem) {
  NamedValues out;
  auto fail = [&](const std::string& why) {
    if (problem != nullptr) *problem = why;
    return NamedValues{};
  };
  if (first == nullptr || count == 0) return out;
  if (count > loader::kMaxNamedValues) {
    return fail("declares " + std::to_string(count) + " values; at most " + std::to_string(loader::kMaxNamedValues) +
                " are read");
  }
  // Step by the backend's struct_size, not ours: the two may differ by minor.
  // Every byte is read through safe_read: a count larger than the array, or
  // a name pointing nowhere, is a problem to report, not a crash.
  std::optional<zl_named_value> head = loader::copy_struct<zl_named_value>(first);
  if (!head) return fail("value [0] at " + loader::pointer_words(first) + " is not readable");
  const size_t stride = head->struct_size;
  if (stride < sizeof(size_t)) return out;
  // Addresses as integers: a lying stride must wrap, not overflow a pointer.
  const auto base = reinterpret_cast<uintptr_t>(first);
  for (size_t i = 0; i < count; ++i) {
    // Only ever handed to the bounded copy, never dereferenced.
    const auto* at = reinterpret_cast<const void*>(base + i * stride);  // NOLINT(performance-no-int-to-ptr)
    std::optional<zl_named_value> v = loader::copy_struct<zl_named_value>(at);
    const std::string which = "value [" + std::to_string(i) + "] of " + std::to_string(count);
    if (!v) return fail(which + " at " + loader::pointer_words(at) + " is not readable (count larger than the array?)");
    if (!ZL_STRUCT_HAS_FIELD(&*v, zl_named_value, double_value) || v->name == nullptr) continue;
    std::optional<std::string> name = loader::read_backend_string(v->name);
    if (!name) return fail(which + "'s name at " + loader::pointer_words(v->name) + " is not readable");
    if (name->empty()) continue;
    NamedValue n;
    // Shown on terminals and written into JSON: escaped once, here.
    n.name = printable(*name);
    // The type as the bytes the backend wrote: a value outside the enum (a
    // later minor's type, or garbage) must not be loaded as the enum.
    uint32_t type = 0;
    std::memcpy(&type, &v->type, sizeof type);
    switch (type) {
      case ZL_VALUE_STRING: {
        if (v->string_value == nullptr) continue;
        std::optional<std::string> text = loader::read_backend_string(v->string_value);
        if (!text) {
          return fail(which + " (" + n.name + ")'s string at " + loader::pointer_words(v->string_value) +
                      " is not readable");
        }
        n.text = printable(*text);
        break;
      }
      case ZL_VALUE_INT64: n.integer = v->int64_value; break;
      case ZL_VALUE_BOOL: n.integer = v->int64_value != 0 ? 1 : 0; break;
      case ZL_VALUE_DOUBLE: n.real = v->double_value; break;
      default: continue;  // a type from a later minor
    }
    n.type = static_cast<zl_value_type>(type);
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
