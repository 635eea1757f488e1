#include "device_read.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>

#include "../util/printable.hpp"
#include "named_value_read.hpp"
#include "safe_read.hpp"
#include "table_read.hpp"

namespace zl::loader {
namespace {

// A device of ABI 1.0 ends with utilization_percent.
constexpr size_t kMinDeviceSize =
    offsetof(zl_device_info, utilization_percent) + sizeof(zl_device_info::utilization_percent);

std::string where(const Device& d) { return "device [" + std::to_string(d.index) + "]"; }

// Reads one string member; false (and `why` set) when it points nowhere.
bool read_member(const char* p, const char* what, const Device& d, std::string* out, std::string* why) {
  if (p == nullptr) return true;
  std::optional<std::string> s = read_backend_string(p);
  if (!s) {
    *why = where(d) + " " + what + " at " + pointer_words(p) + " is not readable";
    return false;
  }
  *out = std::move(*s);
  return true;
}

// The id and the visibility value travel (into the child's environment, the
// run identity, ops_status.csv): they must be printable text as they are.
// Everything else the device says is only shown, so it is escaped instead.
std::string text_problem(const Device& d) {
  if (printable(d.id) != d.id) return where(d) + " id '" + printable(d.id) + "' is not printable text";
  if (printable(d.visibility_value) != d.visibility_value) {
    return where(d) + " visibility_value '" + printable(d.visibility_value) + "' is not printable text";
  }
  return {};
}

// Why the core cannot offer this device, or "" (the rules in backend.h that
// the core relies on).
std::string rule_problem(const Device& d, const std::string& pin_var) {
  if (d.id.empty()) return "device [" + std::to_string(d.index) + "] has no id";
  if (!pin_var.empty() && d.visibility_value.empty()) {
    return "device [" + std::to_string(d.index) + "] " + d.id + " has no visibility_value, but the backend pins with " +
           pin_var + ": a child would see no device";
  }
  return {};
}

// One entry of the array: a device, or why it is rejected.
// `unreadable` is set when the reason is memory that could not be read.
std::string read_device(const zl_device_info& info, size_t position, uint32_t abi_minor, Device& d, bool* unreadable) {
  d.index = static_cast<int>(position);
  if (info.struct_size < kMinDeviceSize) {
    return "device list entry [" + std::to_string(position) + "] has struct_size " + std::to_string(info.struct_size) +
           ", less than a device's " + std::to_string(kMinDeviceSize) + " bytes";
  }
  d.index = info.index;
  d.memory_total_bytes = info.memory_total_bytes;
  d.memory_used_bytes = info.memory_used_bytes;
  d.utilization_percent = info.utilization_percent;
  std::string why;
  if (!read_member(info.id, "id", d, &d.id, &why) || !read_member(info.name, "name", d, &d.name, &why) ||
      (ZL_STRUCT_HAS_FIELD(&info, zl_device_info, visibility_value) &&
       !read_member(info.visibility_value, "visibility_value", d, &d.visibility_value, &why))) {
    *unreadable = true;
    return why;
  }
  d.name = printable(d.name);
  if (std::string bad = text_problem(d); !bad.empty()) return bad;
  if (abi_minor >= 2 && ZL_STRUCT_HAS_FIELD(&info, zl_device_info, attributes)) {
    std::string problem;
    d.attributes = read_named_values_checked(info.attributes, info.attribute_count, &problem);
    *unreadable = !problem.empty();
    if (!problem.empty()) return where(d) + " " + d.id + " attributes: " + problem;
  }
  return {};
}

}  // namespace

std::string read_device_list(const zl_device_list* list, uint32_t abi_minor, const std::string& pin_var,
                             DeviceQuery& q) {
  std::optional<zl_device_list> l = copy_struct<zl_device_list>(list);
  if (!l) return q.error = "device list at " + pointer_words(list) + " is not readable";
  if (l->count > kMaxDevices) {
    return q.error = "device list declares " + std::to_string(l->count) + " devices; at most " +
                     std::to_string(kMaxDevices) + " are read";
  }
  if (l->count > 0 && l->devices == nullptr) {
    return q.error = "device list declares " + std::to_string(l->count) + " devices but no array";
  }
  // Step by the backend's struct_size, not ours: the two may differ by minor.
  size_t stride = 0;
  if (l->count > 0 && !copy_from_backend(l->devices, &stride, sizeof stride)) {
    return q.error = "device array at " + pointer_words(l->devices) + " is not readable";
  }
  std::string unreadable;
  // Addresses as integers: a lying stride must wrap, not overflow a pointer.
  const auto base = reinterpret_cast<uintptr_t>(l->devices);
  for (size_t i = 0; i < l->count; ++i) {
    // Only ever handed to the bounded copy, never dereferenced.
    const auto* at = reinterpret_cast<const void*>(base + i * stride);  // NOLINT(performance-no-int-to-ptr)
    std::optional<zl_device_info> info = copy_struct<zl_device_info>(at);
    Device d;
    d.index = static_cast<int>(i);
    if (!info) {
      unreadable =
          "device list entries [" + std::to_string(i) + "] to [" + std::to_string(l->count - 1) + "] are not readable";
      q.rejected.push_back({d, "device list entries [" + std::to_string(i) + "] to [" + std::to_string(l->count - 1) +
                                   "] at " + pointer_words(at) + " are not readable (count " +
                                   std::to_string(l->count) + " larger than the array?)"});
      break;
    }
    bool bad_memory = false;
    std::string why = read_device(*info, i, abi_minor, d, &bad_memory);
    if (unreadable.empty() && bad_memory) unreadable = why;
    if (why.empty()) why = rule_problem(d, pin_var);
    if (!why.empty()) {
      // Shown (devices, its JSON) and never used: escaped like the rest.
      d.id = printable(d.id);
      d.visibility_value = printable(d.visibility_value);
      q.rejected.push_back({std::move(d), std::move(why)});
      continue;
    }
    q.devices.push_back(std::move(d));
  }
  std::optional<std::string> reason = read_backend_string(l->reason);
  if (reason) q.reason = printable(*reason);
  std::optional<std::string> source = read_backend_string(l->source);
  if (source) q.source = printable(*source);
  return unreadable;
}

}  // namespace zl::loader
