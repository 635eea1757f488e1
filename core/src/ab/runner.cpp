// The rounds of an A/B over the devices: one executor per side (its own
// suite, interpreter, variables and tuner cache), a queue of (op, round) units
// in op order, each unit running its sides one after the other on one device
// in the order round_order() gives. A unit that fails on any side runs again
// on every side, so a round never pairs a retried side with a first attempt.
//
// Nothing finished is lost: every run's line and every round's line is
// appended to rounds.csv as it ends, and a unit counts only once its round
// line is there, so --resume reruns exactly the rounds that were not whole.
// A full disk stops the A/B as Ctrl-C does: no retry (it would find the same
// disk), no new round, the identity `failed` with the reason, exit 1.
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <filesystem>
#include <iostream>
#include <set>

#include "../batch/lease.hpp"
#include "../util/clock.hpp"
#include "../util/dir_links.hpp"
#include "../util/dir_lock.hpp"
#include "../util/printable.hpp"
#include "../util/space_reserve.hpp"
#include "runner_parts.hpp"
#include "zlcore/ab.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/signals.hpp"

namespace fs = std::filesystem;

namespace zl::ab {
namespace {

using batch::Execution;
using batch::OpOutcome;
using batch::Status;

struct Unit {
  size_t op = 0;
  int round = 0;  // 0: side A's record run
  int failures = 0;
};

struct Slot {
  Device device;
  bool busy = false;
  Unit unit;
  int attempt = 1;
  std::string rel;  // runs/<op>/r<round>-t<attempt>
  std::vector<std::string> order;
  size_t step = 0;
  std::vector<std::pair<std::string, OpOutcome>> outcomes;
  std::unique_ptr<Execution> exec;
};

// passed and partial measured rows; anything else is a round to run again
// (unsupported is final and not a failure).
bool measured(Status s) { return s == Status::passed || s == Status::partial; }

class Runner {
 public:
  explicit Runner(const Options& o) : o_(o), dir_(fs::absolute(o.out_dir).lexically_normal()) {}

  int execute() {
    prepare();
    // Before anything runs: a run a killed ab left behind would share the device.
    if (const std::string why = stop_orphan_runs(dir_.string(), std::cout); !why.empty()) {
      std::cerr << "zlcore ab: " << printable(why) << "\n";
      return kExitFailed;
    }
    plan_units();
    // Before anything is written: a resumed A/B with rounds left needs its devices.
    if (!todo_.empty() && o_.devices.empty()) throw PreflightError("device", o_.no_devices_reason);
    started_ = utc_now_iso();
    // Room for the last words should the disk fill: round lines, the identity.
    reserve_ = std::make_unique<SpaceReserve>((dir_ / ".space_reserve").string(), 256 * 1024);
    write_identity("running");
    signals::install();
    executors_ = make_executors(o_, dir_.string());
    std::cout << "ab " << dir_.string() << ": " << o_.ops.size() << " ops x " << o_.rounds << " rounds, sides "
              << (o_.calibrate ? "A, B and A again (A2)" : "A and B") << ", " << todo_.size()
              << " unit(s) to run, devices " << devices_text() << "\n"
              << std::flush;
    if (!caliber_checked_) {
      // The check needs one measured pair; on resume one may already be there.
      if (const auto first = first_done_round(); !first.empty() && !check_caliber_of(first)) return refuse();
    }
    const int loop = run_loop();
    if (loop == kExitInterrupted) {
      write_identity("interrupted");
      std::cout << "interrupted: finished rounds are kept in " << (dir_ / "rounds.csv").string()
                << "; continue with --resume\n";
      return kExitInterrupted;
    }
    if (loop == kExitCaliber) return refuse();
    if (disk_full_) return stop_on_full_disk("no more rounds start", "finishes the A/B");
    try {
      write_identity("reporting");
      const int code = write_report(o_, dir_.string(), read_rounds_csv((dir_ / "rounds.csv").string()), std::cout);
      write_identity("done");
      return code;
    } catch (const std::exception& e) {
      if (!is_out_of_space(e)) throw;
      out_of_space(e.what());
      return stop_on_full_disk("every round is kept", "writes the report");
    }
  }

