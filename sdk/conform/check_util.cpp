#include "check_util.hpp"

#include "safe_read.hpp"
#include "util/printable.hpp"

namespace zl::conform {

bool is_text(const std::string& s) { return printable(s) == s; }

std::string error_problem(const zl_error* err) {
  const auto e = loader::copy_struct<zl_error>(err);
  if (!e) return "the error at " + loader::pointer_words(err) + " is not readable";
  if (e->struct_size < ZL_ERROR_STRUCT_SIZE) {
    return "the error's struct_size " + std::to_string(e->struct_size) + " is below ZL_ERROR_STRUCT_SIZE (" +
           std::to_string(ZL_ERROR_STRUCT_SIZE) + ")";
  }
  if (e->code < ZL_ERROR_UNAVAILABLE || e->code > ZL_ERROR_INTERNAL) {
    return "the error's code " + std::to_string(static_cast<int>(e->code)) + " is not a zl_error_code";
  }
  const auto message = loader::read_backend_string(e->message);
  if (!message || message->empty()) return "the error has no message";
  if (!is_text(*message)) return "the error's message '" + printable(*message) + "' is not one line of text";
  return {};
}

std::string named_values_problem(const zl_named_value* first, size_t count, const std::string& what) {
  if (count == 0) return {};
  if (first == nullptr) return std::to_string(count) + " " + what + "s but a NULL array";
  const auto head = loader::copy_struct<zl_named_value>(first);
  if (!head) return what + " [0] is not readable";
  const size_t stride = head->struct_size;
  if (stride < ZL_NAMED_VALUE_STRUCT_SIZE) {
    return what + " struct_size " + std::to_string(stride) + " is below ZL_NAMED_VALUE_STRUCT_SIZE (" +
           std::to_string(ZL_NAMED_VALUE_STRUCT_SIZE) + ")";
  }
  for (size_t i = 0; i < count; ++i) {
    const std::string at = what + " [" + std::to_string(i) + "]";
    const auto v = loader::copy_struct<zl_named_value>(reinterpret_cast<const char*>(first) + i * stride);
    if (!v) return at + " is not readable";
    if (v->struct_size != stride)
      return at + " has struct_size " + std::to_string(v->struct_size) + ", [0] has " + std::to_string(stride) +
             " (one stride for the array)";
    const auto name = loader::read_backend_string(v->name);
    if (!name || name->empty() || !is_text(*name)) return at + " has no name, or one that is not text";
    if (v->type == ZL_VALUE_STRING) {
      const auto text = loader::read_backend_string(v->string_value);
      if (!text || !is_text(*text)) return at + " '" + *name + "' is a string without printable text";
    } else if (v->type == ZL_VALUE_BOOL) {
      if (v->int64_value != 0 && v->int64_value != 1) return at + " '" + *name + "' is a bool that is not 0 or 1";
    } else if (v->type != ZL_VALUE_INT64 && v->type != ZL_VALUE_DOUBLE) {
      return at + " '" + *name + "' has type " + std::to_string(static_cast<int>(v->type)) + ", not a zl_value_type";
    }
    // The core sizes the buffer `--l2 cold` writes from it, so anything but
    // a count of bytes is no L2 size.
    if (*name == "l2_cache_bytes" && (v->type != ZL_VALUE_INT64 || v->int64_value <= 0)) {
      return at + " 'l2_cache_bytes' is not an int64 above 0 (the L2's size in bytes)";
    }
  }
  return {};
}

namespace {

std::string device_words(const Device& d) {
  return "[" + std::to_string(d.index) + "] id '" + d.id + "' name '" + d.name + "' visibility '" + d.visibility_value +
         "' memory " + std::to_string(d.memory_total_bytes) + " attributes " + std::to_string(d.attributes.size());
}

}  // namespace

std::string device_difference(const DeviceQuery& first, const DeviceQuery& again, const std::string& again_words) {
  if (first.devices.size() != again.devices.size()) {
    return again_words + " reported " + std::to_string(again.devices.size()) + " devices, the first call " +
           std::to_string(first.devices.size());
  }
  for (size_t i = 0; i < first.devices.size(); ++i) {
    const std::string a = device_words(first.devices[i]), b = device_words(again.devices[i]);
    if (a != b) return again_words + " reported device " + b + ", the first call " + a;
  }
  if (first.reason != again.reason)
    return again_words + " gave the reason '" + again.reason + "', the first call '" + first.reason + "'";
  if (first.source != again.source)
    return again_words + " named the source '" + again.source + "', the first call '" + first.source + "'";
  return {};
}

}  // namespace zl::conform
