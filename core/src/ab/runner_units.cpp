// One (op, round) unit on one device: its sides run one after the other in
// the order round_order() gives, each with its lease while it runs and its
// line in rounds.csv when it ends; then the round's line once every side
// measured, or the round again on every side, or the op given up.
#include <algorithm>
#include <filesystem>
#include <iostream>

#include "../batch/lease.hpp"
#include "../util/printable.hpp"
#include "../util/space_reserve.hpp"
#include "runner.hpp"
#include "runner_parts.hpp"
#include "zlcore/ab.hpp"
#include "zlcore/atomic_file.hpp"

namespace fs = std::filesystem;

namespace zl::ab {

using batch::OpOutcome;
using batch::Status;

// A unit may start when its op's record is there (record mode), nothing of
// its op is given up, and, until the caliber check passed, no other
// measured unit is in flight or done unchecked.
bool Runner::startable(const Unit& u, const std::vector<Slot>& slots) const {
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

void Runner::start_unit(Slot& s, const Unit& u) {
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

void Runner::start_step(Slot& s) {
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
std::string Runner::run_name(const Slot& s, const std::string& label) const {
  return batch::op_dir_name(o_.ops[s.unit.op].name) + ".r" + std::to_string(s.unit.round) + "-t" +
         std::to_string(s.attempt) + "." + label;
}

// What a --resume after a SIGKILL of ab needs to find this run's
// processes and stop them (orphans.cpp).
void Runner::lease(const Slot& s, const std::string& label) {
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
    // the run itself is unaffected. A full disk is said once, by the line
    // that ends the A/B (its reason names this file).
    if (is_out_of_space(e)) {
      out_of_space(e.what());
      return;
    }
    std::cerr << "zlcore ab: cannot write the run's lease: " << printable(e.what()) << "\n";
  }
}

std::string Runner::record_source(const std::string& op) const {
  auto it = record_dir_.find(op);
  return it == record_dir_.end() ? "" : (dir_ / it->second / "A").string();
}

void Runner::append(const RoundLine& l) {
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

void Runner::finish_step(Slot& s, const OpOutcome& given) {
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
  std::cout << printable("[" + std::to_string(s.device.index) + "] " + name + " round " + std::to_string(s.unit.round) +
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

void Runner::finish_unit(Slot& s) {
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

}  // namespace zl::ab
