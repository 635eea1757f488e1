// One operator end to end, as the stages of stages.hpp. The order matters:
// everything that can fail cheaply (preflight, the run directory) fails
// before the ~10 s of imports the child pays; the identity is on disk
// (status running) before the child starts, so even a SIGKILL of zlcore
// leaves a run directory that says so.
#include <filesystem>
#include <future>
#include <iostream>
#include <memory>
#include <random>

#include "../util/clock.hpp"
#include "../util/printable.hpp"
#include "../util/space_reserve.hpp"
#include "device_facts.hpp"
#include "results_table.hpp"
#include "stages.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/signals.hpp"

namespace zl {
namespace {

namespace fs = std::filesystem;
namespace key = identity::key;

std::string short_random() {
  std::random_device rd;
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04x", rd() & 0xffff);
  return buf;
}

// A run directory whose run failed before its identity was written (a replay
// source refused, a cache that could not be made) holds nothing anyone needs,
// and left in place it would refuse the same --out on the next try.
struct HalfMadeDir {
  std::string dir;
  bool keep = false;
  ~HalfMadeDir() {
    std::error_code ec;
    if (!keep) fs::remove_all(dir, ec);
  }
};

// What the run has made so far, for the one place that handles a failure
// after the identity said `running` (run_operator, below).
struct RunState {
  Identity id;
  std::string identity_path;  // set once the first identity is on disk
  std::string child_dir;
  std::unique_ptr<SpaceReserve> reserve;
  double t_start = 0;
  bool quiet = false;
  std::string run_dir;
};

int run_operator_steps(const Backend& backend, const Plan& plan, const RunOptions& opts, RunState& state) {
  using namespace run_stage;
  const Resolved r = resolve(backend, opts);
  const RunOptions& o = r.options;

  const std::string run_id = stamp() + "-" + safe_component(r.target.op) + "-" + backend.name() + "-" + short_random();
  const std::string run_dir = make_run_dir(o, run_id);
  HalfMadeDir half_made{run_dir};
  const fs::path rd(run_dir);
  // The final identity must be writable even if pytest fills the disk.
  state.reserve = std::make_unique<SpaceReserve>((rd / ".space_reserve").string(), 128 * 1024);
  state.child_dir = (rd / ".child").string();
  state.run_dir = run_dir;
  fs::create_directories(state.child_dir);

  // FlagGems' git state is only needed for the identity: ask git while the
  // child runs, not before it.
  auto git = std::async(std::launch::async, [&r] { return r.provider.git_info(); });

  Caches caches = prepare_caches(o, run_dir);
  const Shapes shapes = archive_shapes(r, run_dir);
  const ChildCommand cmd = child_command(backend, plan, r, caches, run_dir);

  caches.autotune.run_id = run_id;
  Identity& id = state.id;
  identity_start(id, backend, plan, r, caches, shapes, cmd, run_id);
  record_device_start(id, backend, r.device);  // ABI 1.2 attributes and state (device_facts.hpp)
  const std::string identity_path = (rd / "run_identity.json").string();
  id.write(identity_path);
  half_made.keep = true;  // from here on the directory says what happened
  state.identity_path = identity_path;

  const std::string header = run_header(backend, plan, r, caches, shapes, run_id, run_dir);
  write_file_atomic((rd / "header.txt").string(), header);
  if (!o.quiet) std::cout << header << std::flush;

  const std::string log_path = (rd / "pytest.log").string();
  const ChildResult child = execute(cmd, o, caches, r.provider.root(), log_path, id, identity_path);
  record_device_end(id, backend, r.device);
  const Finished end = identity_finish(id, r, caches, git.get(), child, run_dir, log_path, state.t_start);

  if (!o.quiet) {
    std::cout << "\n" << printable_lines(format_results_table((rd / "results.jsonl").string()));
    std::cout << "status " << end.status << " (exit " << end.exit_code << ")  " << printable(run_dir) << "\n";
  }
  return end.exit_code;
}

}  // namespace

int run_operator(const Backend& backend, const Plan& plan, const RunOptions& opts) {
  // A Ctrl-C (a batch passes it to the op's process group) is counted, not
  // fatal, from the start: however pytest runs, cold or in a warm worker,
  // the run records `interrupted` in its identity and removes .child/.
  signals::install();
  RunState state;
  state.t_start = monotonic_seconds();
  state.quiet = opts.quiet;
  try {
    return run_operator_steps(backend, plan, opts, state);
  } catch (const std::exception& e) {
    if (state.identity_path.empty()) throw;  // nothing on disk says `running`
    // The identity says `running`; whatever failed since (most likely the
    // disk filled up: pytest's output, kernels.csv, the records), it must
    // not keep saying so. A full disk gets the room kept for this.
    const bool full = is_out_of_space(e);
    if (state.reserve) state.reserve->release();
    const std::string reason = full ? std::string("No space left on device: ") + e.what() : e.what();
    Identity& id = state.id;
    id.set(key::status, "failed");
    id.set(key::exit_code, int64_t{kExitFailed});
    id.set(key::reason, reason);
    id.set(key::error, reason);
    if (full) id.set(key::disk_full, true);
    id.set(key::ended, utc_now_iso());
    id.set(key::seconds, monotonic_seconds() - state.t_start);
    try {
      id.write(state.identity_path);
    } catch (const std::exception&) {
      // Nothing left to write with: the batch's row says what happened.
    }
    std::error_code ec;
    fs::remove_all(state.child_dir, ec);
    if (!full) throw;
    if (!state.quiet) std::cout << "status failed (exit 1)  " << printable(state.run_dir) << "\n";
    std::cerr << "zlcore: " << printable(reason) << "\n";
    return kExitFailed;
  }
}

}  // namespace zl
