// What the batch does as each op starts and ends (the work queue's events):
// the op's run directory and log, its lease while it runs, its row in
// ops_status.csv, and the lines batch.log and the terminal get. A full disk
// found on the way stops new ops and keeps room for the last rows.
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "../util/clock.hpp"
#include "../util/dir_links.hpp"
#include "../util/printable.hpp"
#include "../util/text.hpp"
#include "batch_run.hpp"
#include "outcome.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/paths.hpp"
#include "zlcore/process.hpp"

namespace fs = std::filesystem;

namespace zl::batch {
namespace {

// Moves an earlier attempt's directory aside (dir.attempt1, .attempt2, ...):
// a rerun never overwrites what an earlier one left.
std::string move_aside(const fs::path& dir) {
  if (!fs::exists(dir)) return "";
  for (int n = 1;; ++n) {
    fs::path to = dir.string() + ".attempt" + std::to_string(n);
    if (!fs::exists(to)) {
      fs::rename(dir, to);
      return to.filename().string();
    }
  }
}

}  // namespace

OpLaunch BatchRun::prepare(const Job& job, const Device& device) {
  const OpSpec& op = o_.ops[job.op_index];
  const std::string name = op_dir_name(op.name);
  const fs::path runs = dir_ / (compile_pass_ ? "compile" : warmup_ ? "warmup" : "runs");
  OpLaunch l;
  // Checked again before each op, not only at the start: a link planted
  // while the batch runs would take this op's run, its moved-aside attempt
  // and its log elsewhere. No op starts after one is found.
  if (link_found_.empty()) {
    link_found_ = directory_link_under(dir_.string());
    if (!link_found_.empty()) {
      say("--out " + dir_.string() + " now holds a symbolic link where zlcore keeps a directory: " + link_found_ +
          "; no more ops start: put the directory itself there, then --resume runs them");
    }
  }
  if (!link_found_.empty()) return l;
  std::error_code ec;
  for (const fs::path& d : {runs, dir_ / "logs"}) {
    fs::create_directories(d, ec);
    if (ec == std::errc::no_space_on_device) out_of_space("cannot create " + d.string());
  }
  l.op = op;
  l.device = device;
  l.run_dir = (runs / name).string();
  std::string moved = move_aside(l.run_dir);
  if (!moved.empty()) log("op " + op.name + ": earlier run dir moved to " + moved);
  l.log_path = (dir_ / "logs" / (name + (compile_pass_ ? ".compile.log" : warmup_ ? ".warmup.log" : ".log"))).string();
  l.warmed_on = job.warmed_on;
  l.timeout_s = o_.timeout_s;
  if (compile_pass_) l.run_args.push_back("--compile-only");
  // One marker per attempt in the appended log.
  try {
    append_log_line(l.log_path, "=== zlcore batch: " +
                                    std::string(compile_pass_ ? "compile-ahead"
                                                : warmup_     ? "warm-up"
                                                              : "timed") +
                                    " run of " + op.name + " on device " + device_label(device) + " at " +
                                    utc_now_iso() + "\n");
  } catch (const std::exception& e) {
    if (is_out_of_space(e)) {
      out_of_space(e.what());
    } else {
      warn_once(e.what());
    }
  }
  return l;
}

void BatchRun::started(const Job& job, const OpLaunch& l) {
  const std::string what = (compile_pass_ ? "compile "
                            : warmup_     ? "warm-up "
                                          : "start   ") +
                           o_.ops[job.op_index].name + " on device " + device_label(l.device) +
                           (l.warmed_on.empty() ? "" : " (warmed on " + l.warmed_on + ")");
  log(what);
  if (!progress_tty()) progress_->line(what);
}

void BatchRun::running_as(const Job& job, const OpLaunch& l, pid_t pid) {
  Lease lease;
  lease.op = o_.ops[job.op_index].name;
  lease.run_dir = fs::relative(l.run_dir, dir_).string();
  lease.batch_dir = dir_.string();
  lease.pass = compile_pass_ ? "compile" : warmup_ ? "warm-up" : "run";  // only a run is adopted as the op's row
  lease.device_index = l.device.index;
  lease.device_id = l.device.id;
  if (!describe_process(pid, &lease)) return;  // already over
  try {
    write_lease(lease_path(dir_.string(), op_dir_name(lease.op)), lease);
  } catch (const std::exception& e) {
    // Without it a --resume after a kill cannot see this op running; the
    // op itself is unaffected.
    warn_once(std::string("cannot write the op's lease: ") + e.what());
    if (is_out_of_space(e)) out_of_space(e.what());
  }
}

void BatchRun::finished(const Job& job, const OpLaunch& l, const OpOutcome& out) {
  const OpSpec& op = o_.ops[job.op_index];
  // Its process is gone: nothing left for a --resume to wait for.
  std::error_code ec;
  fs::remove(lease_path(dir_.string(), op_dir_name(op.name)), ec);
  progress_->op_done();
  if (compile_pass_) return compiled(job, l, out);
  if (warmup_) {
    // An op that measured something goes on to its timed run; one that
    // cannot (unsupported, crashed, preflight) has its row from here.
    const bool goes_on = out.status == Status::passed || out.status == Status::failed || out.status == Status::partial;
    const std::string line = "warm-up " + op.name + " on device " + device_label(l.device) + ": " +
                             to_string(out.status) + (goes_on ? "" : " (" + out.reason + ")");
    log(line);
    progress_->line(line);
    if (goes_on) {
      warmed_on_[job.op_index] = l.device.id;
      return;
    }
    // A warm-up that crashed, hung or failed preflight ends the op here.
  }
  OpRow row;
  row.op = op.name;
  row.test_node = !out.test_node.empty() ? out.test_node : op.test_node;
  row.status = out.status;
  row.exit_code = out.exit_code;
  row.signal = out.signal;
  row.backend = backend_.name();
  row.device_index = l.device.index;
  row.device_id = !out.device_id.empty() ? out.device_id : l.device.id;
  row.timer = out.timer;
  row.bench_level = out.bench_level;
  row.started = out.started;
  row.seconds = out.seconds;
  row.time = out.time;
  row.warmed_on = l.warmed_on;
  row.attempt = attempts_[op.name] + out.attempts;
  row.run_dir = fs::relative(l.run_dir, dir_).string();
  row.reason = text::one_line(out.reason);
  // The run found the disk full (or failed on a disk with no room left):
  // this op is failed for it, and no other op starts.
  if (out.disk_full || (!is_settled(row.status) && little_room_left(dir_.string()))) {
    if (is_settled(row.status)) row.status = Status::failed;
    if (row.reason.find("No space left on device") == std::string::npos) {
      row.reason = "No space left on device" + (row.reason.empty() ? "" : "; " + row.reason);
    }
    out_of_space("op " + op.name);
  }
  record(row);
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.1fs", row.seconds);
  const std::string line = "[" + std::to_string(++finished_rows_) + "/" + std::to_string(todo_.size()) + "] " +
                           to_string(row.status) + " " + op.name + " on device " + device_label(l.device) + " " + secs +
                           (row.reason.empty() ? "" : "  " + row.reason);
  log(line);
  progress_->line(line);
}

void BatchRun::never_ran(const Job& job, Status status, const std::string& reason) {
  const OpSpec& op = o_.ops[job.op_index];
  progress_->op_done();
  if (compile_pass_) {
    note("compile-ahead " + op.name + ": " + reason + " (its timed run compiles it)");
    return;
  }
  OpRow row;
  row.op = op.name;
  row.test_node = op.test_node;
  row.status = status;
  row.backend = backend_.name();
  row.started = utc_now_iso();
  row.warmed_on = job.warmed_on;
  row.attempt = attempts_[op.name] + 1;
  row.reason = reason;
  record(row);
  const std::string line = std::string(to_string(status)) + " " + op.name + ": " + reason;
  log(line);
  progress_->line(line);
}

void BatchRun::note(const std::string& line) {
  log(line);
  progress_->line(line);
}

bool BatchRun::progress_tty() const { return isatty(1) == 1; }

void BatchRun::warn_once(const std::string& what) {
  if (warned_.insert(what).second) std::cerr << "zlcore batch: " << printable(what) << "\n";
  log(what);
}

void BatchRun::say(const std::string& line) {
  log(line);
  std::cout << printable(line) << "\n" << std::flush;
}

void BatchRun::log(const std::string& line) {
  append_log_line_or_warn((dir_ / "batch.log").string(), utc_now_iso() + " " + printable(text::one_line(line)) + "\n",
                          "zlcore batch");
}

void BatchRun::record(const OpRow& row) {
  rows_.push_back(row);
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      append_status_row((dir_ / kStatusFile).string(), row);
      return;
    } catch (const std::exception& e) {
      if (!is_out_of_space(e)) throw;
      // Give back the room kept for this and try once more.
      out_of_space(e.what());
    }
  }
  // Not even that: the row is not lost, it is on stderr.
  std::cerr << "zlcore batch: no space left to record this row of ops_status.csv: "
            << printable(csv_record(row).substr(0, csv_record(row).size() - 1)) << "\n";
}

// The file system of --out has room for nothing more. Called at the first
// sign: the room kept aside is given back so rows and the identity can
// still be written, and no op starts after this one.
void BatchRun::out_of_space(const std::string& what) {
  if (disk_full_) return;
  disk_full_ = true;
  disk_full_what_ = "No space left on device (" + what + ")";
  if (reserve_) reserve_->release();
  say(disk_full_what_ + ": no more ops start; free space, then --resume finishes the batch");
}

}  // namespace zl::batch
