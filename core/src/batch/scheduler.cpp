#include "scheduler.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>

#include "zlcore/process.hpp"
#include "zlcore/signals.hpp"

namespace zl::batch {
namespace {

struct Slot {
  Device device;
  std::unique_ptr<Execution> exec;
  Job job;
  OpLaunch launch;
  double next_check = 0;   // busy: not asked again before this
  std::string busy_since;  // the last reason logged, so a busy device is logged once per change
  bool interrupted = false;
  pid_t pid = -1;        // the process the op's lease names
  double freed_at = -1;  // when its last op ended (monotonic s); -1: none yet
};

}  // namespace

std::string device_label(const Device& d) { return std::to_string(d.index) + " (" + d.id + ")"; }

std::string busy_reason(const Device& d, const IdlePolicy& p) {
  std::string why;
  if (d.utilization_percent > p.max_util_percent) {
    why = "utilization " + std::to_string(d.utilization_percent) + "% > " + std::to_string(p.max_util_percent) + "%";
  }
  const int64_t used_mib = d.memory_used_bytes < 0 ? -1 : d.memory_used_bytes / (1024 * 1024);
  if (used_mib > p.max_mem_used_mib) {
    why += (why.empty() ? "" : ", ") + std::string("memory in use ") + std::to_string(used_mib) + " MiB > " +
           std::to_string(p.max_mem_used_mib) + " MiB";
  }
  return why;
}

namespace {

// One run of the queue: its state between rounds, and each step of a round
// as a function of its own.
class Queue {
 public:
  Queue(const std::vector<Job>& jobs, const QueueConfig& cfg, Executor& executor, QueueEvents& events)
      : cfg_(cfg), executor_(executor), events_(events), pending_(jobs.begin(), jobs.end()) {
    for (const Device& d : cfg.devices) slots_.push_back(Slot{d, nullptr, {}, {}, 0, "", false, -1, -1});
  }

  QueueResult run() {
    while (true) {
      const double now = monotonic_seconds();
      handle_interrupt(now);
      if (!pending_.empty() && events_.stop_starting()) drop_pending(0);
      if (!pending_.empty()) dispatch(now);
      if (pending_.empty() && running_count() == 0) break;
      wait_for_activity();
      events_.tick(collect());
    }
    return result_;
  }

 private:
  long running_count() const {
    return std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.exec != nullptr; });
  }

  // Counts what is still queued (plus `extra` already taken from it) as not
  // started, and empties the queue.
  void drop_pending(size_t extra) {
    result_.not_started += extra + pending_.size();
    pending_.clear();
  }

  // Stops dispatch and passes SIGINT on; SIGKILL after the grace period or
  // on a second Ctrl-C.
  void handle_interrupt(double now) {
    const int interrupts = signals::interrupt_count() - interrupts_at_start_;
    if (interrupts > 0 && !stopping_) {
      stopping_ = true;
      result_.interrupted = true;
      drop_pending(0);
      kill_at_ = now + cfg_.interrupt_grace_s;
      events_.note("interrupted: no new ops; stopping " + std::to_string(running_count()) + " in flight");
      for (Slot& s : slots_) {
        if (s.exec) {
          s.interrupted = true;
          s.exec->interrupt();
        }
      }
    }
    if (stopping_ && (interrupts > 1 || now > kill_at_)) {
      for (Slot& s : slots_) {
        if (s.exec) s.exec->kill(false);
      }
    }
  }

  // Every free device takes the next op, if it is idle.
  void dispatch(double now) {
    std::optional<DeviceQuery> fresh;  // one enumeration per round
    bool any_idle_or_running = false;
    for (Slot& s : slots_) {
      if (s.exec) {
        any_idle_or_running = true;
        continue;
      }
      if (pending_.empty()) break;
      // Within the echo window of its own last op the device counts as ours, not as busy.
      if (in_own_echo(s, now)) any_idle_or_running = true;
      if (now < s.next_check) continue;
      if (!is_idle(s, now, fresh)) continue;
      any_idle_or_running = true;
      if (!start_next_on(s)) break;
    }
    give_up_if_all_busy(now, any_idle_or_running);
  }

  // A device's utilization counter is the share of its last sample period
  // (up to a second on common GPUs) in which a kernel ran, so right after one
  // of our ops ends the counter still reads that op's own work. A busy
  // reading that close to our own op is asked again soon and not logged;
  // past the window it is somebody else's, and the policy's recheck cadence
  // applies. Without this the batch waited recheck_s (5 s) after most ops
  // on an otherwise idle device.
  bool in_own_echo(const Slot& s, double now) const {
    return now < cfg_.own_until || (s.freed_at >= 0 && now - s.freed_at < cfg_.own_echo_s);
  }

