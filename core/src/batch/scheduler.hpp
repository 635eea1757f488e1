// The work queue: each device runs one op at a time, ops run concurrently
// across devices, a device is checked idle before each op, a hung op is
// killed at its deadline, and SIGINT stops dispatch and the ops in flight.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "zlcore/batch.hpp"

namespace zl::batch {

struct Job {
  size_t op_index = 0;
  std::string warmed_on;  // the device id of its warm-up run, if any
};

// What one op in flight looks like to the progress line.
struct InFlight {
  int device_index;
  std::string op;
  double seconds;
};

class QueueEvents {
 public:
  virtual ~QueueEvents() = default;
  // Picks the run directory and log for a job about to start on `device`.
  virtual OpLaunch prepare(const Job& job, const Device& device) = 0;
  virtual void started(const Job& job, const OpLaunch& launch) = 0;
  // The process running a started job, first when it starts and again when
  // it changes (a rerun in a fresh process): what the op's lease names.
  virtual void running_as(const Job& job, const OpLaunch& launch, pid_t pid) {
    (void)job;
    (void)launch;
    (void)pid;
  }
  virtual void finished(const Job& job, const OpLaunch& launch, const OpOutcome& outcome) = 0;
  // A job that never started: skipped (no idle device in time).
  virtual void never_ran(const Job& job, Status status, const std::string& reason) = 0;
  virtual void note(const std::string& line) = 0;
  // True once no more jobs may start (the batch's file system is full): the
  // queue stops dispatching, lets the jobs in flight finish, and counts the
  // rest as not started.
  virtual bool stop_starting() const { return false; }
  virtual void tick(const std::vector<InFlight>& running) = 0;
};

struct QueueConfig {
  std::vector<Device> devices;
  // Fresh utilization and memory for the idle check (the backend's enumerate).
  std::function<DeviceQuery()> probe;
  IdlePolicy idle;
  double timeout_s = 0;
  double backstop_s = 15;
  double interrupt_grace_s = 10;  // after SIGINT, before SIGKILL
  // A busy reading this soon after the device's own op ended is that op's
  // echo in the utilization counter: asked again every own_echo_poll_s,
  // unlogged (docs/batch.md, "Scheduling").
  double own_echo_s = 1.5;
  double own_echo_poll_s = 0.2;
  // Until then (monotonic s) a busy reading is the batch's own earlier pass
  // (the compile-ahead lanes), handled as an echo of its own op.
  double own_until = -1;
};

struct QueueResult {
  bool interrupted = false;
  size_t not_started = 0;  // left in the queue by an interrupt
};

// Runs `jobs` to the end (or until interrupted); every started job gets
// exactly one finished() call.
QueueResult run_queue(const std::vector<Job>& jobs, const QueueConfig& config, Executor& executor, QueueEvents& events);

// A device as the batch's lines name it: "0 (GPU-8f2c...)".
std::string device_label(const Device& d);

// Why a device does not count as idle; empty when it does.
std::string busy_reason(const Device& now, const IdlePolicy& policy);

}  // namespace zl::batch
