// The local launcher: the whole batch on this host. It owns the batch
// directory (ops_status.csv, runs/, logs/, batch.log, batch_identity.json),
// works out what --resume still has to do, runs the optional warm-up pass
// and the timed pass through the work queue, and prints the summary.
#include <unistd.h>
#include <csignal>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "../util/clock.hpp"
#include "../util/dir_links.hpp"
#include "../util/dir_lock.hpp"
#include "../util/json.hpp"
#include "../util/json_read.hpp"
#include "../util/printable.hpp"
#include "../util/space_reserve.hpp"
#include "../util/text.hpp"
#include "lease.hpp"
#include "outcome.hpp"
#include "progress.hpp"
#include "scheduler.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/paths.hpp"
#include "zlcore/process.hpp"
#include "zlcore/signals.hpp"

namespace fs = std::filesystem;

namespace zl::batch {
namespace {

constexpr const char* kStatusFile = "ops_status.csv";

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

class BatchRun : public QueueEvents {
 public:
  BatchRun(const BatchOptions& o, const Backend& b, std::vector<Device> devices)
      : o_(o), backend_(b), devices_(std::move(devices)), dir_(fs::absolute(o.out_dir)) {}

  int execute() {
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
        " to run" +
        (done_before ? " (" + std::to_string(done_before) + " settled earlier: passed or unsupported)" : "") +
        ", devices " + devices_text() + ", backend " + backend_.name());

    ColdExecutorConfig ec;
    ec.zlcore_exe = fs::read_symlink("/proc/self/exe").string();
    ec.backend_dir = fs::absolute(o_.backend_dir).string();
    ec.backend = backend_.name();
    ec.batch_dir = dir_.string();
    ec.run = o_.run;
    if (o_.cold) {
      executor_ = make_cold_executor(ec);
    } else {
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
      executor_ = make_warm_executor(wc);
    }

    QueueConfig qc;
    qc.probe = [this] { return backend_.enumerate(); };
    qc.idle = o_.idle;
    qc.timeout_s = o_.timeout_s;
    qc.backstop_s = o_.backstop_s;

