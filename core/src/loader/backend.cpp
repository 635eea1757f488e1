#include "zlcore/backend.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <system_error>
#include <thread>

#include "../util/printable.hpp"
#include "enumerate_once.hpp"
#include "lifecycle.hpp"
#include "open_backend.hpp"
#include "zlcore/loader.hpp"

namespace zl {
namespace {

std::string str(const char* s) { return s != nullptr ? std::string(s) : std::string(); }

std::vector<std::string> str_list(const char* const* list) {
  std::vector<std::string> out;
  if (list == nullptr) return out;
  for (; *list != nullptr; ++list) {
    if (**list != '\0') out.emplace_back(*list);
  }
  return out;
}

// A backend's name or alias: lower case letters, digits, '-' and '_',
// starting with a letter, at most 32 (docs/backend-abi.md, rule 8).
std::string name_problem(const std::string& name) {
  const bool ok =
      name.size() <= 32 && name[0] >= 'a' && name[0] <= 'z' && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
      });
  return ok ? "" : "is not lower case letters, digits, '-' and '_' starting with a letter (at most 32)";
}

// The table as it was in ABI 1.0: everything up to error_destroy.
constexpr size_t kMinTableSize = offsetof(zl_backend_api, error_destroy) + sizeof(zl_backend_api::error_destroy);

}  // namespace

std::string negotiate_abi(const zl_backend_api* api) {
  if (api == nullptr) return "entry returned NULL";
  constexpr size_t version_end = offsetof(zl_backend_api, abi_minor) + sizeof(uint32_t);
  if (api->struct_size < version_end) {
    return "table struct_size " + std::to_string(api->struct_size) + " is too small to hold the ABI version";
  }
  if (api->abi_major != ZL_BACKEND_ABI_MAJOR) {
    return "ABI major " + std::to_string(api->abi_major) + " does not match the core's " +
           std::to_string(ZL_BACKEND_ABI_MAJOR);
  }
  if (api->struct_size < kMinTableSize) {
    return "table struct_size " + std::to_string(api->struct_size) + " is smaller than the ABI " +
           std::to_string(ZL_BACKEND_ABI_MAJOR) + ".0 table (" + std::to_string(kMinTableSize) + " bytes)";
  }
  if (api->name == nullptr || *api->name == '\0') return "table has no name";
  // Names are what users type and what the registry matches: one spelling.
  if (const std::string why = name_problem(api->name); !why.empty())
    return "name '" + printable(api->name) + "' " + why;
  for (const std::string& alias : str_list(api->aliases)) {
    if (const std::string why = name_problem(alias); !why.empty()) return "alias '" + printable(alias) + "' " + why;
  }
  if (api->enumerate_devices == nullptr || api->device_list_destroy == nullptr || api->error_destroy == nullptr) {
    return "table lacks a required entry (enumerate_devices, device_list_destroy, error_destroy)";
  }
  if (api->capability_count > 0 && api->capabilities == nullptr) {
    return "table declares " + std::to_string(api->capability_count) + " capabilities but no array";
  }
  // A state the core could not release would leak on every query.
  if (ZL_ENTRY(api, query_device_state) != nullptr && ZL_ENTRY(api, device_state_destroy) == nullptr) {
    return "table has query_device_state but no device_state_destroy";
  }
  return {};
}

Backend::Backend(const zl_backend_api* api, std::string path)
    : api_(api), path_(std::move(path)), overdue_(loader::overdue_calls(api)) {
  name_ = str(api->name);
  aliases_ = str_list(api->aliases);
  visibility_env_ = str_list(api->visibility_env);
  for (size_t i = 0; i < api->capability_count; ++i) {
    const zl_capability& cap = api->capabilities[i];
    if (cap.key == nullptr || *cap.key == '\0') continue;
    capabilities_[cap.key] = cap.value != nullptr ? cap.value : "1";
  }
  torch_device_ = str(api->torch_device);
  framework_vendor_ = str(api->framework_vendor);
  if (api->abi_minor >= 1 && ZL_STRUCT_HAS_FIELD(api, zl_backend_api, backend_version)) {
    backend_version_ = str(api->backend_version);
  }
  if (auto chain = ZL_ENTRY(api, extension_start)) {
    // Cap the walk: a chain that loops back must not hang the loader.
    for (int hops = 0; chain != nullptr && hops < 256; chain = chain->next, ++hops) {
      if (chain->struct_size < ZL_EXTENSION_BASE_STRUCT_SIZE) break;
      extensions_.push_back(chain->type);
    }
  }
}

