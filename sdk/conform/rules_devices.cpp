// Rules about what enumerate and query_device_state answer. The list is read
// by the loader's own reader (device_read.hpp), so every reason the core
// gives for a device it leaves out is a failure here; the kit adds what the
// core tolerates but the ABI does not allow.
#include <cstdlib>
#include <set>

#include "check_util.hpp"
#include "device_read.hpp"
#include "enumerate_once.hpp"
#include "lifecycle.hpp"
#include "open_backend.hpp"
#include "rules.hpp"
#include "safe_read.hpp"
#include "util/printable.hpp"

namespace zl::conform {
namespace {

constexpr const char* kNoSuchDevice = "zl-conform-no-such-device";

// What the list itself breaks beyond the loader's checks ("" for nothing).
std::string list_problem(const zl_device_list* list, uint32_t minor) {
  const auto l = loader::copy_struct<zl_device_list>(list);
  if (!l) return "the device list is not readable";
  if (l->struct_size < ZL_DEVICE_LIST_STRUCT_SIZE) {
    return "the list's struct_size " + std::to_string(l->struct_size) + " is below ZL_DEVICE_LIST_STRUCT_SIZE (" +
           std::to_string(ZL_DEVICE_LIST_STRUCT_SIZE) + ")";
  }
  const auto source = loader::read_backend_string(l->source);
  if (!source || source->empty()) return "the list names no source (\"library\", \"tool\", ...)";
  if (!is_text(*source)) return "the list's source is not one line of printable text";
  const auto reason = loader::read_backend_string(l->reason);
  if (l->count == 0 && (!reason || reason->empty())) return "the list has no devices and no reason";
  if (reason && !is_text(*reason)) return "the list's reason '" + printable(*reason) + "' is not one line of text";
  if (l->count == 0) return {};
  const size_t need = minor >= 2 ? ZL_DEVICE_INFO_STRUCT_SIZE : ZL_DEVICE_INFO_STRUCT_SIZE_1_1;
  std::set<std::string> ids;
  size_t stride = 0;
  for (size_t i = 0; i < l->count && i < loader::kMaxDevices; ++i) {
    const std::string at = "device [" + std::to_string(i) + "]";
    const auto d = loader::copy_struct<zl_device_info>(reinterpret_cast<const char*>(l->devices) + i * stride);
    if (!d) return at + " is not readable";
    if (i == 0) stride = d->struct_size;
    if (d->struct_size < need) {
      return at + " struct_size " + std::to_string(d->struct_size) + " does not reach the last field of ABI 1." +
             std::to_string(minor) + " (" + std::to_string(need) + " bytes)";
    }
    if (d->struct_size != stride) return at + " struct_size differs from device [0]'s (one stride for the array)";
    const auto name = loader::read_backend_string(d->name);
    if (!name) return at + " has a NULL name";
    if (d->utilization_percent < -1 || d->utilization_percent > 100) {
      return at + " utilization_percent " + std::to_string(d->utilization_percent) + " is not -1 or 0..100";
    }
    if (d->memory_used_bytes < -1) return at + " memory_used_bytes is below -1";
    const auto id = loader::read_backend_string(d->id);
    if (id && !ids.insert(*id).second) return at + " has the id '" + *id + "' of an earlier device";
    if (minor >= 2) {
      const std::string bad = named_values_problem(d->attributes, d->attribute_count, at + " attribute");
      if (!bad.empty()) return bad;
    }
  }
  return {};
}

DeviceQuery enumerate_with(const Subject& s, const zl_backend_api* api) {
  return loader::enumerate_once(api, s.pin_var, s.stage);
}

}  // namespace

Outcome devices(Subject& s) {
  zl_device_list* list = nullptr;
  zl_error* err = nullptr;
  if (auto fn = ZL_ENTRY(s.api, enumerate)) {
    zl_enumerate_args args{};
    args.struct_size = ZL_ENUMERATE_ARGS_STRUCT_SIZE;
    err = fn(&args);
    list = args.devices;
  } else {
    err = s.api->enumerate_devices(&list);
  }
  if (err != nullptr) {
    std::string words = loader::error_text(err);
    if (const std::string bad = error_problem(err); !bad.empty()) words += " (" + bad + ")";
    s.api->error_destroy(err);
    if (list != nullptr) s.api->device_list_destroy(list);
    return fail("enumerate returned an error (a missing driver is a list with a reason): " + words);
  }
  if (list == nullptr) return fail("enumerate returned neither a list nor an error");
  DeviceQuery q;
  const std::string unreadable = loader::read_device_list(list, s.api->abi_minor, s.pin_var, q);
  const std::string bad = unreadable.empty() ? list_problem(list, s.api->abi_minor) : unreadable;
  s.api->device_list_destroy(list);
  if (!bad.empty()) return fail(bad);
  if (!q.rejected.empty()) return fail("the core leaves a device out: " + q.rejected.front().reason);
  if (!q.error.empty()) return fail(q.error);
  return pass();
}

Outcome enumerate_idempotent(Subject& s) {
  const DeviceQuery first = enumerate_with(s, s.api);
  for (const char* again : {"the second call", "the third call"}) {
    const std::string diff = device_difference(first, enumerate_with(s, s.api), again);
    if (!diff.empty()) return fail(diff);
  }
  return pass();
}

Outcome enumerate_entries_agree(Subject& s) {
  if (ZL_ENTRY(s.api, enumerate) == nullptr) return skip("the table has no enumerate (ABI 1.2, optional)");
  const DeviceQuery with_args = enumerate_with(s, s.api);
  // The same table without `enumerate`: the loader then calls
  // enumerate_devices, as a core of minor 0 or 1 does.
  zl_backend_api older = s.table.table;
  older.enumerate = nullptr;
  const std::string diff = device_difference(with_args, enumerate_with(s, &older), "enumerate_devices");
  return diff.empty() ? pass() : fail(diff);
}

Outcome visibility_ignored(Subject& s) {
  if (s.table.visibility_env.empty()) return skip("the backend has no visibility variable");
  const DeviceQuery all = enumerate_with(s, s.api);
  if (all.devices.empty()) return skip("no devices here to hide (" + all.reason + ")");
  for (const std::string& var : s.table.visibility_env) ::setenv(var.c_str(), kNoSuchDevice, 1);
  const DeviceQuery pinned = enumerate_with(s, s.api);
  for (const std::string& var : s.table.visibility_env) ::unsetenv(var.c_str());
  const std::string diff = device_difference(all, pinned, s.table.visibility_env.front() + "=" + kNoSuchDevice);
  return diff.empty() ? pass() : fail(diff);
}

Outcome device_state(Subject& s) {
  auto query = ZL_ENTRY(s.api, query_device_state);
  auto destroy = ZL_ENTRY(s.api, device_state_destroy);
  if (query == nullptr) return skip("the table has no query_device_state (ABI 1.2, optional)");
  const DeviceQuery q = enumerate_with(s, s.api);
  if (q.devices.empty()) return skip("no devices here to ask (" + q.reason + ")");
  for (const Device& d : q.devices) {
    const std::string at = "device [" + std::to_string(d.index) + "]";
    zl_device_state_args args{};
    args.struct_size = ZL_DEVICE_STATE_ARGS_STRUCT_SIZE;
    args.index = d.index;
    args.id = d.id.c_str();
    s.stage(loader::stage::kState);
    if (zl_error* err = query(&args)) {
      const std::string words = loader::error_text(err);
      s.api->error_destroy(err);
      return fail(at + ": query_device_state returned an error: " + words);
    }
    const auto st = loader::copy_struct<zl_device_state>(args.state);
    std::string bad = !st ? at + ": query_device_state returned no state" : "";
    if (bad.empty() && st->struct_size < ZL_DEVICE_STATE_STRUCT_SIZE)
      bad = at + ": the state's struct_size is too small";
    if (bad.empty()) bad = named_values_problem(st->values, st->value_count, at + " state value");
    if (args.state != nullptr) destroy(args.state);
    if (!bad.empty()) return fail(bad);
  }
  // The header: the backend checks that index and id still agree.
  zl_device_state_args wrong{};
  wrong.struct_size = ZL_DEVICE_STATE_ARGS_STRUCT_SIZE;
  wrong.index = q.devices.front().index;
  wrong.id = kNoSuchDevice;
  s.stage(loader::stage::kState);
  zl_error* err = query(&wrong);
  if (err == nullptr) {
    if (wrong.state != nullptr) destroy(wrong.state);
    return fail("query_device_state answered for an id that names no device (want ZL_ERROR_INVALID_ARGUMENT)");
  }
  std::string bad = error_problem(err);
  const auto e = loader::copy_struct<zl_error>(err);
  if (bad.empty() && e->code != ZL_ERROR_INVALID_ARGUMENT) {
    bad = "query_device_state for an id that names no device returned code " + std::to_string(e->code) +
          ", not ZL_ERROR_INVALID_ARGUMENT";
  }
  s.api->error_destroy(err);
  return bad.empty() ? pass() : fail(bad);
}

}  // namespace zl::conform
