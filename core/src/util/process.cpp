#include "zlcore/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <stdexcept>

#include "printable.hpp"
#include "process_tree.hpp"
#include "spawn_attr.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/signals.hpp"

namespace zl {

double monotonic_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

namespace {

std::vector<std::string> build_env(const ChildSpec& spec) {
  std::set<std::string> drop(spec.env_unset.begin(), spec.env_unset.end());
  for (const auto& kv : spec.env_set) drop.insert(kv.first);
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    size_t eq = entry.find('=');
    if (eq == std::string::npos || drop.count(entry.substr(0, eq))) continue;
    env.push_back(std::move(entry));
  }
  for (const auto& [k, v] : spec.env_set) env.push_back(k + "=" + v);
  return env;
}

void write_all(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return;  // a closed stdout must not stop the child's log
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
}

}  // namespace

ChildProcess::ChildProcess(ChildSpec spec) : spec_(std::move(spec)) {}

ChildProcess::~ChildProcess() {
  if (running()) {
    kill_tree(pid_);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  if (out_fd_ >= 0) close(out_fd_);
  if (pid_fd_ >= 0) close(pid_fd_);
  if (log_fd_ >= 0) close(log_fd_);
}

bool ChildProcess::start() {
  if (spec_.argv.empty()) {
    result_.spawn_error = "empty command";
    return false;
  }
  if (!spec_.log_path.empty()) {
    try {
      log_fd_ = open_for_append(spec_.log_path);
    } catch (const std::exception& e) {
      result_.spawn_error = e.what();
      return false;
    }
  }
  // Nothing to echo: the child writes straight into its log, so no pipe has
  // to be pumped (a wake-up of ours per write of theirs). Otherwise a pipe
  // that pump() copies to the log and to our stdout.
  const bool direct = !spec_.echo && log_fd_ >= 0;
  int fds[2] = {-1, -1};
  if (!direct && pipe2(fds, O_CLOEXEC) != 0) {
    result_.spawn_error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  const int child_out = direct ? log_fd_ : fds[1];

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, child_out, 1);
  posix_spawn_file_actions_adddup2(&actions, child_out, 2);
  if (!spec_.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, spec_.cwd.c_str());

  // Its own process group (unless the spec says otherwise), so signals reach
  // its whole tree.
  const SpawnAttr attr(spec_.new_group);

  std::vector<char*> args;
  for (const std::string& a : spec_.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env = build_env(spec_);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  // posix_spawnp searches the PATH of *our* environment, which is what a
  // user typing the same argv would get.
  int rc = posix_spawnp(&pid_, args[0], &actions, attr.get(), args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (fds[1] >= 0) close(fds[1]);
  if (rc != 0) {
    if (fds[0] >= 0) close(fds[0]);
    pid_ = -1;
    result_.spawn_error = spec_.argv[0] + ": " + std::strerror(rc);
    return false;
  }
  out_fd_ = fds[0];
  if (out_fd_ >= 0) fcntl(out_fd_, F_SETFL, fcntl(out_fd_, F_GETFL) | O_NONBLOCK);
#ifdef SYS_pidfd_open
  // Lets an event loop sleep in poll() until the exit itself instead of
  // re-checking waitpid on a timer after the output closes.
  pid_fd_ = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
  if (pid_fd_ >= 0) fcntl(pid_fd_, F_SETFD, FD_CLOEXEC);
#endif
  started_at_ = monotonic_seconds();
  result_.started = true;
  return true;
}

double ChildProcess::elapsed() const { return started_at_ > 0 ? monotonic_seconds() - started_at_ : 0; }

void ChildProcess::write_out(const char* data, size_t n) {
  if (log_fd_ >= 0) write_all(log_fd_, data, n);
  if (!spec_.echo) return;
  if (spec_.echo_prefix.empty() && !spec_.echo_printable) {
    write_all(1, data, n);
    return;
  }
  if (spec_.echo_prefix.empty()) {
    // Escaped as it comes (pytest's progress dots must not wait for a line
    // end); only a UTF-8 sequence split by the read waits for its rest.
    partial_.append(data, n);
    size_t cut = partial_.size();
    for (size_t back = 1; back <= 3 && back <= partial_.size(); ++back) {
      const auto c = static_cast<unsigned char>(partial_[partial_.size() - back]);
      if ((c & 0xC0) == 0x80) continue;
      const size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
      if (need > back) cut = partial_.size() - back;
      break;
    }
    const std::string out = printable_lines(partial_.substr(0, cut));
    write_all(1, out.data(), out.size());
    partial_.erase(0, cut);
    return;
  }
  // With a prefix, echo whole lines only, so concurrent children interleave
  // by line rather than by byte.
  partial_.append(data, n);
  size_t start = 0, nl;
  while ((nl = partial_.find('\n', start)) != std::string::npos) {
    std::string line = spec_.echo_prefix + (spec_.echo_printable ? printable(partial_.substr(start, nl - start)) + "\n"
                                                                 : partial_.substr(start, nl - start + 1));
    write_all(1, line.data(), line.size());
    start = nl + 1;
  }
  partial_.erase(0, start);
}

void ChildProcess::pump() {
  if (out_fd_ < 0) return;
  char buf[16384];
  for (;;) {
    ssize_t n = read(out_fd_, buf, sizeof buf);
    if (n > 0) {
      write_out(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    // EOF (or a read error): the child and everything holding the pipe closed it.
    close(out_fd_);
    out_fd_ = -1;
    if (!partial_.empty()) {
      std::string rest = spec_.echo_prefix + (spec_.echo_printable ? printable(partial_) : partial_) + "\n";
      write_all(1, rest.data(), rest.size());
      partial_.clear();
    }
    return;
  }
}

void ChildProcess::finish(int status) {
  reaped_ = true;
  result_.seconds = elapsed();
  if (WIFEXITED(status)) result_.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result_.term_signal = WTERMSIG(status);
}

bool ChildProcess::poll_exit() {
  if (pid_ <= 0) return true;
  if (reaped_) return out_fd_ < 0;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    finish(status);
    // A grandchild may still hold the pipe; drain what is there and stop
    // reading, since the process we own is gone.
    pump();
    if (out_fd_ >= 0) {
      close(out_fd_);
      out_fd_ = -1;
    }
    return true;
  }
  return false;
}

void ChildProcess::signal_group(int sig) {
  if (pid_ > 0 && !reaped_) kill(spec_.new_group ? -pid_ : pid_, sig);
}

void ChildProcess::stop(int sig, int grace_ms, bool as_interrupt, bool as_timeout) {
  if (!running()) return;
  result_.interrupted = result_.interrupted || as_interrupt;
  result_.timed_out = result_.timed_out || as_timeout;
  // What it started, taken before it may exit: after that, nothing links
  // a process it put in a group of its own to it.
  std::vector<TreeMember> started;
  if (sig != SIGKILL) {
    started = descendants(pid_);
    signal_group(sig);
    const double deadline = monotonic_seconds() + grace_ms / 1000.0;
    while (monotonic_seconds() < deadline) {
      pump();
      if (poll_exit()) break;
      usleep(10000);
    }
  }
  if (running()) {
    kill_tree(pid_);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    finish(status);
  }
  // Whatever else is left: in its group (a grandchild that ignored the
  // signal), or started by it in a group of its own.
  if (spec_.new_group) kill(-pid_, SIGKILL);
  kill_survivors(started);
  pump();
}

ChildResult run_child(const ChildSpec& spec, double timeout_s) {
  signals::install();
  ChildProcess child(spec);
  if (!child.start()) return child.result();
  const int seen = signals::interrupt_count();
  while (true) {
    if (signals::interrupt_count() != seen) {
      // Give pytest the SIGINT it would get from a terminal, so it can print
      // its summary; then make sure nothing is left.
      child.stop(SIGINT, 5000, true, false);
      break;
    }
    if (timeout_s > 0 && child.elapsed() > timeout_s) {
      child.stop(SIGTERM, 2000, false, true);
      break;
    }
    // Wake on output or on the exit itself (pidfd). Without a pidfd, output
    // at EOF almost always means the child is in exit(): it closes its files
    // before it becomes a zombie, so re-check after 1 ms (a 20 ms sleep here
    // was paid on most runs, docs/performance.md).
    pollfd p[2] = {{child.output_fd(), POLLIN, 0}, {child.exit_fd(), POLLIN, 0}};
    if (p[0].fd >= 0 || p[1].fd >= 0) {
      poll(p, 2, 100);  // negative fds are ignored
    } else {
      usleep(1000);
    }
    child.pump();
    if (child.poll_exit()) break;
  }
  return child.result();
}

Captured capture(const std::vector<std::string>& argv, const CaptureOptions& opts) {
  Captured c;
  // A pipe of our own: ChildProcess streams to a log, not to a string.
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    c.spawn_error = std::string("pipe: ") + std::strerror(errno);
    return c;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  if (opts.with_stderr) {
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  } else {
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  }
  if (!opts.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, opts.cwd.c_str());
  // Its own group: a timeout kills whatever the tool started too.
  const SpawnAttr attr(true);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ChildSpec env_spec;
  env_spec.env_unset = opts.env_unset;
  std::vector<std::string> env = build_env(env_spec);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, args[0], &actions, attr.get(), args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    c.spawn_error = argv[0] + ": " + std::strerror(rc);
    return c;
  }
  c.started = true;
  char buf[4096];
  const double deadline = monotonic_seconds() + opts.timeout_s;
  pollfd p{fds[0], POLLIN, 0};
  while (true) {
    double left = deadline - monotonic_seconds();
    if (left <= 0) {
      c.timed_out = true;
      kill_tree(pid);
      break;
    }
    int n = poll(&p, 1, static_cast<int>(left * 1000) + 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    ssize_t got = read(fds[0], buf, sizeof buf);
    if (got > 0) {
      c.output.append(buf, static_cast<size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      break;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) c.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    c.term_signal = WTERMSIG(status);
    if (!c.timed_out) signals::note_child_stopped(c.term_signal);
  }
  return c;
}

std::optional<std::string> capture_output(const std::vector<std::string>& argv, const std::string& cwd,
                                          double timeout_s) {
  CaptureOptions opts;
  opts.cwd = cwd;
  opts.timeout_s = timeout_s;
  Captured c = capture(argv, opts);
  if (!c.ok()) return std::nullopt;
  return std::move(c.output);
}

}  // namespace zl
