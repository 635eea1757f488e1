// `zlcore run` handing its pytest child to a warm worker (docs/warm-workers.md)
// instead of spawning python: same argv, environment, cwd and log, so the run
// directory, identity and harvest stay in run.cpp whichever process measured.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "zlcore/process.hpp"

namespace zl {

class WorkerSession {
 public:
  WorkerSession() = default;
  ~WorkerSession();
  WorkerSession(const WorkerSession&) = delete;
  WorkerSession& operator=(const WorkerSession&) = delete;

  // Connects and waits for the handshake (the worker may still be importing).
  // False with `error` set: the caller runs the op cold instead.
  bool connect(const std::string& socket_path, double handshake_timeout_s, std::string* error);
  pid_t pid() const { return pid_; }
  int ops_before() const { return ops_before_; }
  bool standby() const { return standby_; }
  // Started for compile-only runs (its LibTuner store in memory): it serves
  // those alone, and no other worker serves them.
  bool compile_only() const { return compile_only_; }
  // After run(): the worker's health check of itself once the op was over
  // (docs/warm-workers.md). Unhealthy: the worker exits, and the batch reruns
  // a failed op in a fresh process. Unknown (no reply) counts as healthy:
  // a worker that died is replaced anyway.
  bool healthy() const { return healthy_; }
  const std::string& health_reason() const { return health_reason_; }
  // The device memory figures of that check (bytes; -1 where the device does
  // not report them): what the worker had allocated before its first op, and
  // what it still had allocated and reserved after this one.
  struct Memory {
    int64_t baseline_allocated = -1, allocated = -1, reserved = -1;
  };
  const Memory& memory_after() const { return memory_; }

  // Runs pytest `args` (what follows `python -m pytest`) in the worker. A
  // timeout or a second interrupt kills the worker's process group; a worker
  // that dies mid-op reports the signal the batch saw it die of.
  ChildResult run(const std::vector<std::string>& args, const std::map<std::string, std::string>& env_set,
                  const std::string& cwd, const std::string& log_path, double timeout_s);

 private:
  // How the worker ended, from <socket>.exit (written by the warm executor):
  // {true, signal} or {false, exit status}; {true, SIGKILL} when none came.
  std::pair<bool, int> how_it_ended();

  int fd_ = -1;
  pid_t pid_ = -1;
  int ops_before_ = 0;
  bool standby_ = false;  // the worker began as a standby
  bool compile_only_ = false;
  bool healthy_ = true;
  std::string health_reason_;
  Memory memory_;
  std::string socket_path_;
  std::string pending_;  // bytes read past the handshake line
};

}  // namespace zl