 private:
  void prepare() {
    std::error_code ec;
    const fs::path csv = dir_ / "rounds.csv";
    if (o_.resume) {
      if (!fs::is_regular_file(dir_ / "ab_identity.json")) {
        throw UsageError("ab --resume: " + dir_.string() + " is not an A/B directory (no ab_identity.json)");
      }
      lock();
      // Before anything is written under it: a directory of ours replaced by
      // a link would take new rounds, leases and logs elsewhere.
      refuse_directory_links(dir_.string(), "ab: ");
      check_resume_settings(o_, (dir_ / "ab_identity.json").string());
      if (!fs::exists(csv)) write_file_atomic(csv.string(), rounds_csv_header());
      std::string note;
      try {
        lines_ = read_rounds_csv(csv.string());
        note = repair_rounds_csv(csv.string());
      } catch (const UsageError&) {
        throw;
      } catch (const std::exception& e) {
        // Not a file to read (a FIFO, a directory) or not readable: one line.
        throw UsageError("ab --resume: " + std::string(e.what()));
      }
      if (!note.empty()) std::cout << printable(note) << "\n";
    } else {
      if (fs::exists(dir_) && !fs::is_empty(dir_, ec)) {
        throw UsageError("ab: --out " + dir_.string() +
                         " exists and is not empty; give a new directory, or --resume to continue it");
      }
      fs::create_directories(dir_, ec);
      if (ec) throw UsageError("ab: cannot create --out " + dir_.string() + ": " + ec.message());
      lock();
      write_file_atomic(csv.string(), rounds_csv_header());
    }
  }

  // One ab per directory at a time: two would run the same rounds, on the
  // same devices, into the same rounds.csv.
  void lock() {
    bool locked = false;
    try {
      locked = lock_.acquire((dir_ / ".ab.lock").string());
    } catch (const WriteError& e) {
      throw UsageError("ab: cannot write in --out " + dir_.string() + ": " + std::strerror(e.error_number()));
    }
    if (!locked) {
      throw UsageError("ab: --out " + dir_.string() +
                       " is in use by another zlcore ab; wait for it to end, or stop it and --resume");
    }
  }

  void write_identity(const std::string& status) {
    write_ab_identity(o_, (dir_ / "ab_identity.json").string(), status, started_, caliber_note_,
                      disk_full_ ? disk_full_what_ : "");
  }

  // The file system of --out has room for nothing more. Called at the first
  // sign: the room kept aside is given back so the round lines and the
  // identity can still be written, and no round starts after this.
  void out_of_space(const std::string& what) {
    if (disk_full_) return;
    disk_full_ = true;
    disk_full_what_ = "No space left on device (" + what + ")";
    if (reserve_) reserve_->release();
    std::cout << printable(disk_full_what_ + ": no more rounds start") << "\n" << std::flush;
  }

  // Prints "zlcore ab: No space left on device (...); <state>; free space
  // ..., then --resume <resume_does>" and returns the exit code.
  int stop_on_full_disk(const std::string& state, const std::string& resume_does) {
    try {
      write_identity("failed");
    } catch (const std::exception&) {
      // Not even the reserve's room: the line below says it all.
    }
    std::cerr << "zlcore ab: " << printable(disk_full_what_) << "; " << state
              << "; free space on the file system of --out, then --resume " << resume_does << "\n";
    return kExitFailed;
  }

  std::string devices_text() const {
    std::string t;
    for (const Device& d : o_.devices) t += (t.empty() ? "" : ",") + std::to_string(d.index);
    return t.empty() ? "none (nothing to run)" : t;
  }

  // Rounds already whole (or given up) on an earlier invocation stay so.
  void plan_units() {
    std::set<std::pair<std::string, int>> settled;
    for (const RoundLine& l : lines_) {
      if (const auto st = batch::parse_status(l.status); st && measured(*st)) measured_.insert({l.op, l.side});
      if (l.side != "*") continue;
      settled.insert({l.op, l.round});
      if (l.status == "failed" || l.status == "unsupported") given_up_.insert(l.op);
      if (l.status == "done" && l.round == 0) record_dir_[l.op] = l.run_dir;
    }
    for (size_t i = 0; i < o_.ops.size(); ++i) {
      const std::string& name = o_.ops[i].name;
      if (given_up_.count(name)) continue;
      for (int r = needs_record() ? 0 : 1; r <= o_.rounds; ++r) {
        if (!settled.count({name, r})) todo_.push_back({i, r, 0});
      }
    }
  }