    bool interrupted = false;
    std::vector<Job> jobs;
    for (size_t i : todo_) jobs.push_back(Job{i, ""});
    if (o_.warmup_devices > 0 && !jobs.empty()) {
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
    progress_->clear();

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

  // ---- QueueEvents ----
  OpLaunch prepare(const Job& job, const Device& device) override {
    const OpSpec& op = o_.ops[job.op_index];
    const std::string name = op_dir_name(op.name);
    const fs::path runs = dir_ / (warmup_ ? "warmup" : "runs");
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
    l.log_path = (dir_ / "logs" / (name + (warmup_ ? ".warmup.log" : ".log"))).string();
    l.warmed_on = job.warmed_on;
    l.timeout_s = o_.timeout_s;
    // One marker per attempt in the appended log.
    try {
      append_log_line(l.log_path, "=== zlcore batch: " + std::string(warmup_ ? "warm-up" : "timed") + " run of " +
                                      op.name + " on device " + device_label(device) + " at " + utc_now_iso() + "\n");
    } catch (const std::exception& e) {
      if (is_out_of_space(e)) {
        out_of_space(e.what());
      } else {
        warn_once(e.what());
      }
    }
    return l;
  }

  void started(const Job& job, const OpLaunch& l) override {
    const std::string what = (warmup_ ? "warm-up " : "start   ") + o_.ops[job.op_index].name + " on device " +
                             device_label(l.device) + (l.warmed_on.empty() ? "" : " (warmed on " + l.warmed_on + ")");
    log(what);
    if (!progress_tty()) progress_->line(what);
  }

  void running_as(const Job& job, const OpLaunch& l, pid_t pid) override {
    Lease lease;
    lease.op = o_.ops[job.op_index].name;
    lease.run_dir = fs::relative(l.run_dir, dir_).string();
    lease.batch_dir = dir_.string();
    lease.warmup = warmup_;
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

  void finished(const Job& job, const OpLaunch& l, const OpOutcome& out) override {
    const OpSpec& op = o_.ops[job.op_index];
    // Its process is gone: nothing left for a --resume to wait for.
    std::error_code ec;
    fs::remove(lease_path(dir_.string(), op_dir_name(op.name)), ec);
    progress_->op_done();
    if (warmup_) {
      // An op that measured something goes on to its timed run; one that
      // cannot (unsupported, crashed, preflight) has its row from here.
      const bool goes_on =
          out.status == Status::passed || out.status == Status::failed || out.status == Status::partial;
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
                             to_string(row.status) + " " + op.name + " on device " + device_label(l.device) + " " +
                             secs + (row.reason.empty() ? "" : "  " + row.reason);
    log(line);
    progress_->line(line);
  }

  void never_ran(const Job& job, Status status, const std::string& reason) override {
    const OpSpec& op = o_.ops[job.op_index];
    progress_->op_done();
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

  void note(const std::string& line) override {
    log(line);
    progress_->line(line);
  }

  void tick(const std::vector<InFlight>& running) override { progress_->tick(running); }

  bool stop_starting() const override { return disk_full_ || !link_found_.empty(); }

 private:
  bool progress_tty() const { return isatty(1) == 1; }

  void warn_once(const std::string& what) {
    if (warned_.insert(what).second) std::cerr << "zlcore batch: " << printable(what) << "\n";
    log(what);
  }

  // Where the batch's seconds went, summed over the runs that recorded it
  // (docs/batch.md, "Where the time goes"); nothing for a file of an older
  // zlcore's rows alone.
  void print_time_summary(const std::vector<OpRow>& rows) const {
    TimeBreakdown sum;
    size_t runs = 0;
    for (const OpRow& r : rows) {
      if (!r.time.known) continue;
      sum += r.time;
      ++runs;
    }
    if (runs > 0) std::cout << "\n" << time_summary(sum, runs, monotonic_seconds() - t0_);
  }

  void say(const std::string& line) {
    log(line);
    std::cout << printable(line) << "\n" << std::flush;
  }

  void log(const std::string& line) {
    append_log_line_or_warn((dir_ / "batch.log").string(), utc_now_iso() + " " + printable(text::one_line(line)) + "\n",
                            "zlcore batch");
  }

  void record(const OpRow& row) {
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
  void out_of_space(const std::string& what) {
    if (disk_full_) return;
    disk_full_ = true;
    disk_full_what_ = "No space left on device (" + what + ")";
    if (reserve_) reserve_->release();
    say(disk_full_what_ + ": no more ops start; free space, then --resume finishes the batch");
  }

  std::string devices_text() const {
    std::string s;
    for (const Device& d : devices_) s += (s.empty() ? "" : ",") + std::to_string(d.index);
    return s;
  }

  void prepare_directory() {
    const fs::path csv = dir_ / kStatusFile;
    // A path the system cannot resolve (a link loop, a component that is a
    // file): one line naming it, before anything asks what is there.
    std::error_code bad;
    (void)fs::status(dir_, bad);
    if (bad && bad != std::errc::no_such_file_or_directory && bad != std::errc::not_a_directory) {
      throw UsageError("--out " + dir_.string() + " cannot be used: " + bad.message());
    }
    if (fs::exists(csv) && !o_.resume) {
      throw UsageError("--out " + dir_.string() +
                       " already holds a batch; pass --resume to continue it, or another --out");
    }
    // A file in the way, or a place we cannot write: one line, exit 2.
    std::error_code ec;
    if (fs::exists(dir_, ec) && !fs::is_directory(dir_, ec)) {
      throw UsageError("--out " + dir_.string() + " is a file, not a directory; choose another --out");
    }
    fs::create_directories(dir_, ec);
    if (ec) throw UsageError("cannot create --out " + dir_.string() + ": " + ec.message());
    // One batch per directory at a time.
    bool locked = false;
    try {
      locked = lock_.acquire((dir_ / ".batch.lock").string());
    } catch (const WriteError& e) {
      throw UsageError("cannot write in --out " + dir_.string() + ": " + std::strerror(e.error_number()));
    }
    if (!locked) throw UsageError("--out " + dir_.string() + " is in use by another zlcore batch");
    // Before anything is written under it: a directory of ours replaced by a
    // link would take new runs and moved-aside attempts elsewhere.
    refuse_directory_links(dir_.string(), "");
    // Before anything of the batch is touched: its history, and whether this
    // invocation may add to it.
    load_history();
    check_caliber();
    reserve_ = std::make_unique<SpaceReserve>((dir_ / ".space_reserve").string(), 256 * 1024);
    // Appends refuse a link; found only then, an op would have run and its
    // row been lost. Said before anything runs.
    if (fs::is_symlink(fs::symlink_status(csv, ec))) {
      throw UsageError("--out " + dir_.string() + ": " + kStatusFile +
                       " is a symbolic link, and zlcore does not follow links for files it writes; replace it "
                       "with the file itself");
    }
    std::string note;
    try {
      prepare_status_csv(csv.string(), &note);
    } catch (const UsageError&) {
      throw;
    } catch (const std::exception& e) {
      throw UsageError(std::string("cannot start on ") + csv.string() + ": " + e.what());
    }
    // A repair is news to whoever edited the file: say it, not only log it.
    if (!note.empty()) say(note);
  }

  void decide_work() {
    t0_ = monotonic_seconds();
    started_ = utc_now_iso();
    std::set<std::string> passed;
    for (const OpRow& r : read_status_csv((dir_ / kStatusFile).string()).rows) {
      attempts_[r.op]++;
      if (is_settled(r.status)) passed.insert(r.op);
      earlier_rows_.push_back(r);
    }
    for (size_t i = 0; i < o_.ops.size(); ++i) {
      if (!passed.count(o_.ops[i].name)) todo_.push_back(i);
    }
  }

  // batch_identity.json's invocations so far, oldest first (one, rebuilt
  // from the top level, for a file an older zlcore wrote).
  void load_history() {
    history_.SetArray();
    const fs::path file = dir_ / "batch_identity.json";
    std::error_code ec;
    if (!fs::exists(file, ec)) return;
    rapidjson::Document d;
    std::string text;
    try {
      text = read_file(file.string());
    } catch (const std::exception&) {
    }
    if (!json::parse(d, text).empty() || !d.IsObject()) {
      say("batch_identity.json does not read; the record of earlier invocations starts again here");
      return;
    }
    auto& a = history_.GetAllocator();
    if (d.HasMember("invocations") && d["invocations"].IsArray()) {
      for (const auto& inv : d["invocations"].GetArray()) history_.PushBack(json::Value(inv, a), a);
      return;
    }
    json::Value inv(rapidjson::kObjectType);
    for (const char* k : {"started", "ended", "status", "pid", "resumed", "options"}) {
      if (d.HasMember(k)) inv.AddMember(json::str(k, a), json::Value(d[k], a), a);
    }
    history_.PushBack(inv, a);
  }

  // --resume with other settings than the batch was started with would mix
  // two calibers in one ops_status.csv: refused (exit 2, naming each
  // difference) unless --force-resume, which says so and records it.
  void check_caliber() {
    if (!o_.resume || history_.Empty()) return;
    const json::Value& first = history_[0];
    if (!first.IsObject() || !first.HasMember("caliber") || !first["caliber"].IsObject()) {
      say("--resume: batch_identity.json does not record the settings this batch was started with (an older "
          "zlcore); they are not compared");
      return;
    }
    std::map<std::string, std::string> then;
    for (const auto& m : first["caliber"].GetObject()) {
      then[m.name.GetString()] = m.value.IsString() ? m.value.GetString() : "";
    }
    std::set<std::string> keys;
    for (const auto& [k, v] : then) keys.insert(k);
    for (const auto& [k, v] : o_.caliber) keys.insert(k);
    for (const std::string& k : keys) {
      auto was = then.find(k);
      auto now = o_.caliber.find(k);
      const std::string a = was == then.end() ? "unset" : was->second;
      const std::string b = now == o_.caliber.end() ? "unset" : now->second;
      if (a != b) differs_.push_back((k.rfind("env:", 0) == 0 ? k.substr(4) : k) + " " + a + " (now " + b + ")");
    }
    if (differs_.empty()) return;
    std::string list;
    for (const std::string& d : differs_) list += (list.empty() ? "" : "; ") + d;
    if (!o_.force_resume) {
      throw UsageError("--resume: " + dir_.string() + " was started with other settings that change numbers: " + list +
                       "; pass the same ones, or --force-resume to mix them in this batch");
    }
    say("--force-resume: this batch's rows now mix settings: " + list);
  }

  // Ops an earlier batch started and that still run (it was killed, they were
  // not): a rerun must not share their device or their run directory. Each
  // is waited for (--orphans wait, the default: what it measures is kept) or
  // killed (--orphans kill), with a line saying which. False when a Ctrl-C
  // ended the wait.
  bool settle_orphans() {
    for (const std::string& file : lease_files(dir_.string())) {
      std::error_code ec;
      std::string why;
      const std::optional<Lease> lease = read_lease(file, &why);
      if (!lease) {
        say("ignoring " + fs::path(file).filename().string() + " in leases/: " + why);
        fs::remove(file, ec);
        continue;
      }
      if (!lease_names_dir(*lease, dir_.string())) {
        say(foreign_lease_line(file, *lease));
        fs::remove(file, ec);
        continue;
      }
      std::vector<pid_t> alive = live_processes(*lease);
      if (alive.empty()) {
        fs::remove(file, ec);
        continue;
      }
      const std::string who = "op " + lease->op + ": " + (lease->warmup ? "its warm-up" : "its run") +
                              " from an earlier batch is still running (pid " + std::to_string(lease->pid) +
                              ", process group " + std::to_string(lease->pgid) + ", started " + lease->started + ")";
      bool waited = false;
      if (o_.orphans == "kill") {
        say(who + "; killing its processes (--orphans kill)");
      } else {
        say(who + "; waiting for it to end (--orphans kill stops it instead)");
        // Its own --timeout ends it; a run without one may take forever, and a
        // Ctrl-C ends the wait.
        const double limit = o_.timeout_s > 0 ? o_.timeout_s + o_.backstop_s + 15 : 0;
        const double until = limit > 0 ? monotonic_seconds() + limit : 0;
        while (!(alive = live_processes(*lease)).empty() && (until == 0 || monotonic_seconds() < until)) {
          if (signals::interrupt_count() > 0) return false;
          usleep(100000);
        }
        waited = alive.empty();
        if (!waited)
          say("op " + lease->op + ": still running after " + std::to_string(static_cast<int>(limit)) +
              " s; killing it");
      }
      if (!alive.empty()) alive = kill_and_wait(*lease, alive);
      if (!alive.empty()) {
        // Never run an op again beside a run of it that will not die, and
        // never reuse its directory: leave both, and the lease, for later.
        say("op " + lease->op + ": its earlier run is still alive after SIGKILL (pid " + std::to_string(alive[0]) +
            "); not run in this session");
        blocked_.insert(lease->op);
        continue;
      }
      fs::remove(file, ec);
      if (waited && !lease->warmup) adopt(*lease);
    }
    // An op that is settled now, or blocked by a run that will not die, is
    // not started.
    std::set<std::string> settled;
    for (const OpRow& r : rows_) {
      if (is_settled(r.status)) settled.insert(r.op);
    }
    todo_.erase(
        std::remove_if(todo_.begin(), todo_.end(),
                       [&](size_t i) { return settled.count(o_.ops[i].name) || blocked_.count(o_.ops[i].name); }),
        todo_.end());
    return true;
  }

  // The row of a run that ended after its batch was killed, from what it
  // wrote itself; nothing when it never wrote a final status (then the op
  // simply runs again).
  void adopt(const Lease& lease) {
    const fs::path run_dir = dir_ / lease.run_dir;
    ExitFacts facts;
    facts.started = true;
    facts.exit_code = 0;  // unknown (not our child): the identity's own status and reason decide
    const OpOutcome out = make_outcome(facts, run_dir.string());
    std::string status;
    try {
      rapidjson::Document id;
      if (json::parse(id, read_file((run_dir / "run_identity.json").string())).empty() && id.IsObject() &&
          id.HasMember("status") && id["status"].IsString()) {
        status = id["status"].GetString();
      }
    } catch (const std::exception&) {
    }
    if (!parse_status(status)) return;
    OpRow row;
    row.op = lease.op;
    row.test_node = out.test_node;
    row.status = out.status;
    row.exit_code = out.exit_code;
    row.signal = out.signal;
    row.backend = backend_.name();
    row.device_index = lease.device_index;
    row.device_id = !out.device_id.empty() ? out.device_id : lease.device_id;
    row.timer = out.timer;
    row.bench_level = out.bench_level;
    row.started = out.started;
    row.seconds = out.seconds;
    row.time = out.time;
    row.attempt = ++attempts_[lease.op];
    row.run_dir = lease.run_dir;
    row.reason = text::one_line(out.reason) + (out.reason.empty() ? "" : "; ") +
                 "finished after the batch that started it was killed; recorded by --resume";
    record(row);
    say("op " + lease.op + ": its earlier run ended " + to_string(row.status) + "; recorded");
  }

  // Each op's last row, earlier sessions included, in the batch's op order.
  std::vector<OpRow> latest_rows() const {
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

  void write_identity(const std::string& status) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    doc.AddMember("schema", 1, a);
    doc.AddMember("zlcore_version", json::str(ZL_VERSION, a), a);
    doc.AddMember("status", json::str(status, a), a);
    doc.AddMember("started", json::str(started_, a), a);
    if (status != "running") doc.AddMember("ended", json::str(utc_now_iso(), a), a);
    doc.AddMember("seconds", monotonic_seconds() - t0_, a);
    doc.AddMember("resumed", o_.resume && !earlier_rows_.empty(), a);
    doc.AddMember("pid", static_cast<int>(getpid()), a);
    json::Value backend(rapidjson::kObjectType);
    backend.AddMember("name", json::str(backend_.name(), a), a);
    backend.AddMember("abi", json::str(backend_.abi(), a), a);
    backend.AddMember("version", json::str(backend_.backend_version(), a), a);
    backend.AddMember("path", json::str(backend_.path(), a), a);
    doc.AddMember("backend", backend, a);
    json::Value devices(rapidjson::kArrayType);
    for (const Device& d : devices_) {
      json::Value dv(rapidjson::kObjectType);
      dv.AddMember("index", d.index, a);
      dv.AddMember("id", json::str(d.id, a), a);
      dv.AddMember("name", json::str(d.name, a), a);
      devices.PushBack(dv, a);
    }
    doc.AddMember("devices", devices, a);
    doc.AddMember("launcher", "local", a);
    doc.AddMember("executor", json::str(executor_ ? executor_->kind() : "cold", a), a);
    doc.AddMember("warmup_devices", o_.warmup_devices, a);
    doc.AddMember("timeout_s", o_.timeout_s, a);
    doc.AddMember("options", json::str_map(o_.recorded_options, a), a);
    std::vector<std::string> ops;
    for (const OpSpec& op : o_.ops) ops.push_back(op.name);
    doc.AddMember("ops", json::str_array(ops, a), a);
    std::map<std::string, int> counts;
    for (const OpRow& r : latest_rows()) counts[to_string(r.status)]++;
    json::Value c(rapidjson::kObjectType);
    for (Status s : all_statuses()) {
      c.AddMember(json::str(to_string(s), a), json::Value(counts[to_string(s)]), a);
    }
    c.AddMember("not_run", static_cast<int>(o_.ops.size() - latest_rows().size()), a);
    doc.AddMember("counts", c, a);
    if (disk_full_) doc.AddMember("reason", json::str(disk_full_what_, a), a);
    doc.AddMember("caliber", json::str_map(o_.caliber, a), a);
    // Every invocation, oldest first, this one last: a resume with other
    // settings stays on record beside the first.
    json::Value invocations(rapidjson::kArrayType);
    for (const auto& inv : history_.GetArray()) invocations.PushBack(json::Value(inv, a), a);
    json::Value now(rapidjson::kObjectType);
    now.AddMember("started", json::str(started_, a), a);
    if (status != "running") now.AddMember("ended", json::str(utc_now_iso(), a), a);
    now.AddMember("status", json::str(status, a), a);
    now.AddMember("pid", static_cast<int>(getpid()), a);
    now.AddMember("resumed", o_.resume, a);
    now.AddMember("force_resume", o_.force_resume, a);
    now.AddMember("differs", json::str_array(differs_, a), a);
    now.AddMember("options", json::str_map(o_.recorded_options, a), a);
    now.AddMember("caliber", json::str_map(o_.caliber, a), a);
    invocations.PushBack(now, a);
    doc.AddMember("invocations", invocations, a);
    const std::string text = json::pretty(doc);
    for (int attempt = 0; attempt < 2; ++attempt) {
      try {
        write_file_atomic((dir_ / "batch_identity.json").string(), text);
        return;
      } catch (const std::exception& e) {
        if (!is_out_of_space(e)) throw;
        out_of_space(e.what());
      }
    }
    warn_once("no space left to write batch_identity.json (status " + status + ")");
  }

  const BatchOptions& o_;
  const Backend& backend_;
  std::vector<Device> devices_;
  fs::path dir_;
  DirLock lock_;
  double t0_ = 0;
  std::string started_;
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<Progress> progress_;
  std::vector<size_t> todo_;
  std::map<std::string, int> attempts_;
  std::vector<OpRow> earlier_rows_, rows_;
  std::map<size_t, std::string> warmed_on_;
  bool warmup_ = false;
  size_t finished_rows_ = 0;
  std::set<std::string> warned_;
  std::set<std::string> blocked_;          // ops whose earlier run would not die
  std::unique_ptr<SpaceReserve> reserve_;  // room for the last rows when the disk fills up
  bool disk_full_ = false;
  std::string disk_full_what_;
  std::string link_found_;            // a directory link found inside --out while the batch ran
  rapidjson::Document history_;       // batch_identity.json's earlier invocations
  std::vector<std::string> differs_;  // settings that differ from the first invocation's
};

class LocalLauncher : public Launcher {
 public:
  const char* name() const override { return "local"; }

  int launch(const BatchOptions& o, const Backend& backend) override {
    signals::install();
    DeviceQuery q = backend.enumerate();
    if (q.devices.empty()) {
      throw PreflightError(
          "device", "backend '" + backend.name() + "' reports no devices: " + (q.reason.empty() ? q.error : q.reason));
    }
    std::vector<Device> devices;
    for (int index : o.device_indices) {
      auto it = std::find_if(q.devices.begin(), q.devices.end(), [&](const Device& d) { return d.index == index; });
      if (it == q.devices.end()) throw UsageError("device " + std::to_string(index) + " is gone");
      devices.push_back(*it);
    }
    BatchRun run(o, backend, devices);
    return run.execute();
  }
};

}  // namespace

std::unique_ptr<Launcher> make_local_launcher() { return std::make_unique<LocalLauncher>(); }

}  // namespace zl::batch
