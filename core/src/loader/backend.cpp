#include "zlcore/backend.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <system_error>
#include <thread>

#include "../util/printable.hpp"
#include "crash_report.hpp"
#include "device_read.hpp"
#include "enumerate_once.hpp"
#include "lifecycle.hpp"
#include "named_value_read.hpp"
#include "open_backend.hpp"
#include "safe_read.hpp"
#include "stdout_guard.hpp"
#include "table_read.hpp"
#include "zlcore/loader.hpp"

namespace zl {

namespace loader {

std::string error_text(const zl_error* err) {
  std::optional<zl_error> e = copy_struct<zl_error>(err);
  if (!e) return "an error at " + pointer_words(err) + " that is not readable";
  std::optional<std::string> message;
  if (ZL_STRUCT_HAS_FIELD(&*e, zl_error, message)) message = read_backend_string(e->message);
  if (message && !message->empty()) return printable(*message);
  // As the bytes say: a code outside the enum must not be loaded as one.
  uint32_t code = 0;
  std::memcpy(&code, &e->code, sizeof code);
  return "error code " + std::to_string(code);
}

}  // namespace loader

Backend::Backend(const zl_backend_api* api, std::string path)
    : api_(api), path_(std::move(path)), overdue_(loader::overdue_calls(api)) {
  // The same bounded read negotiate_abi made: nothing else of the table's
  // is followed (calls go through its own entries, which that read copied).
  loader::TableRead read = loader::read_table(api);
  name_ = std::move(read.name);
  aliases_ = std::move(read.aliases);
  visibility_env_ = std::move(read.visibility_env);
  for (auto& [key, value] : read.capabilities) capabilities_[key] = std::move(value);
  torch_device_ = std::move(read.torch_device);
  framework_vendor_ = std::move(read.framework_vendor);
  backend_version_ = std::move(read.backend_version);
  extensions_ = std::move(read.extensions);
  table_problem_ = std::move(read.problem);
}

std::string Backend::abi() const { return std::to_string(api_->abi_major) + "." + std::to_string(api_->abi_minor); }

namespace loader {

DeviceQuery enumerate_once(const zl_backend_api* api, const std::string& pin_var,
                           const std::function<void(const char*)>& before, std::string* unreadable) {
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
    q.error = error_text(err);
    api->error_destroy(err);
  }
  if (list == nullptr) {
    if (q.error.empty()) q.error = "backend returned no device list";
    q.reason = q.error;
    return q;
  }
  const std::string call_error = q.error;
  const std::string bad_memory = read_device_list(list, api->abi_minor, pin_var, q);
  if (unreadable != nullptr) *unreadable = bad_memory;
  if (!call_error.empty()) q.error = call_error;
  if (!q.error.empty() && q.reason.empty()) q.reason = q.error;
  if (q.devices.empty() && !q.rejected.empty()) q.reason = q.rejected.front().reason;
  if (q.devices.empty() && q.reason.empty()) q.reason = "the backend reports no devices and gives no reason";
  api->device_list_destroy(list);
  return q;
}

DeviceState query_state_once(const zl_backend_api* api, int32_t index, const std::string& id, std::string* unreadable) {
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
    st.error = error_text(err);
    api->error_destroy(err);
  }
  if (args.state != nullptr) {
    std::optional<zl_device_state> state = copy_struct<zl_device_state>(args.state);
    std::string problem;
    if (!state) {
      problem = "state at " + pointer_words(args.state) + " is not readable";
    } else if (ZL_STRUCT_HAS_FIELD(&*state, zl_device_state, values)) {
      st.values = loader::read_named_values_checked(state->values, state->value_count, &problem);
    }
    if (!problem.empty() && st.error.empty()) st.error = "the backend's device " + problem;
    if (unreadable != nullptr) *unreadable = problem;
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
  const std::string pin_var = visibility_env_.empty() ? std::string() : visibility_env_.front();
  const std::string who = loader::backend_words(name_, path_);
  const loader::StdoutGuard quiet(who, "enumerate_devices");
  return call_with_limit<DeviceQuery>(
      overdue_, "enumerate_devices",
      [api, pin_var, who] {
        const loader::InBackendCall in(who, "enumerate_devices");
        return loader::enumerate_once(api, pin_var);
      },
      failed_query);
}

bool Backend::has_state() const { return ZL_ENTRY(api_, query_device_state) != nullptr; }

DeviceState Backend::query_state(const Device& device) const {
  if (!has_state()) return failed_state("backend '" + name_ + "' has no device-state query (ABI " + abi() + ")");
  const zl_backend_api* api = api_;
  const int32_t index = device.index;
  const std::string id = device.id;
  const std::string who = loader::backend_words(name_, path_);
  const loader::StdoutGuard quiet(who, "query_device_state");
  return call_with_limit<DeviceState>(
      overdue_, "query_device_state",
      [api, index, id, who] {
        const loader::InBackendCall in(who, "query_device_state");
        return loader::query_state_once(api, index, id);
      },
      failed_state);
}

}  // namespace zl
