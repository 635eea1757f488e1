#include "probe.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "../util/process_tree.hpp"
#include "../util/spawn_attr.hpp"
#include "open_backend.hpp"
#include "zlcore/bool_text.hpp"
#include "zlcore/process.hpp"

namespace zl::loader {
namespace {

// Probes at once: a directory of a dozen backends (or a dozen hanging ones)
// costs about one time limit, without a fork storm for a large directory.
constexpr size_t kParallel = 16;
// The time limit is for the backend's code, so it counts from the child's
// first word ("stage load", just before dlopen). Until then the child is
// zlcore starting up, which on a loaded machine (a dozen probes at once on
// two cores, a sanitizer build) took over a second: a good backend was
// rejected "before loading". zlcore's own start gets this long at least.
constexpr double kStartAllowance_s = 30;
// The child's report pipe is moved to a descriptor this high before the
// spawn, so that dup2 onto 3 never meets itself (which would keep its
// close-on-exec flag on some C libraries).
constexpr int kHighFd = 10;

std::string signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const std::string name = abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
  if (sig == SIGABRT) return "aborted (" + name + ")";
  return "killed by " + name;
}

struct Child {
  size_t index = 0;
  pid_t pid = -1;
  int report_fd = -1;  // read end of the child's fd 3
  int exit_fd = -1;    // pidfd, readable once it exits; -1 without one
  double started = 0;
  double heard = 0;    // when its first report line came; 0 before
  std::string buffer;  // report bytes not yet ended by '\n'
  std::string stage;   // the last stage it announced
  std::string final;   // "ok" or "reject <reason>"
  std::vector<std::string> notes;
  bool exited = false;
  int status = 0;
  bool timed_out = false;
};

// Lines of the child's report seen so far.
void take_lines(Child& c) {
  size_t nl;
  while ((nl = c.buffer.find('\n')) != std::string::npos) {
    std::string line = c.buffer.substr(0, nl);
    c.buffer.erase(0, nl + 1);
    if (c.heard == 0) c.heard = monotonic_seconds();
    if (line.rfind("stage ", 0) == 0) {
      c.stage = line.substr(6);
    } else if (line == "ok" || line.rfind("reject ", 0) == 0) {
      c.final = line;
    } else if (line.rfind("note ", 0) == 0) {
      c.notes.push_back(line.substr(5));
    }
  }
}

void drain(Child& c) {
  if (c.report_fd < 0) return;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(c.report_fd, buf, sizeof buf);
    if (n > 0) {
      c.buffer.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    ::close(c.report_fd);  // EOF
    c.report_fd = -1;
    break;
  }
  take_lines(c);
}

void close_child(Child& c) {
  if (c.report_fd >= 0) ::close(c.report_fd);
  if (c.exit_fd >= 0) ::close(c.exit_fd);
  c.report_fd = c.exit_fd = -1;
}

// Starts `program <verb...> file` in a process group of its own, with
// default signal handling, stdin and stdout on /dev/null, stderr ours only
// when tracing, and the report pipe on fd 3.
bool spawn(Child& c, const std::string& program, const std::vector<std::string>& verb, const std::string& file,
           bool keep_stderr, std::string* error) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  int write_end = ::fcntl(fds[1], F_DUPFD_CLOEXEC, kHighFd);
  ::close(fds[1]);
  if (write_end < 0) {
    ::close(fds[0]);
    *error = std::string("fcntl: ") + std::strerror(errno);
    return false;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  if (!keep_stderr) posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end, 3);
  const SpawnAttr attr(true);
  std::vector<std::string> args{program};
  args.insert(args.end(), verb.begin(), verb.end());
  args.push_back(file);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int rc = posix_spawn(&c.pid, program.c_str(), &actions, attr.get(), argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(write_end);
  if (rc != 0) {
    ::close(fds[0]);
    c.pid = -1;
    *error = program + ": " + std::strerror(rc);
    return false;
  }
  c.report_fd = fds[0];
  ::fcntl(c.report_fd, F_SETFL, ::fcntl(c.report_fd, F_GETFL) | O_NONBLOCK);
#ifdef SYS_pidfd_open
  c.exit_fd = static_cast<int>(::syscall(SYS_pidfd_open, c.pid, 0));
  if (c.exit_fd >= 0) ::fcntl(c.exit_fd, F_SETFD, FD_CLOEXEC);
#endif
  c.started = monotonic_seconds();
  return true;
}

// The limit on the child now: the backend's from its first word, zlcore's
// start before that.
double limit_of(const Child& c, double timeout_s) {
  return c.heard > 0 ? timeout_s : std::max(timeout_s, kStartAllowance_s);
}

double deadline_of(const Child& c, double timeout_s) {
  return (c.heard > 0 ? c.heard : c.started) + limit_of(c, timeout_s);
}

ProbeVerdict verdict_of(const Child& c, double timeout_s) {
  ProbeVerdict v;
  v.seconds = monotonic_seconds() - c.started;
  v.notes = c.notes;
  if (c.timed_out) {
    v.timed_out = true;
    v.reason = "no answer in " + seconds_words(limit_of(c, timeout_s)) + " " + stage_words(c.stage);
    return v;
  }
  const bool clean = WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0;
  if (c.final.rfind("reject ", 0) == 0) {
    v.reason = c.final.substr(7);
    return v;
  }
  if (c.final == "ok" && clean) {
    v.ok = true;
    return v;
  }
  if (WIFSIGNALED(c.status)) {
    v.reason = signal_text(WTERMSIG(c.status)) + " " + stage_words(c.stage);
  } else {
    v.reason = "exited with " + std::to_string(WEXITSTATUS(c.status)) + " " + stage_words(c.stage);
  }
  return v;
}

}  // namespace

