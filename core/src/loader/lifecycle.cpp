#include "lifecycle.hpp"

#include <cstddef>
#include <cstdlib>
#include <map>
#include <mutex>

namespace zl::loader {
namespace {

struct Entry {
  std::shared_ptr<std::atomic<int>> overdue = std::make_shared<std::atomic<int>>(0);
  bool initialized = false;
};

std::mutex& mutex() {
  static auto* m = new std::mutex();
  return *m;
}

// Never destroyed: the exit handler reads it after static destructors may
// have run.
std::map<const zl_backend_api*, Entry>& entries() {
  static auto* m = new std::map<const zl_backend_api*, Entry>();
  return *m;
}

std::string message_of(const zl_backend_api* api, zl_error* err) {
  std::string text = err->message != nullptr ? err->message : "";
  if (text.empty()) text = "error code " + std::to_string(static_cast<int>(err->code));
  api->error_destroy(err);
  return text;
}

void call_shutdown(const zl_backend_api* api) {
  auto fn = ZL_ENTRY(api, shutdown);
  if (fn == nullptr) return;
  zl_shutdown_args args{};
  args.struct_size = ZL_SHUTDOWN_ARGS_STRUCT_SIZE;
  if (zl_error* err = fn(&args)) message_of(api, err);  // nothing to tell at exit
}

void shutdown_all() {
  std::lock_guard<std::mutex> lock(mutex());
  for (auto& [api, e] : entries()) {
    if (e.initialized && e.overdue->load() == 0) call_shutdown(api);
    e.initialized = false;
  }
}

}  // namespace

std::shared_ptr<std::atomic<int>> overdue_calls(const zl_backend_api* api) {
  std::lock_guard<std::mutex> lock(mutex());
  return entries()[api].overdue;
}

std::string initialize_backend(const zl_backend_api* api) {
  auto fn = ZL_ENTRY(api, initialize);
  if (fn == nullptr) return {};
  {
    std::lock_guard<std::mutex> lock(mutex());
    if (entries()[api].initialized) return {};
  }
  zl_initialize_args args{};
  args.struct_size = ZL_INITIALIZE_ARGS_STRUCT_SIZE;
  if (zl_error* err = fn(&args)) return "initialize failed: " + message_of(api, err);
  static const bool registered = (std::atexit(shutdown_all), true);
  (void)registered;
  std::lock_guard<std::mutex> lock(mutex());
  entries()[api].initialized = true;
  return {};
}

void shutdown_backend(const zl_backend_api* api) {
  {
    std::lock_guard<std::mutex> lock(mutex());
    Entry& e = entries()[api];
    if (!e.initialized) return;
    e.initialized = false;
  }
  call_shutdown(api);
}

}  // namespace zl::loader
