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
  const bool ok = name.size() <= 32 && name[0] >= 'a' && name[0] <= 'z' &&
                  std::all_of(name.begin(), name.end(), [](char c) {
                    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
                  });
  return ok ? "" : "is not lower case letters, digits, '-' and '_' starting with a letter (at most 32)";
}

// The table as it was in ABI 1.0: everything up to error_destroy.
constexpr size_t kMinTableSize =
    offsetof(zl_backend_api, error_destroy) + sizeof(zl_backend_api::error_destroy);

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
  if (const std::string why = name_problem(api->name); !why.empty()) return "name '" + printable(api->name) + "' " + why;
  for (const std::string& alias : str_list(api->aliases)) {
    if (const std::string why = name_problem(alias); !why.empty()) return "alias '" + printable(alias) + "' " + why;
  }
  if (api->enumerate_devices == nullptr || api->device_list_destroy == nullptr ||
      api->error_destroy == nullptr) {
    return "table lacks a required entry (enumerate_devices, device_list_destroy, error_destroy)";
  }
  if (api->capability_count > 0 && api->capabilities == nullptr) {
    return "table declares " + std::to_string(api->capability_count) + " capabilities but no array";
  }
  return {};
}

Backend::Backend(const zl_backend_api* api, std::string path) : api_(api), path_(std::move(path)) {
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
}

std::string Backend::abi() const {
  return std::to_string(api_->abi_major) + "." + std::to_string(api_->abi_minor);
}

namespace loader {

DeviceQuery enumerate_once(const zl_backend_api* api, const std::function<void(const char*)>& before) {
  auto at = [&](const char* s) {
    if (before) before(s);
  };
  DeviceQuery q;
  zl_device_list* list = nullptr;
  at(stage::kEnumerate);
  zl_error* err = api->enumerate_devices(&list);
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
    q.devices.push_back(std::move(d));
  }
  q.reason = str(list->reason);
  q.source = str(list->source);
  if (q.devices.empty() && q.reason.empty()) q.reason = "the backend reports no devices and gives no reason";
  api->device_list_destroy(list);
  return q;
}

}  // namespace loader

// The call runs on a thread of its own so that a backend that never answers
// costs the caller the time limit, not the command (batch enumerates between
// dispatch rounds, run and devices before anything else). A thread cannot be
// killed: one that ran out of time stays in the backend until it returns or
// the process exits, and until then no new call is made.
DeviceQuery Backend::enumerate() const {
  struct Call {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    bool abandoned = false;  // the caller stopped waiting
    DeviceQuery q;
  };
  auto failed = [](const std::string& why) {
    DeviceQuery q;
    q.error = why;
    q.reason = why;
    return q;
  };
  if (overdue_->load() > 0) return failed("enumerate_devices has not returned from a call that ran out of time");
  const double limit = backend_timeout_s();
  auto call = std::make_shared<Call>();
  std::shared_ptr<std::atomic<int>> overdue = overdue_;
  const zl_backend_api* api = api_;
  try {
    std::thread([call, overdue, api] {
      DeviceQuery q = loader::enumerate_once(api);
      std::lock_guard<std::mutex> lock(call->m);
      call->q = std::move(q);
      call->done = true;
      if (call->abandoned) overdue->fetch_sub(1);
      call->cv.notify_all();
    }).detach();
  } catch (const std::system_error&) {
    return loader::enumerate_once(api);  // no thread to be had: ask on this one, without the limit
  }
  std::unique_lock<std::mutex> lock(call->m);
  if (!call->cv.wait_for(lock, std::chrono::duration<double>(limit), [&] { return call->done; })) {
    call->abandoned = true;
    overdue->fetch_add(1);
    return failed("no answer in " + loader::seconds_words(limit) + " from enumerate_devices");
  }
  return std::move(call->q);
}

}  // namespace zl
