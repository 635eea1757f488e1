// Orphans: runs an earlier batch started and that outlived it (leftover
// leases in leases/ naming live processes). Each is waited for or killed
// before this batch starts anything, and a run that ended on its own has its
// row recorded from what it wrote.
#include <unistd.h>

#include <algorithm>

#include "../util/clock.hpp"
#include "../util/json.hpp"
#include "../util/json_read.hpp"
#include "../util/printable.hpp"
#include "../util/text.hpp"
#include "batch_run.hpp"
#include "outcome.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/process.hpp"
#include "zlcore/signals.hpp"

namespace fs = std::filesystem;

namespace zl::batch {

// Ops an earlier batch started and that still run (it was killed, they were
// not): a rerun must not share their device or their run directory. Each
// is waited for (--orphans wait, the default: what it measures is kept) or
// killed (--orphans kill), with a line saying which. False when a Ctrl-C
// ended the wait.
bool BatchRun::settle_orphans() {
  for (const std::string& file : lease_files(dir_.string())) {
    if (!settle_lease(file)) return false;
  }
  // An op that is settled now, or blocked by a run that will not die, is
  // not started.
  std::set<std::string> settled;
  for (const OpRow& r : rows_) {
    if (is_settled(r.status)) settled.insert(r.op);
  }
  todo_.erase(std::remove_if(todo_.begin(), todo_.end(),
                             [&](size_t i) { return settled.count(o_.ops[i].name) || blocked_.count(o_.ops[i].name); }),
              todo_.end());
  return true;
}

// One lease file: dropped when it does not read, names another batch or
// names processes that are gone; else its run is waited for or killed.
// False when a Ctrl-C ended the wait.
bool BatchRun::settle_lease(const std::string& file) {
  std::error_code ec;
  std::string why;
  const std::optional<Lease> lease = read_lease(file, &why);
  if (!lease) {
    say("ignoring " + fs::path(file).filename().string() + " in leases/: " + why);
    fs::remove(file, ec);
    return true;
  }
  if (!lease_names_dir(*lease, dir_.string())) {
    say(foreign_lease_line(file, *lease));
    fs::remove(file, ec);
    return true;
  }
  std::vector<pid_t> alive = live_processes(*lease);
  if (alive.empty()) {
    fs::remove(file, ec);
    return true;
  }
  const std::string who = "op " + lease->op + ": " + lease_words(*lease) +
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
      say("op " + lease->op + ": still running after " + std::to_string(static_cast<int>(limit)) + " s; killing it");
  }
  if (!alive.empty()) alive = kill_and_wait(*lease, alive);
  if (!alive.empty()) {
    // Never run an op again beside a run of it that will not die, and
    // never reuse its directory: leave both, and the lease, for later.
    say("op " + lease->op + ": its earlier run is still alive after SIGKILL (pid " + std::to_string(alive[0]) +
        "); not run in this session");
    blocked_.insert(lease->op);
    return true;
  }
  fs::remove(file, ec);
  if (waited && lease->pass == "run") adopt(*lease);
  return true;
}

// The row of a run that ended after its batch was killed, from what it
// wrote itself; nothing when it never wrote a final status (then the op
// simply runs again).
void BatchRun::adopt(const Lease& lease) {
  // Only where this batch would have put that op's run, and only an op of
  // this batch: a lease edited to name another directory would record that
  // directory's outcome as this op's row.
  const bool ours = std::any_of(o_.ops.begin(), o_.ops.end(), [&](const OpSpec& op) { return op.name == lease.op; });
  if (!ours || lease.run_dir != "runs/" + op_dir_name(lease.op)) {
    say("op " + printable(lease.op) + ": its earlier run's lease names " + printable(lease.run_dir) +
        ", not where this batch keeps that op's run; not recorded, the op runs again");
    return;
  }
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

}  // namespace zl::batch
