// `zlcore __probe-backend FILE`: the child side of a probe. It does to FILE
// exactly what the loader and the first command would (open it, call the
// entry, read the whole table, enumerate once and read the whole list, ask
// each device's state, release what it got) and says each
// stage before it starts, on fd 3, with one write each, so that whatever
// kills this process the parent knows where it was. The last line is "ok" or
// "reject <reason>" (a reason the loader gives without any crash).
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <string>

#include "enumerate_once.hpp"
#include "lifecycle.hpp"
#include "open_backend.hpp"
#include "table_read.hpp"
#include "zlcore/loader.hpp"

namespace zl {
namespace {

int g_report_fd = 1;

void say(std::string line) {
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  line += '\n';
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(g_report_fd, p, left);
    if (n <= 0) return;  // the parent is gone; nothing to tell
    p += n;
    left -= static_cast<size_t>(n);
  }
}

void say_stage(const char* stage) { say(std::string("stage ") + stage); }

}  // namespace

int probe_backend_main(const std::string& file) {
  // A probe must not outlive the zlcore that waits for it (Ctrl-C there
  // would leave a hung one behind).
  const pid_t parent = getppid();
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) return 1;
  // By hand, without fd 3, the stages go to stdout for a person to read.
  g_report_fd = ::fcntl(3, F_GETFD) != -1 ? 3 : 1;

  loader::OpenedBackend o = loader::open_backend(file, say_stage);
  // Never unloaded, as in the loader: the backend's destructors run at exit,
  // which is a stage of its own.
  static auto* keep = new boost::dll::shared_library();
  keep->swap(o.lib);
  if (!o.reason.empty()) {
    say("reject " + o.reason);
    return 0;
  }
  say_stage(loader::stage::kInitialize);
  if (const std::string why = loader::initialize_backend(o.api); !why.empty()) {
    say("reject " + why);
    return 0;
  }
  // The table was read whole by open_backend (negotiate_abi); the list is
  // read the same way the core reads it, strings and attributes included.
  const loader::TableRead table = loader::read_table(o.api);
  std::string unreadable;
  const DeviceQuery q = loader::enumerate_once(
      o.api, table.visibility_env.empty() ? std::string() : table.visibility_env.front(), say_stage, &unreadable);
  if (!unreadable.empty()) {
    say("reject enumerate_devices returned a list that cannot be read: " + unreadable);
    return 0;
  }
  // Every call a command makes, made once here first: `devices` asks each
  // device's state.
  for (const Device& d : q.devices) {
    say_stage(loader::stage::kState);
    std::string bad_state;
    loader::query_state_once(o.api, d.index, d.id, &bad_state);
    if (!bad_state.empty()) {
      say("reject query_device_state returned a state that cannot be read: " + bad_state);
      return 0;
    }
  }
  say_stage(loader::stage::kShutdown);
  loader::shutdown_backend(o.api);
  say("ok");
  say_stage(loader::stage::kExit);
  return 0;
}

}  // namespace zl
