// `zlcore run` as stages, in the order run.cpp calls them. Each takes what
// the earlier ones made and returns what the later ones need, so a stage can
// be read, and tested, without the others:
//
//   resolve        the suite, the target, preflight, the Python, the device
//   run_dir        the run directory (refused if it exists) and .child/
//   prepare_caches the tuner caches, the autotune setup, the "before" snapshot
//   archive_shapes shapes.yaml with the level the run uses
//   child_command  the pytest argv and the child's environment
//   identity_start run_identity.json saying `running`, and the header
//   execute        pytest, in a warm worker or a fresh process
//   identity_finish the child's reports, the cache harvest, the status
//
// The order is the contract of run.cpp's opening comment: what fails cheaply
// fails before the child's imports, and the identity is on disk before the
// child starts.
#pragma once

#include <future>
#include <map>
#include <string>
#include <vector>

#include "identity.hpp"
#include "zlcore/autotune.hpp"
#include "zlcore/backend.hpp"
#include "zlcore/plan.hpp"
#include "zlcore/process.hpp"
#include "zlcore/provider.hpp"
#include "zlcore/python_choice.hpp"
#include "zlcore/run.hpp"
#include "zlcore/tuner_cache.hpp"
#include "zlcore/visible_devices.hpp"

namespace zl::run_stage {

// resolve: everything decided before anything is written.
struct Resolved {
  bool embedded = false;  // no suite given: the example suite installed with zlcore
  FlagGemsProvider provider{""};
  TestTarget target;
  RunOptions options;  // the caller's, with paths made absolute and pins added
  PythonChoice python;
  VisibleDevices visible;
  Device device;
  std::string started_at;  // UTC; `started` + `seconds` is when the run ended
};
// Throws PreflightError or UsageError (docs/cli.md, exit codes 3 and 2).
Resolved resolve(const Backend& backend, const RunOptions& opts);

// The device to pin among those the backend offers (index -1: the first).
Device pick_device(const Backend& backend, const VisibleDevices& visible, int index);

// "YYYYmmdd-HHMMSS" in UTC, the prefix of run directories and run ids.
std::string stamp();
// The op as one file-name component: no '/', no "..", at most 120 bytes.
std::string safe_component(const std::string& op);
// Creates `opts.out_dir` (default runs/<run_id>), refusing one
// that exists: a rerun must never overwrite an earlier one's numbers.
std::string make_run_dir(const RunOptions& opts, const std::string& run_id);

// prepare_caches: the tuner caches the child gets, the autotune setup (a
// replay's cache starts with the recorded winners) and what they held before.
struct Caches {
  CacheDirs dirs;
  AutotuneSetup autotune;
  CacheSnapshot before;
};
Caches prepare_caches(const RunOptions& o, const std::string& run_dir);

// archive_shapes: writes shapes.yaml; returns the source file and its hash
// (empty when the suite has no shape file).
struct Shapes {
  std::string source;
  std::string sha256;
};
Shapes archive_shapes(const Resolved& r, const std::string& run_dir);

// child_command: argv only (no shell), pytest's own options after the
// planned plugins; the environment the child contract names
// (docs/run-directory.md, "Environment zlcore gives the pytest child").
struct ChildCommand {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
};
ChildCommand child_command(const Backend& backend, const Plan& plan, const Resolved& r, const Caches& caches,
                           const std::string& run_dir);

// identity_start: every field known before the child runs.
void identity_start(Identity& id, const Backend& backend, const Plan& plan, const Resolved& r, const Caches& caches,
                    const Shapes& shapes, const ChildCommand& cmd, const std::string& run_id);
// The run header as printed and kept in header.txt (control characters escaped).
std::string run_header(const Backend& backend, const Plan& plan, const Resolved& r, const Caches& caches,
                       const Shapes& shapes, const std::string& run_id, const std::string& run_dir);

// execute: in the warm worker of `o.worker_socket` when the op may run warm,
// else in a fresh process; records the worker's facts in the identity.
ChildResult execute(const ChildCommand& cmd, const RunOptions& o, const Caches& caches, const std::string& cwd,
                    const std::string& log_path, Identity& id, const std::string& identity_path);

// identity_finish: merges the plugins' reports, harvests the caches, decides
// the status and writes the final identity; returns the exit code.
struct Finished {
  std::string status;
  int exit_code = 0;
};
Finished identity_finish(Identity& id, const Resolved& r, Caches& caches, const GitInfo& git, const ChildResult& child,
                         const std::string& run_dir, const std::string& log_path, double t_start);

}  // namespace zl::run_stage
