// `zlcore __probe-backend FILE`: the child side of a probe. It does to FILE
// exactly what the loader and the first command would (open it, call the
// entry, read the table, enumerate once, release the list) and says each
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
  loader::enumerate_once(o.api, say_stage);
  say_stage(loader::stage::kShutdown);
  loader::shutdown_backend(o.api);
  say("ok");
  say_stage(loader::stage::kExit);
  return 0;
}

}  // namespace zl
