// run_queue with a fake executor: every job ends exactly once, a device runs
// one op at a time, a failed start is a finished failure, a busy device gets
// no op, and a full disk stops dispatch (docs/batch.md).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "batch/scheduler.hpp"

using namespace zl;
using namespace zl::batch;

namespace {

struct Shared {
  std::map<int, int> running_on;  // device index -> ops in flight there
  int max_on_one_device = 0;
  int max_total = 0;
  int total = 0;
};

class FakeExecution : public Execution {
 public:
  FakeExecution(Shared* s, int device, int steps, Status status) : s_(s), device_(device), steps_(steps) {
    out_.status = status;
    out_.exit_code = status == Status::passed ? 0 : 1;
    int& n = ++s_->running_on[device_];
    s_->max_on_one_device = std::max(s_->max_on_one_device, n);
    s_->max_total = std::max(s_->max_total, ++s_->total);
  }
  int output_fd() const override { return -1; }
  void pump() override { --steps_; }
  bool poll_done() override {
    if (steps_ > 0 || done_) return done_;
    done_ = true;
    --s_->running_on[device_];
    --s_->total;
    return true;
  }
  double elapsed() const override { return 0; }
  void interrupt() override {}
  void kill(bool) override {}
  OpOutcome outcome(bool) override { return out_; }

 private:
  Shared* s_;
  int device_;
  int steps_;
  bool done_ = false;
  OpOutcome out_;
};

class FakeExecutor : public Executor {
 public:
  explicit FakeExecutor(Shared* s) : s_(s) {}
  const char* kind() const override { return "fake"; }
  std::unique_ptr<Execution> start(const OpLaunch& launch, std::string* error) override {
    if (launch.op.name.rfind("nostart", 0) == 0) {
      *error = "no such binary";
      return nullptr;
    }
    const Status st = launch.op.name.rfind("bad", 0) == 0 ? Status::failed : Status::passed;
    return std::make_unique<FakeExecution>(s_, launch.device.index, 3 + static_cast<int>(launch.op.name.size() % 4),
                                           st);
  }

 private:
  Shared* s_;
};

class Recorder : public QueueEvents {
 public:
  explicit Recorder(std::vector<std::string> names) : names_(std::move(names)) {}
  OpLaunch prepare(const Job& job, const Device& device) override {
    OpLaunch l;
    l.op.name = names_.at(job.op_index);
    l.device = device;
    ++prepared;
    if (full_after >= 0 && prepared > full_after) full = true;
    return l;
  }
  void started(const Job& job, const OpLaunch& launch) override {
    started_ops.push_back(names_.at(job.op_index));
    devices_used.insert(launch.device.index);
  }
  void finished(const Job& job, const OpLaunch&, const OpOutcome& o) override {
    finished_ops[names_.at(job.op_index)].push_back(o);
  }
  void never_ran(const Job& job, Status status, const std::string& reason) override {
    never[names_.at(job.op_index)] = {status, reason};
  }
  void note(const std::string& line) override { notes.push_back(line); }
  bool stop_starting() const override { return full; }
  void tick(const std::vector<InFlight>&) override {}

  int prepared = 0;
  int full_after = -1;  // >= 0: the disk fills after this many prepares
  bool full = false;
  std::vector<std::string> started_ops;
  std::set<int> devices_used;
  std::map<std::string, std::vector<OpOutcome>> finished_ops;
  std::map<std::string, std::pair<Status, std::string>> never;
  std::vector<std::string> notes;

 private:
  std::vector<std::string> names_;
};

std::vector<Job> jobs_for(size_t n) {
  std::vector<Job> jobs(n);
  for (size_t i = 0; i < n; ++i) jobs[i].op_index = i;
  return jobs;
}

QueueConfig two_devices() {
  QueueConfig c;
  for (int i = 0; i < 2; ++i) {
    Device d;
    d.index = i;
    d.id = "GPU-" + std::to_string(i);
    c.devices.push_back(d);
  }
  c.idle.check = false;
  return c;
}

}  // namespace

TEST(RunQueue, EveryJobFinishesOnceAndADeviceRunsOneOpAtATime) {
  const std::vector<std::string> names{"abs", "add", "bad_mm", "nostart_x", "exp", "bmm", "sum"};
  Shared shared;
  FakeExecutor ex(&shared);
  Recorder ev(names);
  const QueueResult r = run_queue(jobs_for(names.size()), two_devices(), ex, ev);
  EXPECT_FALSE(r.interrupted);
  EXPECT_EQ(r.not_started, 0u);
  ASSERT_EQ(ev.finished_ops.size(), names.size());
  for (const std::string& n : names) {
    SCOPED_TRACE(n);
    ASSERT_EQ(ev.finished_ops[n].size(), 1u);
  }
  EXPECT_EQ(ev.finished_ops["abs"][0].status, Status::passed);
  EXPECT_EQ(ev.finished_ops["bad_mm"][0].status, Status::failed);
  // A job whose process never started is finished as failed, never started().
  EXPECT_EQ(ev.finished_ops["nostart_x"][0].status, Status::failed);
  EXPECT_EQ(ev.finished_ops["nostart_x"][0].reason, "could not start: no such binary");
  EXPECT_EQ(ev.started_ops.size(), names.size() - 1);
  EXPECT_TRUE(ev.never.empty());
  EXPECT_EQ(shared.max_on_one_device, 1);
  EXPECT_EQ(shared.max_total, 2);  // both devices were used at once
  EXPECT_EQ(ev.devices_used, (std::set<int>{0, 1}));
  EXPECT_EQ(shared.total, 0);
}

