// `zlcore run`: one operator end to end. Preflight, the run directory and its
// identity, the pytest child with the planned plugins and timer, the tuner
// cache (shared or isolated), and the results table.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "zlcore/backend.hpp"
#include "zlcore/plan.hpp"
#include "zlcore/provider.hpp"

namespace zl {

// Names (comma-separated) of further variables a run records in its
// identity's env, beside the knobs it always records (ZL_*, the provider's
// prefixes): a variable of the caller's own that may change a number, which
// compare's caliber check then compares. `zlcore ab` sets it, the same on
// every side, to every variable --a-env and --b-env set.
inline constexpr const char* kCaliberEnv = "ZL_CALIBER_ENV";

struct RunOptions {
  std::string flaggems_dir;
  TargetRequest target;
  std::string shape_mode = "upstream";  // upstream | file
  std::string shape_file;
  // How the mode was chosen, for the header: "--shape-mode", "SHAPE_MODE",
  // "implied by --shape-file", "implied by SHAPE_FILE" or "default".
  std::string shape_mode_from = "default";
  std::string level = "core";
  std::string mode = "kernel";
  std::vector<std::string> dtypes;
  int device = -1;            // -1: the first device the backend offers (visible_devices.hpp)
  std::string autotune_mode;  // tune | record | replay; empty: derived
  std::string replay_from;
  bool force_replay = false;
  // Replay into the tuner cache in use (FLAGGEMS_CACHE_DIR / TRITON_CACHE_DIR,
  // which the caller owns: zlcore ab's sides) instead of an isolated one, so
  // that a warm worker started on that cache may run the replay.
  bool replay_in_cache = false;
  bool isolate_tuner_cache = false;
  // Keep an isolated (or replay) cache after the run instead of dropping it,
  // e.g. to hand exactly these winners and binaries to another tool.
  bool keep_tuner_cache = false;
  // --compile-only: each side runs once so its kernels compile into the
  // shared caches; nothing is measured or tuned (a batch's compile-ahead pass).
  bool compile_only = false;
  std::string python;   // empty: the first of python_candidates() that has pytest
  std::string out_dir;  // empty: runs/<timestamp>-<op>-<backend>
  double timeout_s = 0;
  bool same_process_group = false;
  std::string warmed_on;  // device id that compiled and tuned first (batch)
  std::string batch_dir;
  std::string worker = "cold";
  int worker_ops_before = 0;
  // A warm worker's socket (zlcore batch): the pytest child runs there, unless
  // the op needs cold caches (docs/warm-workers.md). Empty: a fresh process.
  std::string worker_socket;
  std::map<std::string, std::string> knobs;  // ZL_* knobs after flag-over-env
  // Every environment variable that decided a choice (its flag was absent):
  // recorded in the identity, so a variable exported long ago is visible.
  std::map<std::string, std::string> env_choices;
  // Lines the header adds (a variable that was set but did not apply, ...).
  std::vector<std::string> notes;
  std::vector<std::string> extra_pytest_args;
  std::vector<std::string> command_line;
  bool quiet = false;  // no live echo of the child (batch)
};

// Checks that fail before any child starts, in order: flaggems_dir,
// benchmark_file, shape_file (exists and parses as a YAML mapping),
// replay_from. Throws PreflightError. The interpreter is checked by
// choose_python() (python_choice.hpp) right after.
void preflight(const FlagGemsProvider& provider, const TestTarget& target, const RunOptions& opts);

// Runs one operator; returns the process exit code (docs/cli.md).
int run_operator(const Backend& backend, const Plan& plan, const RunOptions& opts);

}  // namespace zl