  bool needs_record() const { return o_.winners == Winners::record; }

  std::string first_done_round() const {
    for (const RoundLine& l : lines_) {
      if (l.side == "*" && l.status == "done" && l.round > 0) return l.run_dir;
    }
    return "";
  }

  bool check_caliber_of(const std::string& rel) {
    caliber_checked_ = true;
    const CaliberVerdict v = check_round_caliber(dir_ / rel, o_.compare.expect_diff);
    caliber_note_ = v.summary;
    std::cout << v.text << std::flush;
    write_identity("running");
    return v.fair;
  }

  int refuse() {
    write_identity("refused");
    std::cerr << "CALIBER_MISMATCH: the sides differ where --expect-diff does not say so (see above); nothing more "
                 "is measured. Declare the difference with --expect-diff KEY and continue with --resume\n";
    return kExitCaliber;
  }

  // A unit may start when its op's record is there (record mode), nothing of
  // its op is given up, and, until the caliber check passed, no other
  // measured unit is in flight or done unchecked.
  bool startable(const Unit& u, const std::vector<Slot>& slots) const {
    const std::string& name = o_.ops[u.op].name;
    if (given_up_.count(name)) return false;
    if (u.round > 0 && needs_record() && !record_dir_.count(name)) return false;
    if (u.round > 0 && !caliber_checked_) {
      for (const Slot& s : slots) {
        if (s.busy && s.unit.round > 0) return false;
      }
    }
    return true;
  }

  void start_unit(Slot& s, const Unit& u) {
    s.busy = true;
    s.unit = u;
    s.step = 0;
    s.outcomes.clear();
    s.order = u.round == 0 ? std::vector<std::string>{"A"} : round_order(u.round, o_.calibrate);
    const std::string op_dir = batch::op_dir_name(o_.ops[u.op].name);
    // An attempt an earlier, interrupted invocation left half done keeps its
    // directory; this one takes the next number.
    int t = 1;
    std::error_code ec;
    while (fs::exists(dir_ / "runs" / op_dir / ("r" + std::to_string(u.round) + "-t" + std::to_string(t)), ec)) ++t;
    s.attempt = t;
    s.rel = "runs/" + op_dir + "/r" + std::to_string(u.round) + "-t" + std::to_string(t);
    fs::create_directories(dir_ / s.rel, ec);
    fs::create_directories(dir_ / "logs", ec);
    start_step(s);
  }

  void start_step(Slot& s) {
    const std::string& label = s.order[s.step];
    batch::OpLaunch l;
    l.op = o_.ops[s.unit.op];
    l.device = s.device;
    l.run_dir = (dir_ / s.rel / label).string();
    l.log_path = (dir_ / "logs" / (run_name(s, label) + ".log")).string();
    l.timeout_s = o_.timeout_s;
    l.run_args = winner_args(o_, label, s.unit.round, record_source(l.op.name));
    std::string error;
    s.exec = executors_.at(label)->start(l, &error);
    if (s.exec && s.exec->pid() > 0) lease(s, label);
    if (!s.exec) {
      OpOutcome failed;
      failed.status = Status::crashed;
      failed.reason = "could not start: " + error;
      finish_step(s, failed);
    }
  }

  // <op>.r<round>-t<attempt>.<side>: the run's log and lease are named so.
  std::string run_name(const Slot& s, const std::string& label) const {
    return batch::op_dir_name(o_.ops[s.unit.op].name) + ".r" + std::to_string(s.unit.round) + "-t" +
           std::to_string(s.attempt) + "." + label;
  }

  // What a --resume after a SIGKILL of ab needs to find this run's
  // processes and stop them (orphans.cpp).
  void lease(const Slot& s, const std::string& label) {
    batch::Lease l;
    l.op = o_.ops[s.unit.op].name;
    l.run_dir = s.rel + "/" + label;
    // The --batch-dir the run was given, which its processes carry (executors.cpp).
    l.batch_dir = warm_sides(o_) ? (dir_ / "sides" / label).string() : dir_.string();
    l.device_index = s.device.index;
    l.device_id = s.device.id;
    if (!batch::describe_process(s.exec->pid(), &l)) return;  // already over
    try {
      batch::write_lease(batch::lease_path(dir_.string(), run_name(s, label)), l);
    } catch (const std::exception& e) {
      // Without it a --resume after a SIGKILL of ab cannot stop this run;
      // the run itself is unaffected.
      if (is_out_of_space(e)) out_of_space(e.what());
      std::cerr << "zlcore ab: cannot write the run's lease: " << printable(e.what()) << "\n";
    }
  }