std::vector<ProbeVerdict> probe_files(const std::vector<std::string>& files, const std::string& program,
                                      double timeout_s, const std::vector<std::string>& verb) {
  std::vector<ProbeVerdict> verdicts(files.size());
  const char* trace = std::getenv("ZL_DEBUG_LOADER");
  const bool keep_stderr = trace != nullptr && parse_bool(trace).value_or(false);
  std::vector<Child> running;
  size_t next = 0;
  while (next < files.size() || !running.empty()) {
    while (next < files.size() && running.size() < kParallel) {
      Child c;
      c.index = next;
      std::string error;
      if (spawn(c, program, verb, files[next], keep_stderr, &error)) {
        running.push_back(std::move(c));
      } else {
        verdicts[next].reason = "cannot probe: " + error;
        verdicts[next].cacheable = false;
      }
      ++next;
    }
    if (running.empty()) break;

    // Sleep until a report, an exit or the nearest deadline.
    const double now = monotonic_seconds();
    double wait_s = 0.05;  // without pidfds, re-check exits this often
    std::vector<pollfd> fds;
    bool have_pidfds = true;
    for (const Child& c : running) {
      wait_s = std::min(wait_s, std::max(0.0, deadline_of(c, timeout_s) - now));
      if (c.report_fd >= 0) fds.push_back({c.report_fd, POLLIN, 0});
      if (c.exit_fd >= 0) {
        fds.push_back({c.exit_fd, POLLIN, 0});
      } else {
        have_pidfds = false;
      }
    }
    if (have_pidfds) {
      wait_s = 1e9;
      for (const Child& c : running) wait_s = std::min(wait_s, std::max(0.0, deadline_of(c, timeout_s) - now));
    }
    ::poll(fds.data(), fds.size(), static_cast<int>(wait_s * 1000) + 1);

    for (Child& c : running) {
      drain(c);
      pid_t r = ::waitpid(c.pid, &c.status, WNOHANG);
      if (r == c.pid) {
        c.exited = true;
        drain(c);  // what it wrote before it went
      } else if (monotonic_seconds() > deadline_of(c, timeout_s)) {
        // Its whole tree: a tool it started is as stuck as it is.
        kill_tree(c.pid);
        while (::waitpid(c.pid, &c.status, 0) < 0 && errno == EINTR) {
        }
        c.exited = true;
        c.timed_out = true;
        drain(c);
      }
      if (c.exited) {
        ::kill(-c.pid, SIGKILL);  // whatever it left in its group
        close_child(c);
        verdicts[c.index] = verdict_of(c, timeout_s);
      }
    }
    running.erase(std::remove_if(running.begin(), running.end(), [](const Child& c) { return c.exited; }),
                  running.end());
  }
  return verdicts;
}

}  // namespace zl::loader
