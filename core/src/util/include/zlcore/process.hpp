// Child processes without a shell: an argv, an environment, its own process
// group (so a timeout or Ctrl-C reaches everything it started), and its
// output streamed live to a log file and, optionally, to our stdout.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace zl {

struct ChildSpec {
  std::vector<std::string> argv;               // argv[0] is looked up on PATH unless it has a '/'
  std::map<std::string, std::string> env_set;  // added to / replacing our environment
  std::vector<std::string> env_unset;          // removed from it
  std::string cwd;                             // empty: ours
  std::string log_path;                        // stdout+stderr appended here; empty: none
  bool echo = false;                           // also copy the output to our stdout
  std::string echo_prefix;                     // put before each echoed line ("[gpu1] ")
  // Echo each line with its control characters escaped (the log keeps the
  // bytes): a test id can carry a terminal escape sequence.
  bool echo_printable = false;
  // true: the child leads a new process group (signal_group reaches its whole
  // tree). false: it stays in ours, for a parent that itself runs in a group
  // its own parent signals (zlcore run under zlcore batch).
  bool new_group = true;
};

struct ChildResult {
  bool started = false;
  std::string spawn_error;
  int exit_code = -1;   // when it exited
  int term_signal = 0;  // when a signal ended it
  bool timed_out = false;
  bool interrupted = false;
  double seconds = 0;
};

// One running child. Not copyable; the destructor kills the group if it is
// still running, so no child outlives the object that owns it.
class ChildProcess {
 public:
  explicit ChildProcess(ChildSpec spec);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // False (with result().spawn_error) when it could not start.
  bool start();
  pid_t pid() const { return pid_; }
  // The read end of its output pipe, for poll(); -1 once drained.
  int output_fd() const { return out_fd_; }
  // Readable (POLLIN) once the child has exited, for poll(); -1 when the
  // kernel has no pidfd (before Linux 5.3) or after it was reaped.
  int exit_fd() const { return reaped_ ? -1 : pid_fd_; }
  // Reads what is available without blocking and writes it out.
  void pump();
  // Reaps without blocking; true once it has exited (output fully drained).
  bool poll_exit();
  // Signals the whole process group.
  void signal_group(int sig);
  // `sig` to the group, then SIGKILL after grace_ms (at once for SIGKILL) to
  // the child's whole tree, what it started in groups of its own included
  // (util/process_tree.hpp).
  void stop(int sig, int grace_ms, bool as_interrupt, bool as_timeout);
  bool running() const { return pid_ > 0 && !reaped_; }
  double elapsed() const;
  const ChildResult& result() const { return result_; }

 private:
  void write_out(const char* data, size_t n);
  void finish(int status);

  ChildSpec spec_;
  ChildResult result_;
  pid_t pid_ = -1;
  int out_fd_ = -1;
  int pid_fd_ = -1;
  int log_fd_ = -1;
  bool reaped_ = false;
  double started_at_ = 0;
  std::string partial_;  // echo: the last line not yet ended
};

// Runs one child to the end: streams its output, kills the group after
// timeout_s (0: none), and stops it on SIGINT/SIGTERM to us (see signals.hpp).
ChildResult run_child(const ChildSpec& spec, double timeout_s = 0);

// A short command run to the end with its output kept in memory (no log, no
// echo): the one spawn-and-capture of the core. Like every child of zlcore
// it starts with default signal dispositions (spawn_attr.hpp), in a process
// group of its own that a timeout kills whole.
struct CaptureOptions {
  std::string cwd;  // empty: ours
  double timeout_s = 10;
  std::vector<std::string> env_unset;  // removed from our environment
  bool with_stderr = false;            // stderr into the output too (else /dev/null)
};
struct Captured {
  bool started = false;
  std::string spawn_error;  // why it did not start
  int exit_code = -1;       // -1: killed by a signal (or the timeout)
  int term_signal = 0;      // the signal it died of, 0 if it exited
  bool timed_out = false;
  std::string output;
  bool ok() const { return started && !timed_out && exit_code == 0; }
};
Captured capture(const std::vector<std::string>& argv, const CaptureOptions& opts);

// capture()'s stdout when the command exited 0 in time; nullopt otherwise.
std::optional<std::string> capture_output(const std::vector<std::string>& argv, const std::string& cwd = "",
                                          double timeout_s = 10);

double monotonic_seconds();

}  // namespace zl