  std::string record_source(const std::string& op) const {
    auto it = record_dir_.find(op);
    return it == record_dir_.end() ? "" : (dir_ / it->second / "A").string();
  }

  void append(const RoundLine& l) {
    lines_.push_back(l);
    for (int attempt = 0; attempt < 2; ++attempt) {
      try {
        append_record((dir_ / "rounds.csv").string(), rounds_csv_record(l));
        return;
      } catch (const std::exception& e) {
        if (!is_out_of_space(e)) throw;
        out_of_space(e.what());  // gives back the reserve: once more
      }
    }
    // Not even that: the line is not lost, it is on stderr; without it in
    // the file, --resume runs this round again.
    const std::string record = rounds_csv_record(l);
    std::cerr << "zlcore ab: no space left to record this line of rounds.csv: "
              << printable(record.substr(0, record.size() - 1)) << "\n";
  }

  void finish_step(Slot& s, const OpOutcome& given) {
    const std::string& label = s.order[s.step];
    const std::string& name = o_.ops[s.unit.op].name;
    std::error_code ec;
    fs::remove(batch::lease_path(dir_.string(), run_name(s, label)), ec);  // nothing left to stop
    OpOutcome out = given;
    // A run that found the disk full did not measure, whatever its status
    // says (its files may be cut short), and ends the A/B.
    if (out.disk_full ||
        (!measured(out.status) && out.status != Status::unsupported && little_room_left(dir_.string()))) {
      if (measured(out.status)) out.status = Status::failed;
      if (out.reason.find("No space left on device") == std::string::npos) {
        out.reason = "No space left on device" + (out.reason.empty() ? "" : "; " + out.reason);
      }
      out_of_space(name + " round " + std::to_string(s.unit.round) + " " + label);
    }
    append({name, s.unit.round, s.attempt, label, batch::to_string(out.status), s.device.index, out.seconds,
            s.rel + "/" + label, out.reason});
    std::cout << printable("[" + std::to_string(s.device.index) + "] " + name + " round " +
                           std::to_string(s.unit.round) +
                           (s.attempt > 1 ? " (attempt " + std::to_string(s.attempt) + ")" : "") + " " + label + ": " +
                           batch::to_string(out.status) + (out.reason.empty() ? "" : " (" + out.reason + ")"))
              << "\n"
              << std::flush;
    s.outcomes.push_back({label, out});
    s.exec.reset();
    ++s.step;
    // A side that did not measure ends the round: the others' numbers would
    // have no partner in it.
    if (interrupted_ || disk_full_ || !measured(out.status) || s.step == s.order.size())
      finish_unit(s);
    else
      start_step(s);
  }

  void finish_unit(Slot& s) {
    s.busy = false;
    const std::string& name = o_.ops[s.unit.op].name;
    bool all_measured = s.step == s.order.size(), unsupported = false, final = false;
    std::string why;
    for (const auto& [label, out] : s.outcomes) {
      if (measured(out.status)) {
        measured_.insert({name, label});
        continue;
      }
      all_measured = false;
      unsupported = unsupported || out.status == Status::unsupported;
      // A preflight failure (an op the suite does not mark, a record that
      // does not replay) comes out the same however often it runs; so does a
      // suite that skips every test of an op this side never measured
      // (hardware or a library its machine or interpreter lacks). A side
      // that measured the op before and skips now skipped for a passing
      // cause: that round runs again.
      final = final || out.status == Status::preflight_failed ||
              (out.status == Status::no_tests && !measured_.count({name, label}));
      why += (why.empty() ? "" : "; ") + label + " " + batch::to_string(out.status) +
             (out.reason.empty() ? "" : ": " + out.reason);
    }
    if (interrupted_) return;                 // not whole; --resume runs it again
    if (disk_full_ && !all_measured) return;  // likewise: a retry would find the same disk
    if (all_measured) {
      append({name, s.unit.round, s.attempt, "*", "done", s.device.index, 0, s.rel, ""});
      if (s.unit.round == 0) record_dir_[name] = s.rel;
      if (s.unit.round > 0 && !caliber_checked_ && !check_caliber_of(s.rel)) refused_ = true;
      return;
    }
    if (unsupported) {
      append({name, s.unit.round, s.attempt, "*", "unsupported", s.device.index, 0, s.rel, why});
      given_up_.insert(name);
      return;
    }
    Unit again = s.unit;
    if (++again.failures <= o_.retries && !final) {
      std::cout << printable(name + " round " + std::to_string(s.unit.round) + " failed (" + why +
                             "); running the round again on every side")
                << "\n";
      todo_.push_front(again);
      return;
    }
    append({name, s.unit.round, s.attempt, "*", "failed", s.device.index, 0, s.rel, why});
    std::cout << printable(name + ": round " + std::to_string(s.unit.round) + " failed " +
                           std::to_string(again.failures) + " times (" + why + "); its other rounds are skipped")
              << "\n";
    given_up_.insert(name);
  }