std::string Backend::abi() const { return std::to_string(api_->abi_major) + "." + std::to_string(api_->abi_minor); }

namespace loader {

namespace {

// Why the core cannot offer this device, or "" (the rules in backend.h
// that the core relies on).
std::string device_problem(const zl_backend_api* api, const Device& d) {
  if (d.id.empty()) return "device [" + std::to_string(d.index) + "] has no id";
  if (!str_list(api->visibility_env).empty() && d.visibility_value.empty()) {
    return "device [" + std::to_string(d.index) + "] " + d.id + " has no visibility_value, but the backend pins with " +
           str_list(api->visibility_env).front() + ": a child would see no device";
  }
  return {};
}

}  // namespace

DeviceQuery enumerate_once(const zl_backend_api* api, const std::function<void(const char*)>& before) {
  auto at = [&](const char* s) {
    if (before) before(s);
  };
  DeviceQuery q;
  zl_device_list* list = nullptr;
  at(stage::kEnumerate);
  zl_error* err = nullptr;
  // The args form when the table has it (minor 2), else the minor-0 call.
  if (auto fn = ZL_ENTRY(api, enumerate)) {
    zl_enumerate_args args{};
    args.struct_size = ZL_ENUMERATE_ARGS_STRUCT_SIZE;
    err = fn(&args);
    list = args.devices;
  } else {
    err = api->enumerate_devices(&list);
  }
  at(stage::kRelease);
  if (err != nullptr) {
    q.error = str(err->message);
    if (q.error.empty()) q.error = "error code " + std::to_string(static_cast<int>(err->code));
    api->error_destroy(err);
  }
  if (list == nullptr) {
    if (q.error.empty()) q.error = "backend returned no device list";
    q.reason = q.error;
    return q;
  }
  // Step by the backend's struct_size, not ours: the two may differ by minor.
  const size_t stride = (list->count > 0 && list->devices != nullptr) ? list->devices[0].struct_size : 0;
  const auto* base = reinterpret_cast<const char*>(list->devices);
  for (size_t i = 0; stride >= sizeof(size_t) && i < list->count; ++i) {
    const zl_device_info& info = *reinterpret_cast<const zl_device_info*>(base + i * stride);
    Device d;
    if (!ZL_STRUCT_HAS_FIELD(&info, zl_device_info, utilization_percent)) continue;
    d.index = info.index;
    d.id = str(info.id);
    d.name = str(info.name);
    d.memory_total_bytes = info.memory_total_bytes;
    d.memory_used_bytes = info.memory_used_bytes;
    d.utilization_percent = info.utilization_percent;
    if (ZL_STRUCT_HAS_FIELD(&info, zl_device_info, visibility_value)) {
      d.visibility_value = str(info.visibility_value);
    }
    if (api->abi_minor >= 2 && ZL_STRUCT_HAS_FIELD(&info, zl_device_info, attributes)) {
      d.attributes = read_named_values(info.attributes, info.attribute_count);
    }
    if (std::string why = device_problem(api, d); !why.empty()) {
      q.rejected.push_back({std::move(d), std::move(why)});
      continue;
    }
    q.devices.push_back(std::move(d));
  }
  q.reason = str(list->reason);
  q.source = str(list->source);
  if (q.devices.empty() && !q.rejected.empty()) q.reason = q.rejected.front().reason;
  if (q.devices.empty() && q.reason.empty()) q.reason = "the backend reports no devices and gives no reason";
  api->device_list_destroy(list);
  return q;
}

DeviceState query_state_once(const zl_backend_api* api, int32_t index, const std::string& id) {
  DeviceState st;
  auto fn = ZL_ENTRY(api, query_device_state);
  auto destroy = ZL_ENTRY(api, device_state_destroy);
  if (fn == nullptr || destroy == nullptr) {
    st.error = "the backend has no device-state query";
    return st;
  }
  zl_device_state_args args{};
  args.struct_size = ZL_DEVICE_STATE_ARGS_STRUCT_SIZE;
  args.index = index;
  args.id = id.c_str();
  zl_error* err = fn(&args);
  if (err != nullptr) {
    st.error = str(err->message);
    if (st.error.empty()) st.error = "error code " + std::to_string(static_cast<int>(err->code));
    api->error_destroy(err);
  }
  if (args.state != nullptr) {
    if (ZL_STRUCT_HAS_FIELD(args.state, zl_device_state, values)) {
      st.values = read_named_values(args.state->values, args.state->value_count);
    }
    destroy(args.state);
  } else if (st.error.empty()) {
    st.error = "the backend returned no state";
  }
  return st;
}

}  // namespace loader

