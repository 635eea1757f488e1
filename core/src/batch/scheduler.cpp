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

// A device's utilization counter is the share of its last sample period (up
// to a second on common GPUs) in which a kernel ran, so right after one of our
// ops ends the counter still reads that op's own work. A busy reading that
// close to our own op is asked again soon and not logged; past the window it
// is somebody else's, and the policy's recheck cadence applies. Without this
// the batch waited recheck_s (5 s) after most ops on an otherwise idle device.
constexpr double kOwnEchoS = 1.5;
constexpr double kOwnEchoPollS = 0.2;

std::string device_label(const Device& d) { return std::to_string(d.index) + " (" + d.id + ")"; }

}  // namespace

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

QueueResult run_queue(const std::vector<Job>& jobs, const QueueConfig& cfg, Executor& executor, QueueEvents& events) {
  QueueResult result;
  std::deque<Job> pending(jobs.begin(), jobs.end());
  std::vector<Slot> slots;
  for (const Device& d : cfg.devices) slots.push_back(Slot{d, nullptr, {}, {}, 0, "", false, -1});

  const int interrupts_at_start = signals::interrupt_count();
  bool stopping = false;
  double kill_at = 0;
  double all_busy_since = -1;  // when every device was last seen busy with nothing running

  auto running_count = [&] {
    return std::count_if(slots.begin(), slots.end(), [](const Slot& s) { return s.exec != nullptr; });
  };

  while (true) {
    const double now = monotonic_seconds();
    const int interrupts = signals::interrupt_count() - interrupts_at_start;

    // ---- interrupt: stop dispatch, pass SIGINT on, SIGKILL after the grace
    // period or on a second Ctrl-C.
    if (interrupts > 0 && !stopping) {
      stopping = true;
      result.interrupted = true;
      result.not_started += pending.size();
      pending.clear();
      kill_at = now + cfg.interrupt_grace_s;
      events.note("interrupted: no new ops; stopping " + std::to_string(running_count()) + " in flight");
      for (Slot& s : slots) {
        if (s.exec) {
          s.interrupted = true;
          s.exec->interrupt();
        }
      }
    }
    if (stopping && (interrupts > 1 || now > kill_at)) {
      for (Slot& s : slots) {
        if (s.exec) s.exec->kill(false);
      }
    }

    if (!pending.empty() && events.stop_starting()) {
      result.not_started += pending.size();
      pending.clear();
    }

    // ---- dispatch: every free device takes the next op, if it is idle.
    if (!pending.empty()) {
      std::optional<DeviceQuery> fresh;  // one enumeration per round
      bool any_idle_or_running = false;
      for (Slot& s : slots) {
        if (s.exec) {
          any_idle_or_running = true;
          continue;
        }
        if (pending.empty()) break;
        // Within the echo window the device counts as ours, not as busy.
        const bool echo = s.freed_at >= 0 && now - s.freed_at < kOwnEchoS;
        if (echo) any_idle_or_running = true;
        if (now < s.next_check) continue;
        std::string why;
        if (cfg.idle.check) {
          if (!fresh) fresh = cfg.probe();
          auto it = std::find_if(fresh->devices.begin(), fresh->devices.end(),
                                 [&](const Device& d) { return d.index == s.device.index; });
          // Our own warm worker keeps its framework context and allocator
          // cache on the device between ops (gigabytes on a large GPU): that memory
          // is ours, so only utilization can say somebody else is there.
          IdlePolicy policy = cfg.idle;
          if (executor.holds_device(s.device.index)) policy.max_mem_used_mib = INT64_MAX;
          why = it == fresh->devices.end() ? "not reported by the backend now" : busy_reason(*it, policy);
        }
        if (!why.empty() && echo) {
          s.next_check = now + kOwnEchoPollS;
          continue;
        }
        if (!why.empty()) {
          if (why != s.busy_since) {
            events.note("device " + device_label(s.device) + " busy: " + why + "; skipped, asking again every " +
                        std::to_string(static_cast<int>(cfg.idle.recheck_s)) + " s");
          }
          s.busy_since = why;
          s.next_check = now + cfg.idle.recheck_s;
          continue;
        }
        if (!s.busy_since.empty()) events.note("device " + device_label(s.device) + " is idle again");
        s.busy_since.clear();
        any_idle_or_running = true;
        Job job = pending.front();
        pending.pop_front();
        OpLaunch launch = events.prepare(job, s.device);
        if (events.stop_starting()) {
          // Preparing it found the disk full: it, and the rest, wait for --resume.
          result.not_started += 1 + pending.size();
          pending.clear();
          break;
        }
        std::string error;
        std::unique_ptr<Execution> exec = executor.start(launch, &error);
        if (!exec) {
          OpOutcome failed;
          failed.status = Status::failed;
          failed.reason = "could not start: " + error;
          events.finished(job, launch, failed);
          continue;
        }
        s.exec = std::move(exec);
        s.job = job;
        s.launch = launch;
        s.interrupted = false;
        events.started(job, launch);
        s.pid = s.exec->pid();
        if (s.pid > 0) events.running_as(job, launch, s.pid);
      }
      // Nothing runs and every device stayed busy: give up after a while, so
      // a host someone else occupies fails the batch instead of hanging it.
      if (any_idle_or_running) {
        all_busy_since = -1;
      } else if (all_busy_since < 0) {
        all_busy_since = now;
      } else if (now - all_busy_since > cfg.idle.give_up_s) {
        const std::string reason = "no idle device for " + std::to_string(static_cast<int>(cfg.idle.give_up_s)) + " s";
        events.note(reason + "; skipping the " + std::to_string(pending.size()) + " ops left");
        for (const Job& job : pending) events.never_ran(job, Status::skipped, reason);
        pending.clear();
      }
    }

    if (pending.empty() && running_count() == 0) break;

    // ---- wait for output or a deadline, then collect what ended.
    std::vector<pollfd> fds;
    bool blind = false;  // an op whose end no fd will announce
    for (Slot& s : slots) {
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
    std::vector<InFlight> running;
    for (Slot& s : slots) {
      if (!s.exec) continue;
      s.exec->pump();
      if (cfg.timeout_s > 0 && s.exec->elapsed() > cfg.timeout_s + cfg.backstop_s) {
        events.note("op " + s.launch.op.name + " on device " + device_label(s.device) +
                    " ran past its timeout; killing its process group");
        s.exec->kill(true);
      }
      if (s.exec->poll_done()) {
        OpOutcome outcome = s.exec->outcome(s.interrupted);
        s.exec.reset();
        s.freed_at = monotonic_seconds();
        events.finished(s.job, s.launch, outcome);
        continue;
      }
      if (const pid_t pid = s.exec->pid(); pid > 0 && pid != s.pid) {
        s.pid = pid;
        events.running_as(s.job, s.launch, pid);
      }
      running.push_back(InFlight{s.device.index, s.launch.op.name, s.exec->elapsed()});
    }
    events.tick(running);
  }
  return result;
}

}  // namespace zl::batch
