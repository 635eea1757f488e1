// The batch's passes: the optional warm-up over a few devices, then the
// timed pass over all of them, each through the work queue; then the
// summary, batch_identity.json's last word and the exit code.
#include "batch_run.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "../util/clock.hpp"
#include "../util/printable.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/process.hpp"

namespace fs = std::filesystem;

namespace zl::batch {

BatchRun::BatchRun(const BatchOptions& o, const Backend& b, std::vector<Device> devices)
    : o_(o), backend_(b), devices_(std::move(devices)), dir_(fs::absolute(o.out_dir)) {}

int BatchRun::execute() {
  prepare_directory();
  decide_work();
  if (!settle_orphans()) {
    say("interrupted while waiting for an earlier batch's run; nothing started");
    write_identity("interrupted");
    return kExitInterrupted;
  }
  write_identity("running");
  const size_t done_before = o_.ops.size() - todo_.size();
  progress_ = std::make_unique<Progress>(isatty(1) == 1, o_.ops.size(), done_before);
  say("batch " + dir_.string() + ": " + std::to_string(o_.ops.size()) + " ops, " + std::to_string(todo_.size()) +
      " to run" + (done_before ? " (" + std::to_string(done_before) + " settled earlier: passed or unsupported)" : "") +
      ", devices " + devices_text() + ", backend " + backend_.name());
  start_executor();
  const bool interrupted = run_passes();
  progress_->clear();
  return finish(interrupted);
}

// How each op's `zlcore run` is started.
ColdExecutorConfig BatchRun::cold_config() const {
  ColdExecutorConfig ec;
  ec.zlcore_exe = fs::read_symlink("/proc/self/exe").string();
  ec.backend_dir = fs::absolute(o_.backend_dir).string();
  ec.backend = backend_.name();
  ec.batch_dir = dir_.string();
  ec.run = o_.run;
  return ec;
}

// A warm worker per device, started in the suite's root.
WarmExecutorConfig BatchRun::warm_config(const ColdExecutorConfig& ec) const {
  WarmExecutorConfig wc;
  wc.run = ec;
  for (const auto& [flag, value] : o_.run.flags) {
    if (flag == "--python") wc.python = value;
    if (flag == "--flaggems-dir") wc.suite_root = fs::absolute(value).string();
  }
  const char* env_root = std::getenv("FLAGGEMS_DIR");
  if (wc.suite_root.empty() && env_root != nullptr && *env_root != '\0')
    wc.suite_root = fs::absolute(env_root).string();
  wc.visibility_env = backend_.visibility_env();
  wc.framework_vendor = backend_.framework_vendor();
  return wc;
}

// A fresh process per op (--cold), or a warm worker per device.
void BatchRun::start_executor() {
  const ColdExecutorConfig ec = cold_config();
  if (o_.cold) {
    executor_ = make_cold_executor(ec);
    return;
  }
  WarmExecutorConfig wc = warm_config(ec);
  wc.standby = o_.standby;
  executor_ = make_warm_executor(wc);
}

// The compile-ahead pass, the warm-up pass (--parallel-warmup-gpus), then
// the timed pass over the ops whose warm-up ran through. True when a Ctrl-C
// ended any of them.
bool BatchRun::run_passes() {
  QueueConfig qc;
  qc.probe = [this] { return backend_.enumerate(); };
  qc.idle = o_.idle;
  qc.timeout_s = o_.timeout_s;
  qc.backstop_s = o_.backstop_s;

  bool interrupted = false;
  std::vector<Job> jobs;
  for (size_t i : todo_) jobs.push_back(Job{i, ""});
  interrupted = compile_ahead(jobs, qc);
  // The lanes' last kernels still show in the first utilization readings.
  if (compile_.ops > 0) qc.own_until = monotonic_seconds() + qc.own_echo_s;
  if (!interrupted && o_.warmup_devices > 0 && !jobs.empty()) {
    const size_t n = std::min<size_t>(static_cast<size_t>(o_.warmup_devices), devices_.size());
    qc.devices.assign(devices_.begin(), devices_.begin() + static_cast<long>(n));
    say("warm-up pass: " + std::to_string(jobs.size()) + " ops over " + std::to_string(n) + " device(s)");
    warmup_ = true;
    progress_->set_phase("warm-up", jobs.size());
    QueueResult r = run_queue(jobs, qc, *executor_, *this);
    interrupted = r.interrupted;
    warmup_ = false;
    // Only ops whose warm-up ran through (passed, or failed on some shape)
    // go on; a crash, hang or preflight failure already has its row.
    std::vector<Job> timed;
    for (const Job& j : jobs) {
      auto it = warmed_on_.find(j.op_index);
      if (it != warmed_on_.end()) timed.push_back(Job{j.op_index, it->second});
    }
    jobs = timed;
  }
  if (!interrupted && !jobs.empty() && !disk_full_) {
    qc.devices = devices_;
    progress_->set_phase("timed", jobs.size());
    QueueResult r = run_queue(jobs, qc, *executor_, *this);
    interrupted = r.interrupted;
    if (r.not_started) {
      say(std::to_string(r.not_started) + " ops not started; " +
          (disk_full_ ? "free space on the file system of --out, then --resume runs them" : "--resume runs them"));
    }
  }
  return interrupted;
}

// The summary table, where the time went, the identity's final status and
// the exit code.
int BatchRun::finish(bool interrupted) {
  std::vector<OpRow> final_rows = latest_rows();
  std::vector<std::string> not_run;
  for (const OpSpec& op : o_.ops) {
    if (std::none_of(final_rows.begin(), final_rows.end(), [&](const OpRow& r) { return r.op == op.name; })) {
      not_run.push_back(op.name);
    }
  }
  std::cout << "\n" << summary_table(final_rows, not_run, monotonic_seconds() - t0_);
  print_time_summary(final_rows);
  const bool all_passed =
      final_rows.size() == o_.ops.size() &&
      std::all_of(final_rows.begin(), final_rows.end(), [](const OpRow& r) { return is_settled(r.status); });
  std::cout << "ops_status.csv: " << printable((dir_ / kStatusFile).string()) << "\n";
  write_identity(interrupted ? "interrupted" : disk_full_ ? "failed" : "finished");
  log("batch ended: " + std::string(interrupted  ? "interrupted"
                                    : disk_full_ ? "failed: " + disk_full_what_
                                    : all_passed ? "every op passed or unsupported"
                                                 : "not every op passed"));
  if (interrupted) return kExitInterrupted;
  return all_passed && !disk_full_ ? kExitOk : kExitFailed;
}

// Where the batch's seconds went, summed over the runs that recorded it
// (docs/batch.md, "Where the time goes"); nothing for a file of an older
// zlcore's rows alone.
void BatchRun::print_time_summary(const std::vector<OpRow>& rows) const {
  TimeBreakdown sum;
  size_t runs = 0;
  for (const OpRow& r : rows) {
    if (!r.time.known) continue;
    sum += r.time;
    ++runs;
  }
  if (runs > 0) std::cout << "\n" << time_summary(sum, runs, monotonic_seconds() - t0_);
}

// Each op's last row, earlier sessions included, in the batch's op order.
std::vector<OpRow> BatchRun::latest_rows() const {
  std::map<std::string, OpRow> last;
  for (const OpRow& r : earlier_rows_) last[r.op] = r;
  for (const OpRow& r : rows_) last[r.op] = r;
  std::vector<OpRow> out;
  for (const OpSpec& op : o_.ops) {
    auto it = last.find(op.name);
    if (it != last.end()) out.push_back(it->second);
  }
  return out;
}

std::string BatchRun::devices_text() const {
  std::string s;
  for (const Device& d : devices_) s += (s.empty() ? "" : ",") + std::to_string(d.index);
  return s;
}

}  // namespace zl::batch