  int run_loop() {
    std::vector<Slot> slots;
    for (const Device& d : o_.devices) {
      Slot s;
      s.device = d;
      slots.push_back(std::move(s));
    }
    for (;;) {
      if (signals::interrupt_count() > 0 && !interrupted_) {
        interrupted_ = true;
        for (Slot& s : slots) {
          if (s.exec) s.exec->interrupt();
        }
      }
      if (!interrupted_ && !refused_ && !disk_full_) {
        for (Slot& s : slots) {
          if (s.busy) continue;
          auto it = std::find_if(todo_.begin(), todo_.end(), [&](const Unit& u) { return startable(u, slots); });
          if (it == todo_.end()) break;
          const Unit u = *it;
          todo_.erase(it);
          start_unit(s, u);
        }
      }
      // Units of ops given up meanwhile are dropped.
      todo_.erase(std::remove_if(todo_.begin(), todo_.end(),
                                 [&](const Unit& u) { return given_up_.count(o_.ops[u.op].name) > 0; }),
                  todo_.end());
      const bool any_busy = std::any_of(slots.begin(), slots.end(), [](const Slot& s) { return s.busy; });
      if (!any_busy && (interrupted_ || refused_ || disk_full_ || todo_.empty())) break;
      if (!any_busy) {
        // Work is left but none can start: only a record that is gone could
        // block it, which means its op was given up.
        break;
      }
      std::vector<pollfd> fds;
      for (Slot& s : slots) {
        if (!s.exec) continue;
        if (s.exec->output_fd() >= 0) fds.push_back({s.exec->output_fd(), POLLIN, 0});
        if (s.exec->exit_fd() >= 0) fds.push_back({s.exec->exit_fd(), POLLIN, 0});
      }
      ::poll(fds.data(), fds.size(), 200);
      for (Slot& s : slots) {
        if (!s.exec) continue;
        s.exec->pump();
        // The run enforces --timeout itself; this catches a run that cannot.
        if (o_.timeout_s > 0 && s.exec->elapsed() > o_.timeout_s + 30) s.exec->kill(true);
        if (!s.exec->poll_done()) continue;
        const OpOutcome out = s.exec->outcome(interrupted_);
        finish_step(s, out);
      }
    }
    if (interrupted_) return kExitInterrupted;
    if (refused_) return kExitCaliber;
    return kExitOk;
  }

  Options o_;
  fs::path dir_;
  std::string started_;
  std::string caliber_note_;
  std::map<std::string, std::unique_ptr<batch::Executor>> executors_;
  std::vector<RoundLine> lines_;
  std::deque<Unit> todo_;
  std::set<std::string> given_up_;
  std::set<std::pair<std::string, std::string>> measured_;  // (op, side) that measured: a skip there passes
  std::map<std::string, std::string> record_dir_;           // op -> runs/<op>/r0-tN
  bool caliber_checked_ = false;
  bool interrupted_ = false;
  bool refused_ = false;
  DirLock lock_;
  std::unique_ptr<SpaceReserve> reserve_;
  bool disk_full_ = false;
  std::string disk_full_what_;
};

}  // namespace

int run_ab(const Options& o) { return Runner(o).execute(); }

}  // namespace zl::ab