  // Whether the device of a free slot may take an op now; logs a change
  // between busy and idle.
  bool is_idle(Slot& s, double now, std::optional<DeviceQuery>& fresh) {
    std::string why;
    if (cfg_.idle.check) {
      if (!fresh) fresh = cfg_.probe();
      auto it = std::find_if(fresh->devices.begin(), fresh->devices.end(),
                             [&](const Device& d) { return d.index == s.device.index; });
      // Our own warm worker keeps its framework context and allocator
      // cache on the device between ops (gigabytes on a large GPU): that memory
      // is ours, so only utilization can say somebody else is there.
      IdlePolicy policy = cfg_.idle;
      if (executor_.holds_device(s.device.index)) policy.max_mem_used_mib = INT64_MAX;
      why = it == fresh->devices.end() ? "not reported by the backend now" : busy_reason(*it, policy);
    }
    if (!why.empty() && in_own_echo(s, now)) {
      s.next_check = now + cfg_.own_echo_poll_s;
      return false;
    }
    if (!why.empty()) {
      if (why != s.busy_since) {
        events_.note("device " + device_label(s.device) + " busy: " + why + "; skipped, asking again every " +
                     std::to_string(static_cast<int>(cfg_.idle.recheck_s)) + " s");
      }
      s.busy_since = why;
      s.next_check = now + cfg_.idle.recheck_s;
      return false;
    }
    if (!s.busy_since.empty()) events_.note("device " + device_label(s.device) + " is idle again");
    s.busy_since.clear();
    return true;
  }

  // Starts the next queued op on an idle slot. False when no more may start
  // (preparing it found the disk full).
  bool start_next_on(Slot& s) {
    Job job = pending_.front();
    pending_.pop_front();
    OpLaunch launch = events_.prepare(job, s.device);
    if (events_.stop_starting()) {
      // Preparing it found the disk full: it, and the rest, wait for --resume.
      drop_pending(1);
      return false;
    }
    std::string error;
    std::unique_ptr<Execution> exec = executor_.start(launch, &error);
    if (!exec) {
      OpOutcome failed;
      failed.status = Status::failed;
      failed.reason = "could not start: " + error;
      events_.finished(job, launch, failed);
      return true;
    }
    s.exec = std::move(exec);
    s.job = job;
    s.launch = launch;
    s.interrupted = false;
    events_.started(job, launch);
    s.pid = s.exec->pid();
    if (s.pid > 0) events_.running_as(job, launch, s.pid);
    return true;
  }

  // Nothing runs and every device stayed busy: give up after a while, so
  // a host someone else occupies fails the batch instead of hanging it.
  void give_up_if_all_busy(double now, bool any_idle_or_running) {
    if (any_idle_or_running) {
      all_busy_since_ = -1;
    } else if (all_busy_since_ < 0) {
      all_busy_since_ = now;
    } else if (now - all_busy_since_ > cfg_.idle.give_up_s) {
      const std::string reason = "no idle device for " + std::to_string(static_cast<int>(cfg_.idle.give_up_s)) + " s";
      events_.note(reason + "; skipping the " + std::to_string(pending_.size()) + " ops left");
      for (const Job& job : pending_) events_.never_ran(job, Status::skipped, reason);
      pending_.clear();
    }
  }

  // Waits for output or a deadline.
  void wait_for_activity() {
    std::vector<pollfd> fds;
    bool blind = false;  // an op whose end no fd will announce
    for (Slot& s : slots_) {
      if (!s.exec) continue;
      if (s.exec->output_fd() >= 0) fds.push_back(pollfd{s.exec->output_fd(), POLLIN, 0});
      if (s.exec->exit_fd() >= 0) {
        fds.push_back(pollfd{s.exec->exit_fd(), POLLIN, 0});
      } else if (s.exec->output_fd() < 0) {
        blind = true;
      }
    }
    if (fds.empty()) {
      // With nothing running (devices busy) 20 ms is plenty.
      usleep(running_count() > 0 ? 1000 : 20000);
    } else {
      // An op whose output is at EOF but that has no exit fd is exiting (see
      // run_child): re-check it in 1 ms. EINTR on a signal is what we want.
      poll(fds.data(), fds.size(), blind ? 1 : 100);
    }
  }

  // Collects what ended, kills what ran past its timeout, and returns what
  // is still in flight.
  std::vector<InFlight> collect() {
    std::vector<InFlight> running;
    for (Slot& s : slots_) {
      if (!s.exec) continue;
      s.exec->pump();
      if (cfg_.timeout_s > 0 && s.exec->elapsed() > cfg_.timeout_s + cfg_.backstop_s) {
        events_.note("op " + s.launch.op.name + " on device " + device_label(s.device) +
                     " ran past its timeout; killing its process group");
        s.exec->kill(true);
      }
      if (s.exec->poll_done()) {
        OpOutcome outcome = s.exec->outcome(s.interrupted);
        s.exec.reset();
        s.freed_at = monotonic_seconds();
        events_.finished(s.job, s.launch, outcome);
        continue;
      }
      if (const pid_t pid = s.exec->pid(); pid > 0 && pid != s.pid) {
        s.pid = pid;
        events_.running_as(s.job, s.launch, pid);
      }
      running.push_back(InFlight{s.device.index, s.launch.op.name, s.exec->elapsed()});
    }
    return running;
  }

  const QueueConfig& cfg_;
  Executor& executor_;
  QueueEvents& events_;
  std::deque<Job> pending_;
  std::vector<Slot> slots_;
  QueueResult result_;
  const int interrupts_at_start_ = signals::interrupt_count();
  bool stopping_ = false;
  double kill_at_ = 0;
  double all_busy_since_ = -1;  // when every device was last seen busy with nothing running
};

}  // namespace

QueueResult run_queue(const std::vector<Job>& jobs, const QueueConfig& cfg, Executor& executor, QueueEvents& events) {
  return Queue(jobs, cfg, executor, events).run();
}

}  // namespace zl::batch
