// Stage `execute`: pytest in a warm worker when the op may run warm, else in
// a fresh process. An interrupt that arrived before the child started ends
// the run `interrupted` without starting anything.
#include "stages.hpp"
#include "worker_client.hpp"
#include "zlcore/signals.hpp"

namespace zl::run_stage {

namespace key = identity::key;

namespace {

ChildResult interrupted_before_start() {
  ChildResult r;
  r.started = true;
  r.interrupted = true;
  return r;
}

// Why an op that has a warm worker must still run in a fresh process: a
// worker imported the suite (and with it read the cache directories and
// filled its tuner caches) before this op. Empty: it may run warm. A replay
// into the cache in use (--replay-in-cache) may: the worker was started on
// that cache, LibTuner reads its rows when a key is first looked up, the
// worker drops every in-memory winner between ops, and the plugin serves the
// plain-autotune winners from the records.
std::string cold_reason(const Caches& caches) {
  if (caches.dirs.isolated) return "isolated tuner cache: needs a process that imported with its own cache dirs";
  const std::string& mode = caches.autotune.mode;
  if (mode == "record" || (mode == "replay" && !caches.autotune.in_cache))
    return "autotune " + mode + ": needs cold tuner caches";
  return "";
}

}  // namespace

ChildResult execute(const ChildCommand& cmd, const RunOptions& o, const Caches& caches, const std::string& cwd,
                    const std::string& log_path, Identity& id, const std::string& identity_path) {
  if (!o.worker_socket.empty()) {
    std::string cold_because = cold_reason(caches);
    WorkerSession worker;
    std::string error;
    const double wait_from = monotonic_seconds();
    if (cold_because.empty() && !worker.connect(o.worker_socket, o.timeout_s, &error)) {
      cold_because = "no warm worker: " + error;
    }
    // A worker's tuner store was fixed at its imports: one started for
    // compile-only runs keeps unbenchmarked winners, another persists them.
    if (cold_because.empty() && worker.compile_only() != o.compile_only) {
      cold_because = o.compile_only ? "compile only: the worker was not started for compile-only runs"
                                    : "the worker was started for compile-only runs";
    }
    // A worker the batch just started is still importing the suite's
    // libraries while the op waits here: that wait is the op's imports.
    if (cold_because.empty()) id.set(key::worker_wait_seconds, monotonic_seconds() - wait_from);
    if (cold_because.empty()) {
      id.set(key::worker_kind, "warm");
      id.set(key::worker_ops_before, int64_t{worker.ops_before()});
      id.set(key::worker_pid, int64_t{worker.pid()});
      id.set(key::worker_standby, worker.standby());
      id.write(identity_path);
      const std::vector<std::string> pytest_args(cmd.argv.begin() + 3, cmd.argv.end());  // after `python -m pytest`
      ChildResult child = signals::interrupt_count() > 0 ? interrupted_before_start()
                                                         : worker.run(pytest_args, cmd.env, cwd, log_path, o.timeout_s);
      id.set(key::worker_healthy, worker.healthy());
      if (!worker.healthy()) id.set(key::worker_unhealthy_reason, worker.health_reason());
      // The device memory the worker hands the next op (docs/warm-workers.md).
      const WorkerSession::Memory& m = worker.memory_after();
      if (m.baseline_allocated >= 0) id.set(key::worker_memory_baseline_bytes, m.baseline_allocated);
      if (m.allocated >= 0) id.set(key::worker_memory_after_bytes, m.allocated);
      if (m.reserved >= 0) id.set(key::worker_memory_reserved_after_bytes, m.reserved);
      return child;
    }
    id.set(key::worker_kind, "cold");
    id.set(key::worker_ops_before, int64_t{0});
    id.set(key::worker_reason, cold_because);
    id.write(identity_path);
  }
  if (signals::interrupt_count() > 0) return interrupted_before_start();
  ChildSpec spec;
  spec.argv = cmd.argv;
  spec.env_set = cmd.env;
  spec.cwd = cwd;
  spec.log_path = log_path;
  spec.echo = !o.quiet;
  spec.echo_printable = true;
  spec.new_group = !o.same_process_group;
  return run_child(spec, o.timeout_s);
}

}  // namespace zl::run_stage