namespace {

// Runs `call` on a thread of its own so that a backend that never answers
// costs the caller the time limit, not the command (batch enumerates between
// dispatch rounds, run and devices before anything else). A thread cannot be
// killed: one that ran out of time stays in the backend until it returns or
// the process exits, and until then no new call is made.
template <class Result, class Call>
Result call_with_limit(const std::shared_ptr<std::atomic<int>>& overdue, const char* what, Call call,
                       Result (*failed)(const std::string&)) {
  struct Shared {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    bool abandoned = false;  // the caller stopped waiting
    Result r;
  };
  if (overdue->load() > 0) {
    return failed(std::string(what) + " has not returned from a call that ran out of time");
  }
  const double limit = backend_timeout_s();
  auto shared = std::make_shared<Shared>();
  try {
    std::thread([shared, overdue, call] {
      Result r = call();
      std::lock_guard<std::mutex> lock(shared->m);
      shared->r = std::move(r);
      shared->done = true;
      if (shared->abandoned) overdue->fetch_sub(1);
      shared->cv.notify_all();
    }).detach();
  } catch (const std::system_error&) {
    return call();  // no thread to be had: ask on this one, without the limit
  }
  std::unique_lock<std::mutex> lock(shared->m);
  if (!shared->cv.wait_for(lock, std::chrono::duration<double>(limit), [&] { return shared->done; })) {
    shared->abandoned = true;
    overdue->fetch_add(1);
    return failed("no answer in " + loader::seconds_words(limit) + " from " + what);
  }
  return std::move(shared->r);
}

DeviceQuery failed_query(const std::string& why) {
  DeviceQuery q;
  q.error = why;
  q.reason = why;
  return q;
}

DeviceState failed_state(const std::string& why) {
  DeviceState s;
  s.error = why;
  return s;
}

}  // namespace

DeviceQuery Backend::enumerate() const {
  const zl_backend_api* api = api_;
  return call_with_limit<DeviceQuery>(
      overdue_, "enumerate_devices", [api] { return loader::enumerate_once(api); }, failed_query);
}

bool Backend::has_state() const { return ZL_ENTRY(api_, query_device_state) != nullptr; }

DeviceState Backend::query_state(const Device& device) const {
  if (!has_state()) return failed_state("backend '" + name_ + "' has no device-state query (ABI " + abi() + ")");
  const zl_backend_api* api = api_;
  const int32_t index = device.index;
  const std::string id = device.id;
  return call_with_limit<DeviceState>(
      overdue_, "query_device_state", [api, index, id] { return loader::query_state_once(api, index, id); },
      failed_state);
}

}  // namespace zl
