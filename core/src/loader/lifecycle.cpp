#include "lifecycle.hpp"

#include <cstddef>
#include <cstdlib>
#include <map>
#include <mutex>

#include "crash_report.hpp"
#include "enumerate_once.hpp"
#include "stdout_guard.hpp"

namespace zl::loader {
namespace {

struct Entry {
  std::shared_ptr<std::atomic<int>> overdue = std::make_shared<std::atomic<int>>(0);
  bool initialized = false;
  std::string who;  // backend_words(); "" in the probe child
};

// A call into the backend, watched in process (crash_report.hpp,
// stdout_guard.hpp) and left alone in the probe child, whose parent reads
// what it dies of.
template <class Call>
auto watched(const std::string& who, const char* what, Call call) {
  if (who.empty()) return call();
  const StdoutGuard quiet(who, what);
  const InBackendCall in(who, what);
  return call();
}

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
  std::string text = error_text(err);
  api->error_destroy(err);
  return text;
}

void call_shutdown(const zl_backend_api* api, const std::string& who) {
  auto fn = ZL_ENTRY(api, shutdown);
  if (fn == nullptr) return;
  watched(who, "shutdown", [&] {
    zl_shutdown_args args{};
    args.struct_size = ZL_SHUTDOWN_ARGS_STRUCT_SIZE;
    if (zl_error* err = fn(&args)) message_of(api, err);  // nothing to tell at exit
    return 0;
  });
}

void shutdown_all() {
  std::lock_guard<std::mutex> lock(mutex());
  for (auto& [api, e] : entries()) {
    if (e.initialized && e.overdue->load() == 0) call_shutdown(api, e.who);
    e.initialized = false;
  }
}

}  // namespace

std::shared_ptr<std::atomic<int>> overdue_calls(const zl_backend_api* api) {
  std::lock_guard<std::mutex> lock(mutex());
  return entries()[api].overdue;
}

std::string initialize_backend(const zl_backend_api* api, const std::string& who) {
  auto fn = ZL_ENTRY(api, initialize);
  if (fn == nullptr) return {};
  {
    std::lock_guard<std::mutex> lock(mutex());
    if (entries()[api].initialized) return {};
  }
  const std::string failed = watched(who, "initialize", [&] {
    zl_initialize_args args{};
    args.struct_size = ZL_INITIALIZE_ARGS_STRUCT_SIZE;
    zl_error* err = fn(&args);
    return err != nullptr ? message_of(api, err) : std::string();
  });
  if (!failed.empty()) return "initialize failed: " + failed;
  static const bool registered = (std::atexit(shutdown_all), true);
  (void)registered;
  std::lock_guard<std::mutex> lock(mutex());
  entries()[api].initialized = true;
  entries()[api].who = who;
  return {};
}

void shutdown_backend(const zl_backend_api* api) {
  std::string who;
  {
    std::lock_guard<std::mutex> lock(mutex());
    Entry& e = entries()[api];
    if (!e.initialized) return;
    e.initialized = false;
    who = e.who;
  }
  call_shutdown(api, who);
}

}  // namespace zl::loader