TEST(RunQueue, BusyDeviceGetsNoOpAndAllBusySkipsTheRest) {
  const std::vector<std::string> names{"abs", "add", "exp"};
  Shared shared;
  FakeExecutor ex(&shared);
  {
    // Device 1 busy (another user's memory): every op runs on device 0.
    Recorder ev(names);
    QueueConfig c = two_devices();
    c.idle.check = true;
    c.idle.recheck_s = 0.01;
    c.probe = [&] {
      DeviceQuery q;
      q.devices = c.devices;
      q.devices[0].utilization_percent = 0;
      q.devices[0].memory_used_bytes = 0;
      q.devices[1].utilization_percent = 0;
      q.devices[1].memory_used_bytes = int64_t{40} * 1024 * 1024 * 1024;
      return q;
    };
    run_queue(jobs_for(names.size()), c, ex, ev);
    EXPECT_EQ(ev.devices_used, (std::set<int>{0}));
    EXPECT_EQ(ev.finished_ops.size(), names.size());
    bool noted = false;
    for (const std::string& n : ev.notes) noted |= n.find("device 1 (GPU-1) busy: memory in use") == 0;
    EXPECT_TRUE(noted);
  }
  {
    // Every device busy: nothing starts, and after give_up_s every op is
    // reported skipped, none finished.
    Recorder ev(names);
    QueueConfig c = two_devices();
    c.idle.check = true;
    c.idle.recheck_s = 0.01;
    c.idle.give_up_s = 0.05;
    c.probe = [&] {
      DeviceQuery q;
      q.devices = c.devices;
      for (Device& d : q.devices) d.utilization_percent = 100;
      return q;
    };
    run_queue(jobs_for(names.size()), c, ex, ev);
    EXPECT_TRUE(ev.started_ops.empty());
    EXPECT_TRUE(ev.finished_ops.empty());
    ASSERT_EQ(ev.never.size(), names.size());
    EXPECT_EQ(ev.never["add"].first, Status::skipped);
  }
}

TEST(RunQueue, FullDiskStopsDispatchAndCountsTheRestNotStarted) {
  const std::vector<std::string> names{"a1", "a2", "a3", "a4", "a5", "a6"};
  Shared shared;
  FakeExecutor ex(&shared);
  Recorder ev(names);
  ev.full_after = 2;  // the third prepare finds the disk full
  const QueueResult r = run_queue(jobs_for(names.size()), two_devices(), ex, ev);
  EXPECT_EQ(ev.started_ops.size(), 2u);
  EXPECT_EQ(ev.finished_ops.size(), 2u);  // the two in flight still finish
  EXPECT_EQ(r.not_started, 4u);
  EXPECT_FALSE(r.interrupted);
}

TEST(RunQueue, OwnOpsEchoInTheUtilizationCounterIsNotABusyDevice) {
  // The counter reads busy for a few probes after each op ends (the op's own
  // work, still inside the sample period), then idle: the next op starts
  // within the echo window and no "busy" line is logged, even with the
  // policy's recheck at 60 s.
  const std::vector<std::string> names{"abs", "add", "exp"};
  Shared shared;
  FakeExecutor ex(&shared);
  Recorder ev(names);
  QueueConfig c = two_devices();
  c.devices.pop_back();
  c.idle.check = true;
  c.idle.recheck_s = 60;
  c.idle.give_up_s = 120;
  c.own_echo_s = 60;  // wide: a loaded machine's stall never ends the window here
  c.own_echo_poll_s = 0.01;
  int echo_left = 0;
  size_t finished_seen = 0;
  c.probe = [&] {
    size_t finished = 0;
    for (const auto& [name, outcomes] : ev.finished_ops) finished += outcomes.size();
    if (finished != finished_seen) {
      finished_seen = finished;
      echo_left = 2;
    }
    DeviceQuery q;
    q.devices = c.devices;
    q.devices[0].utilization_percent = echo_left > 0 ? 95 : 0;
    if (echo_left > 0) --echo_left;
    return q;
  };
  run_queue(jobs_for(names.size()), c, ex, ev);
  EXPECT_EQ(ev.finished_ops.size(), names.size());
  for (const std::string& n : ev.notes) EXPECT_EQ(n.find("busy"), std::string::npos) << n;
}

TEST(RunQueue, BusyPastTheEchoWindowIsSomebodyElsesAndLogged) {
  // The counter stays busy after the first op: past the echo window the
  // device is busy for the policy, logged once, and the rest are skipped.
  const std::vector<std::string> names{"abs", "add"};
  Shared shared;
  FakeExecutor ex(&shared);
  Recorder ev(names);
  QueueConfig c = two_devices();
  c.devices.pop_back();
  c.idle.check = true;
  c.idle.recheck_s = 0.01;
  c.idle.give_up_s = 0.5;
  c.own_echo_s = 0.05;
  c.own_echo_poll_s = 0.01;
  c.probe = [&] {
    DeviceQuery q;
    q.devices = c.devices;
    q.devices[0].utilization_percent = ev.finished_ops.empty() ? 0 : 100;
    return q;
  };
  run_queue(jobs_for(names.size()), c, ex, ev);
  EXPECT_EQ(ev.finished_ops.size(), 1u);
  EXPECT_EQ(ev.never["add"].first, Status::skipped);
  int busy_lines = 0;
  for (const std::string& n : ev.notes) busy_lines += n.find("device 0 (GPU-0) busy: utilization") == 0;
  EXPECT_EQ(busy_lines, 1) << ::testing::PrintToString(ev.notes);
}
