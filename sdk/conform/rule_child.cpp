// `zlcore-conform __conform-rule RULE FILE`: one rule against one backend,
// in a child the parent runs through the loader's probe machinery
// (probe.hpp): stages on fd 3 before each step, so that a crash or a hang
// is named by where it happened, then "ok" (with a "note skip ..." line
// for a rule that does not apply) or "reject <why the rule fails>".
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>

#include "lifecycle.hpp"
#include "open_backend.hpp"
#include "rules.hpp"

namespace zl::conform {
namespace {

int g_report_fd = 3;

void say(std::string line) {
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  line += '\n';
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(g_report_fd, p, left);
    if (n <= 0) return;  // the parent is gone
    p += n;
    left -= static_cast<size_t>(n);
  }
}

void say_stage(const char* stage) { say(std::string("stage ") + stage); }

size_t thread_count() {
  size_t n = 0;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (const dirent* e = ::readdir(d)) n += e->d_name[0] != '.';
    ::closedir(d);
  }
  return n;
}

// fd 1 onto an anonymous file the stdout rule reads back; the parent gave
// the child /dev/null there, which would swallow what the backend wrote.
int capture_stdout() {
  const int fd = ::memfd_create("zl-conform-stdout", MFD_CLOEXEC);
  if (fd >= 0) ::dup2(fd, 1);
  return fd;
}

}  // namespace

int rule_child_main(const std::string& rule_id, const std::string& file) {
  const pid_t parent = ::getppid();
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) return 1;
  g_report_fd = ::fcntl(3, F_GETFD) != -1 ? 3 : 2;  // by hand: the stages on stderr
  const Rule* rule = find_rule(rule_id);
  if (rule == nullptr || rule->run == nullptr) {
    say("reject no rule '" + rule_id + "' runs in a child");
    return 0;
  }
  Subject s;
  s.stage = say_stage;
  s.stdout_capture = capture_stdout();
  s.threads_before_load = thread_count();
  loader::OpenedBackend o = loader::open_backend(file, say_stage);
  // Never unloaded, as in the loader.
  static auto* keep = new boost::dll::shared_library();
  keep->swap(o.lib);
  if (!o.reason.empty()) {
    say("reject the loader rejects the file: " + o.reason);
    return 0;
  }
  s.api = o.api;
  s.table = loader::read_table(o.api);
  s.threads_after_entry = thread_count();
  s.pin_var = s.table.visibility_env.empty() ? std::string() : s.table.visibility_env.front();
  if (!rule->own_lifecycle) {
    say_stage(loader::stage::kInitialize);
    if (const std::string why = loader::initialize_backend(o.api); !why.empty()) {
      say("reject " + why);
      return 0;
    }
  }
  say_stage(loader::stage::kEnumerate);
  const Outcome out = rule->run(s);
  if (!rule->own_lifecycle) {
    say_stage(loader::stage::kShutdown);
    loader::shutdown_backend(o.api);
  }
  if (out.kind == Outcome::kFail) {
    say("reject " + out.why);
  } else {
    if (out.kind == Outcome::kSkip) say("note skip " + out.why);
    say("ok");
  }
  say_stage(loader::stage::kExit);
  return 0;
}

}  // namespace zl::conform
