// The cold executor: each op is a fresh `zlcore run` child (our own binary),
// started in a process group of its own with --same-process-group, so one
// signal to that group reaches run and its pytest alike, and a crash costs
// that op alone.
#include <algorithm>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>

#include "../util/clock.hpp"
#include "outcome.hpp"
#include "zlcore/process.hpp"

namespace fs = std::filesystem;

namespace zl::batch {
namespace {

// The line a failing `zlcore run` leaves last on stderr says more than its
// exit code ("PREFLIGHT_FAILED check=device ...", "zlcore: ...").
std::string reason_from_log(const std::string& log_path) {
  std::ifstream in(log_path);
  std::string line, found;
  while (std::getline(in, line)) {
    if (line.rfind("PREFLIGHT_FAILED", 0) == 0 || line.rfind("zlcore: ", 0) == 0) found = line;
  }
  return found;
}

class ColdExecution : public Execution {
 public:
  ColdExecution(ChildSpec spec, std::string run_dir, std::string log_path)
      : child_(std::move(spec)), run_dir_(std::move(run_dir)), log_path_(std::move(log_path)) {}

  bool start(std::string* error) {
    facts_.started_at = utc_now_iso();
    if (!child_.start()) {
      *error = child_.result().spawn_error;
      return false;
    }
    facts_.started = true;
    return true;
  }
  int output_fd() const override { return child_.output_fd(); }
  int exit_fd() const override { return child_.exit_fd(); }
  void pump() override { child_.pump(); }
  bool poll_done() override {
    if (child_.poll_exit()) return true;
    // Reaped, but something that escaped its group still holds the output
    // pipe: the op is over all the same.
    if (child_.running()) return false;
    if (reaped_seen_at_ == 0) reaped_seen_at_ = monotonic_seconds();
    return monotonic_seconds() - reaped_seen_at_ > 5;
  }
  double elapsed() const override { return child_.elapsed(); }
  pid_t pid() const override { return child_.running() ? child_.pid() : -1; }
  void interrupt() override { child_.signal_group(SIGINT); }
  void kill(bool as_timeout) override {
    facts_.killed_for_timeout = facts_.killed_for_timeout || as_timeout;
    // Grace 0: SIGKILL to the group, reap, and SIGKILL whatever is left in it.
    child_.stop(SIGKILL, 0, false, as_timeout);
  }
  OpOutcome outcome(bool interrupted) override {
    const ChildResult& r = child_.result();
    facts_.exit_code = r.exit_code;
    facts_.term_signal = r.term_signal;
    facts_.seconds = r.seconds;
    facts_.interrupted = interrupted;
    // Read before the outcome is made, not patched in after: the outcome
    // tells a full disk by its reason ("zlcore: cannot write ...: No space
    // left on device" is often only in the log).
    if (r.exit_code != 0 || r.term_signal != 0) facts_.log_reason = reason_from_log(log_path_);
    return make_outcome(facts_, run_dir_);
  }

 private:
  ChildProcess child_;
  std::string run_dir_;
  std::string log_path_;
  ExitFacts facts_;
  double reaped_seen_at_ = 0;
};

class ColdExecutor : public Executor {
 public:
  explicit ColdExecutor(ColdExecutorConfig c) : c_(std::move(c)) {}
  const char* kind() const override { return "cold"; }

  std::unique_ptr<Execution> start(const OpLaunch& l, std::string* error) override {
    ChildSpec spec;
    spec.argv = argv(l);
    spec.log_path = l.log_path;
    spec.env_set = c_.env_set;
    spec.new_group = true;
    auto ex = std::make_unique<ColdExecution>(std::move(spec), l.run_dir, l.log_path);
    if (!ex->start(error)) return nullptr;
    return ex;
  }

 private:
  std::vector<std::string> argv(const OpLaunch& l) const {
    std::vector<std::string> a = {c_.zlcore_exe, "--backend-dir", c_.backend_dir, "run",
                                  "--backend",   c_.backend,      "--device",     std::to_string(l.device.index)};
    if (!l.op.test_node.empty()) {
      a.insert(a.end(), {"--test-node", l.op.test_node});
    } else {
      a.insert(a.end(), {"--op", l.op.op});
      if (!l.op.op_file.empty()) a.insert(a.end(), {"--op-file", l.op.op_file});
    }
    // --quiet: pytest's output already lands in the run dir's pytest.log; the
    // op's batch log keeps what run itself says (errors, PREFLIGHT_FAILED).
    a.insert(a.end(), {"--out", l.run_dir, "--batch-dir", c_.batch_dir, "--same-process-group", "--quiet"});
    const bool own_shapes = !l.op.shape_file.empty();
    for (const auto& [flag, value] : c_.run.flags) {
      // An op's own shape file replaces the batch-wide shape choice.
      if (own_shapes && (flag == "--shape-mode" || flag == "--shape-file")) continue;
      a.push_back(flag);
      if (!value.empty()) a.push_back(value);  // empty: a switch (--force-replay)
    }
    const std::vector<std::string>& dtypes = l.op.dtypes.empty() ? c_.run.dtypes : l.op.dtypes;
    if (!dtypes.empty()) {
      std::string joined;
      for (const std::string& d : dtypes) joined += (joined.empty() ? "" : ",") + d;
      a.insert(a.end(), {"--dtypes", joined});
    }
    if (!l.op.shape_file.empty()) a.insert(a.end(), {"--shape-mode", "file", "--shape-file", l.op.shape_file});
    if (!c_.run.replay_from.empty()) {
      // A batch directory as the replay source means "this op's run in it".
      a.insert(a.end(), {"--replay-from", replay_source_for(c_.run.replay_from, l.op.name)});
    }
    if (l.timeout_s > 0) {
      a.insert(a.end(), {"--timeout", std::to_string(std::max(1L, static_cast<long>(std::ceil(l.timeout_s))))});
    }
    if (!l.warmed_on.empty()) a.insert(a.end(), {"--warmed-on", l.warmed_on});
    a.insert(a.end(), l.run_args.begin(), l.run_args.end());
    return a;
  }

  ColdExecutorConfig c_;
};

}  // namespace

std::unique_ptr<Executor> make_cold_executor(ColdExecutorConfig config) {
  return std::make_unique<ColdExecutor>(std::move(config));
}

}  // namespace zl::batch
