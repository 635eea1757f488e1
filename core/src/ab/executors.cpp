#include <filesystem>
#include <set>

#include "../util/text.hpp"

#include "runner_parts.hpp"
#include "zlcore/run.hpp"

namespace fs = std::filesystem;

namespace zl::ab {

bool warm_sides(const Options& o) { return o.winners == Winners::own || o.warm; }

std::map<std::string, std::string> side_env(const Options& o, const std::string& label, const std::string& ab_dir) {
  const SideSpec& side = label == "B" ? o.b : o.a;
  std::map<std::string, std::string> env = side.env;
  // Every variable either side sets is part of each side's caliber: each run
  // records the value it ran with (or none), so a difference the user did
  // not declare with --expect-diff stops the A/B at the caliber check.
  std::set<std::string> named;
  for (const SideSpec* s : {&o.a, &o.b}) {
    for (const auto& [k, v] : s->env) named.insert(k);
  }
  if (!named.empty()) env[kCaliberEnv] = text::join(std::vector<std::string>(named.begin(), named.end()), ",");
  // Every side of every round, cold or warm, shares one file; a side given
  // its own in --a-env/--b-env keeps it (the caliber check shows the difference).
  if (o.sticky_sustained && !env.count(kSustainedRowsEnv)) {
    env[kSustainedRowsEnv] = (fs::path(ab_dir) / kSustainedRowsFile).string();
  }
  if (!warm_sides(o)) return env;  // every run replays into an isolated cache of its own
  // Each side's warm workers import on a cache of its own that outlives its
  // rounds and is shared with nobody: not the user's, not the other side's.
  // own: the side tunes into it once. --warm: every round replays into it
  // (--replay-in-cache).
  const fs::path cache = fs::path(ab_dir) / "tuner" / label;
  env["FLAGGEMS_CACHE_DIR"] = (cache / "flaggems").string();
  env["TRITON_CACHE_DIR"] = (cache / "triton").string();
  // A replay takes every plain-autotune winner from its records (the worker
  // forgets in-memory winners between ops). Triton's disk autotune cache
  // would instead serve a winner an earlier op's replay left for the same
  // kernel and key, which that op's record may not hold.
  const bool replays = o.winners != Winners::own || !side.replay_from.empty();
  if (replays && !env.count("TRITON_CACHE_AUTOTUNING")) env["TRITON_CACHE_AUTOTUNING"] = "0";
  return env;
}

std::map<std::string, std::unique_ptr<batch::Executor>> make_executors(const Options& o, const std::string& ab_dir) {
  std::map<std::string, std::unique_ptr<batch::Executor>> out;
  std::vector<std::string> labels = {"A", "B"};
  if (o.calibrate) labels.push_back("A2");
  for (const std::string& label : labels) {
    const SideSpec& side = label == "B" ? o.b : o.a;
    batch::ColdExecutorConfig c;
    c.zlcore_exe = fs::read_symlink("/proc/self/exe").string();
    c.backend_dir = o.backend_dir;
    c.backend = o.backend;
    c.batch_dir = ab_dir;
    c.run.flags = o.run_flags;
    c.run.flags.emplace_back("--flaggems-dir", side.suite_root);
    c.run.flags.emplace_back("--python", side.python);
    c.run.dtypes = o.dtypes;
    c.env_set = side_env(o, label, ab_dir);
    if (!warm_sides(o)) {
      out[label] = batch::make_cold_executor(c);
      continue;
    }
    // Round 0's record run isolates its cache, and so runs cold on its own
    // (docs/warm-workers.md).
    batch::WarmExecutorConfig w;
    w.run = c;
    // The worker log directory is per executor: two sides' workers on one
    // device must not share device<N>-<gen>.log.
    w.run.batch_dir = (fs::path(ab_dir) / "sides" / label).string();
    fs::create_directories(w.run.batch_dir);
    w.python = side.python;
    w.suite_root = side.suite_root;
    w.visibility_env = o.visibility_env;
    w.framework_vendor = o.framework_vendor;
    // A side whose worker died fails its round, which then runs again on
    // every side (runner.cpp): a cold rerun of that side alone would pair a
    // fresh process with warm ones.
    w.rerun_cold = false;
    out[label] = batch::make_warm_executor(w);
  }
  return out;
}

}  // namespace zl::ab
