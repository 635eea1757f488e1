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
// runner.hpp says which file holds which of the runner's jobs.
#include <poll.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <set>

#include "../util/clock.hpp"
#include "../util/printable.hpp"
#include "../util/space_reserve.hpp"
#include "runner.hpp"
#include "runner_parts.hpp"
#include "zlcore/ab.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/signals.hpp"

namespace fs = std::filesystem;

namespace zl::ab {

using batch::OpOutcome;

int Runner::execute() {
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

std::string Runner::devices_text() const {
  std::string t;
  for (const Device& d : o_.devices) t += (t.empty() ? "" : ",") + std::to_string(d.index);
  return t.empty() ? "none (nothing to run)" : t;
}

// Rounds already whole (or given up) on an earlier invocation stay so.
void Runner::plan_units() {
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

std::string Runner::first_done_round() const {
  for (const RoundLine& l : lines_) {
    if (l.side == "*" && l.status == "done" && l.round > 0) return l.run_dir;
  }
  return "";
}

bool Runner::check_caliber_of(const std::string& rel) {
  caliber_checked_ = true;
  const CaliberVerdict v = check_round_caliber(dir_ / rel, o_.compare.expect_diff);
  caliber_note_ = v.summary;
  std::cout << v.text << std::flush;
  write_identity("running");
  return v.fair;
}

int Runner::refuse() {
  write_identity("refused");
  std::cerr << "CALIBER_MISMATCH: the sides differ where --expect-diff does not say so (see above); nothing more "
               "is measured. Declare the difference with --expect-diff KEY and continue with --resume\n";
  return kExitCaliber;
}

int Runner::run_loop() {
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

int run_ab(const Options& o) { return Runner(o).execute(); }

}  // namespace zl::ab
