// Rules about what a backend does to the process it is loaded into:
// zlcore's stdout is its table or its JSON, and a file the loader rejects is
// unloaded, so nothing it started may still run.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "enumerate_once.hpp"
#include "lifecycle.hpp"
#include "rules.hpp"
#include "util/printable.hpp"

namespace zl::conform {

Outcome stdout_silent(Subject& s) {
  // Every call a command makes, as the probe child makes them.
  if (const std::string why = loader::initialize_backend(s.api); !why.empty()) return fail(why);
  const DeviceQuery q = loader::enumerate_once(s.api, s.pin_var);
  for (const Device& d : q.devices) loader::query_state_once(s.api, d.index, d.id);
  loader::shutdown_backend(s.api);
  std::fflush(stdout);  // what a backend's printf left in stdio's buffer
  struct stat st {};
  if (::fstat(s.stdout_capture, &st) != 0 || st.st_size == 0) return pass();
  char head[200];
  const ssize_t n = ::pread(s.stdout_capture, head, sizeof head, 0);
  return fail("wrote " + std::to_string(st.st_size) + " bytes on stdout: '" +
              printable(std::string(head, n > 0 ? static_cast<size_t>(n) : 0)) + "'");
}

Outcome no_threads_on_load(Subject& s) {
  if (s.threads_after_entry <= s.threads_before_load) return pass();
  return fail(std::to_string(s.threads_after_entry - s.threads_before_load) +
              " thread(s) started by dlopen and the entry call: a file the loader rejects is unloaded under them "
              "(start threads in initialize)");
}

}  // namespace zl::conform
