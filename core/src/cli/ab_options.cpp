// `zlcore ab`'s flags, and the command line into ab::Options.
#include <algorithm>
#include <filesystem>
#include <iostream>

#include "../util/printable.hpp"
#include "../util/text.hpp"
#include "ab_options.hpp"
#include "plan_options.hpp"
#include "run_options.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/l2_policy.hpp"
#include "zlcore/python_choice.hpp"
#include "zlcore/visible_devices.hpp"

namespace fs = std::filesystem;

namespace zl::cli {
namespace {

// A name the environment can carry and a shell or a record line can show:
// a newline or '=' in it would forge another variable.
bool valid_env_name(const std::string& name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// `zlcore run` flags both sides get alike.
const char* const kSharedRunFlags[] = {"level", "mode", "timer", "enable-cudagraph", "direct-repeat"};

int parse_positive(const po::variables_map& vm, const char* flag, int fallback, int min) {
  if (!vm.count(flag)) return fallback;
  const std::string text = vm[flag].as<std::string>();
  try {
    size_t used = 0;
    const int v = std::stoi(text, &used);
    if (used == text.size() && v >= min && v <= 10000) return v;
  } catch (const std::exception&) {
  }
  throw UsageError(std::string("ab: --") + flag + " '" + text + "' is not an integer from " + std::to_string(min) +
                   " to 10000");
}

std::string existing_dir(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) throw UsageError("ab: " + what + " " + path + " is not a directory");
  return fs::absolute(path).lexically_normal().string();
}

ab::SideSpec side_from(const po::variables_map& vm, const std::string& x, const std::string& default_python) {
  ab::SideSpec s;
  s.label = x == "a" ? "A" : "B";
  if (!vm.count(x)) throw UsageError("ab: --" + x + " DIR is required: the FlagGems directory of side " + s.label);
  s.suite_root = existing_dir(vm[x].as<std::string>(), "--" + x);
  s.python = vm.count(x + "-python") ? vm[x + "-python"].as<std::string>() : default_python;
  if (vm.count(x + "-env")) {
    for (const std::string& kv : vm[x + "-env"].as<std::vector<std::string>>()) {
      const size_t eq = kv.find('=');
      if (eq == std::string::npos || !valid_env_name(kv.substr(0, eq))) {
        throw UsageError("ab: --" + x + "-env '" + printable(kv) +
                         "' is not NAME=VALUE with NAME letters, digits and '_', not starting with a digit");
      }
      s.env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  }
  if (vm.count(x + "-replay-from")) s.replay_from = fs::absolute(vm[x + "-replay-from"].as<std::string>()).string();
  return s;
}

std::string env_text(const std::map<std::string, std::string>& env) {
  std::string out;
  for (const auto& [k, v] : env) out += (out.empty() ? "" : " ") + k + "=" + v;
  return out;
}

// Which winners each side runs with (--winners, --same-winners), what a
// sample is (--samples) and how the graph timer keeps its sustained
// procedure (--sustained).
void set_methods(const po::variables_map& vm, ab::Options& o) {
  if (vm.count("same-winners") && vm.count("winners"))
    throw UsageError("ab: give --same-winners or --winners, not both");
  if (vm.count("same-winners")) {
    o.winners = ab::Winners::given;
    o.same_winners = existing_dir(vm["same-winners"].as<std::string>(), "--same-winners");
  } else if (vm.count("winners")) {
    const std::string w = vm["winners"].as<std::string>();
    if (w == "own")
      o.winners = ab::Winners::own;
    else if (w != "record")
      throw UsageError("ab: --winners '" + w + "' is not allowed; use record or own");
  }

  if (vm.count("samples")) {
    const std::string v = vm["samples"].as<std::string>();
    if (v == "placements")
      o.samples = ab::Samples::placements;
    else if (v != "rounds")
      throw UsageError("ab: --samples '" + v + "' is not allowed; use rounds or placements");
  }

  if (vm.count("sustained")) {
    const std::string v = vm["sustained"].as<std::string>();
    if (v == "per-run")
      o.sticky_sustained = false;
    else if (v != "sticky")
      throw UsageError("ab: --sustained '" + v + "' is not allowed; use sticky or per-run");
  }
}

// The report's verdict settings: --threshold, --expect-diff, --noise-floor.
void set_report(const po::variables_map& vm, ab::Options& o) {
  const double threshold_pct = vm["threshold"].as<double>();
  if (!(threshold_pct >= 0 && threshold_pct < 100)) throw UsageError("ab: --threshold is a percentage in [0, 100)");
  o.compare.threshold = threshold_pct / 100.0;
  if (vm.count("expect-diff")) o.compare.expect_diff = vm["expect-diff"].as<std::vector<std::string>>();
  if (vm.count("noise-floor")) {
    try {
      o.compare.noise_floor =
          std::make_shared<const compare::NoiseFloor>(compare::load_noise_floor(vm["noise-floor"].as<std::string>()));
    } catch (const UsageError& e) {
      // compare's reader names compare; the user typed ab.
      const std::string why = e.what();
      throw UsageError(why.rfind("compare: ", 0) == 0 ? "ab: " + why.substr(9) : why);
    }
  }
}

// --devices (default: the first device) against the devices the backend
// offers here, within a visibility variable already set. None on a resume
// is not an error until a round is left to run.
void add_devices(const Backend& backend, const po::variables_map& vm, ab::Options& o) {
  const VisibleDevices visible = visible_devices(backend);
  if (visible.query.devices.empty()) {
    const std::string why = "backend '" + backend.name() + "' reports no devices: " +
                            (visible.query.reason.empty() ? visible.query.error : visible.query.reason);
    if (!o.resume) throw PreflightError("device", why);
    o.no_devices_reason = why;
  }
  std::vector<int> valid;
  for (const Device& d : visible.query.devices) valid.push_back(d.index);
  if (!valid.empty()) {
    const std::string spec = vm.count("devices") ? vm["devices"].as<std::string>() : std::to_string(valid.front());
    for (int index : batch::parse_device_list(spec, valid, "--devices")) {
      for (const Device& d : visible.query.devices) {
        if (d.index == index) o.devices.push_back(d);
      }
    }
  }
}

// What --resume must find unchanged. Rounds, ops, devices, retries and the
// report's options are not here: more rounds or ops extend an A/B, and the
// report is recomputed from the rounds on every invocation.
void record_settings(const po::variables_map& vm, ab::Options& o) {
  o.settings["backend"] = o.backend;
  for (const ab::SideSpec* s : {&o.a, &o.b}) {
    const std::string p = s->label == "A" ? "a" : "b";
    o.settings[p] = s->suite_root;
    o.settings[p + "-python"] = s->python;
    o.settings[p + "-env"] = env_text(s->env);
    o.settings[p + "-replay-from"] = s->replay_from;
  }
  o.settings["winners"] = o.winners == ab::Winners::own ? "own" : o.winners == ab::Winners::given ? "given" : "record";
  o.settings["same-winners"] = o.same_winners;
  o.settings["calibrate"] = o.calibrate ? "1" : "0";
  // Only when given, so that an A/B begun before the flag existed resumes.
  if (o.warm && o.winners != ab::Winners::own) o.settings["warm"] = "1";
  // The same: an A/B measured before sticky existed resumes with --sustained per-run.
  if (o.sticky_sustained) o.settings["sustained"] = "sticky";
  for (const auto& [flag, value] : o.run_flags) o.settings[flag.substr(2)] = value.empty() ? "1" : value;
  o.settings["dtypes"] = vm.count("dtypes") ? vm["dtypes"].as<std::string>() : "";
}

}  // namespace

po::options_description ab_description() {
  po::options_description desc(
      "ab: an A/B of two FlagGems directories (or interpreters, or environments), the sides interleaved round by "
      "round on each device; speedup = A ms / B ms, FASTER means B is faster (docs/ab.md)");
  desc.add_options()("backend", po::value<std::string>(), "backend name or alias (env ZL_BACKEND)")(
      "a", po::value<std::string>(), "side A: its FlagGems directory")(
      "b", po::value<std::string>(), "side B: its FlagGems directory (may be the same as A's)")(
      "a-python", po::value<std::string>(), "side A's Python (default: the one chosen as for run)")(
      "b-python", po::value<std::string>(), "side B's Python")(
      "a-env", po::value<std::vector<std::string>>()->composing(),
      "NAME=VALUE set for every run of side A (repeatable); part of the caliber: a value B does not share needs "
      "--expect-diff NAME")("b-env", po::value<std::vector<std::string>>()->composing(),
                            "NAME=VALUE set for every run of side B (repeatable); part of the caliber, as for --a-env")(
      "a-replay-from", po::value<std::string>(), "side A replays this record in every round instead")(
      "b-replay-from", po::value<std::string>(), "side B replays this record in every round instead")(
      "same-winners", po::value<std::string>(),
      "every round of both sides replays this run directory's record (no record round)")(
      "winners", po::value<std::string>(),
      "record (default: A records once per op, both replay) or own (each side tunes in its own cache, warm workers)")(
      "ops", po::value<std::string>(), "ops a,b,c (the suite's marks)")("ops-file", po::value<std::string>(),
                                                                        "ops file, as for batch")(
      "rounds", po::value<std::string>(), "rounds per op (default 6; --resume may raise it)")(
      "samples", po::value<std::string>(),
      "a row's test values: rounds (default: one per round, the mean of its placements) or placements (every round's "
      "placements pooled)")(
      "calibrate", "every round also runs side A a second time (A2): the A/A of this run and its false-verdict rate")(
      "warm",
      "record / --same-winners: replay in one warm worker per side and device instead of a fresh process per run "
      "(cheaper; each side's rounds then share one process)")(
      "sustained", po::value<std::string>(),
      "sticky (default: a row's side that takes the timer's sustained procedure in one run takes it in every later "
      "run of the A/B) or per-run (each run decides)")(
      "devices", po::value<std::string>(),
      "device indices: all, 0,2 or ranges like 0-3; rounds spread over them (default: the first device only)")(
      "out", po::value<std::string>(), "the A/B directory (required)")(
      "resume", "continue the rounds in --out that are not whole")(
      "retries", po::value<std::string>(),
      "a round that fails on a side runs again on every side this many times (default 1; some never: docs/ab.md)")(
      "timeout", po::value<std::string>(), "seconds per run before it is killed (default 600)")(
      "expect-diff", po::value<std::vector<std::string>>()->composing(),
      "a caliber key the A/B is about (as compare); repeatable")("threshold", po::value<double>()->default_value(2.0),
                                                                 "verdict threshold in percent (as compare)")(
      "noise-floor", po::value<std::string>(),
      "a noise-floor file from compare --calibrate --out (or an earlier ab's aa.json)")("fail-on-regression",
                                                                                        "exit 1 when a row is SLOWER")(
      "launcher", po::value<std::string>(),
      "local (default) or slurm: the ops split over shards, each a "
      "whole A/B on its own allocation (docs/ab.md, \"Slurm\")")("level", po::value<std::string>(),
                                                                 "core or comprehensive (env BENCH_LEVEL)")(
      "mode", po::value<std::string>(), "FlagGems' --mode")("dtypes", po::value<std::string>(), "dtypes a,b")(
      "direct-repeat", po::value<std::string>(), "repeats of the direct timer (env ZL_DIRECT_REPEAT)")(
      "force-replay", "replay even when the Triton version or kernel source differs (a kernel edited on side B)")(
      // --launcher slurm, as for batch (docs/slurm.md); the job scripts give --plan with --shard or --merge.
      "shards", po::value<std::string>(), "slurm: number of shards, one array task each (default 1)")(
      "partition", po::value<std::string>(), "slurm: the partition to submit to")(
      "gpus-per-shard", po::value<std::string>(), "slurm: GPUs each shard asks for (--gres=gpu:N)")(
      "time", po::value<std::string>(), "slurm: time limit per shard (sbatch --time)")(
      "sbatch-arg", po::value<std::vector<std::string>>()->composing(),
      "slurm: one more sbatch argument, as is (repeatable)")(
      "wait", "slurm: block until the shards are merged, print the report, exit as the merged A/B")(
      "dry-run", "slurm: print the plan and the sbatch scripts, submit nothing")(
      "plan", po::value<std::string>(), "slurm (in the job): the plan.json the job takes the A/B's flags from")(
      "shard", po::value<std::string>(), "slurm (in the job): run shard i of the plan")(
      "merge", "slurm (in the job): merge the shards into the one report");
  add_plan_options(desc);
  add_help(desc);
  return desc;
}

ab::Options ab_options(Context& ctx, const Backend& backend, const po::variables_map& vm, bool resolve_devices) {
  make_plan(backend, vm);  // a bad --timer fails here once
  ab::Options o;
  o.backend = backend.name();
  o.backend_dir = ctx.backend_dir();
  if (!vm.count("out")) throw UsageError("ab: --out DIR is required (the A/B directory)");
  o.out_dir = vm["out"].as<std::string>();
  if (o.out_dir.empty()) throw UsageError("ab: --out: an empty path; name the A/B directory");
  o.resume = vm.count("resume") > 0;
  o.rounds = parse_positive(vm, "rounds", 6, 1);
  o.retries = parse_positive(vm, "retries", 1, 0);
  o.calibrate = vm.count("calibrate") > 0;
  o.warm = vm.count("warm") > 0;
  o.timeout_s = parse_positive(vm, "timeout", 600, 1);
  o.fail_on_regression = vm.count("fail-on-regression") > 0;

  const std::string python = vm.count("a-python") && vm.count("b-python")
                                 ? ""
                                 : choose_python("", modules_for_device(backend.torch_device())).command;
  o.a = side_from(vm, "a", python);
  o.b = side_from(vm, "b", python);
  set_methods(vm, o);

  set_report(vm, o);

  const auto flag = [&vm](const char* name) { return vm.count(name) ? &vm[name].as<std::string>() : nullptr; };
  o.ops = batch::ops_from_flags(flag("ops"), flag("ops-file"), "ab");
  // `all` in an ops file is the same request as `--ops all`: every mark,
  // which an A/B does not take (no suite has a mark named so).
  const bool names_all = std::any_of(o.ops.begin(), o.ops.end(), [](const batch::OpSpec& s) { return s.op == "all"; });
  if (batch::needs_expansion(o.ops) || names_all) {
    throw UsageError("ab: --ops names ops one by one (the suite's marks); `all` and benchmark files are for batch");
  }

  const std::string l2 = plan_knobs(vm).at(kL2Knob);
  check_l2_mode(l2, vm.count("mode") ? vm["mode"].as<std::string>() : "kernel", l2_given(vm));
  if (resolve_devices) add_devices(backend, vm, o);
  for (const Device& d : o.devices) check_l2_device(l2, backend.name(), d, l2_given(vm));
  o.visibility_env = backend.visibility_env();
  o.framework_vendor = backend.framework_vendor();

  for (const char* flag : kSharedRunFlags) {
    if (vm.count(flag)) o.run_flags.emplace_back(std::string("--") + flag, vm[flag].as<std::string>());
  }
  if (vm.count("force-replay")) o.run_flags.emplace_back("--force-replay", "");
  if (vm.count("dtypes")) o.dtypes = parse_dtypes(vm["dtypes"].as<std::string>());
  check_dtypes(o.dtypes);

  record_settings(vm, o);
  // Every run gets the policy, flag or variable (a ZL_L2 the runs inherit
  // must not override a --l2 given here); only cold is a setting --resume
  // checks, so that an A/B begun before the policy existed resumes.
  o.run_flags.emplace_back("--l2", l2);
  if (l2 == "cold") o.settings["l2"] = l2;
  // Every run of both sides profiles, after its measurements; not a setting
  // --resume checks, since it changes no number (docs/profile.md).
  if (plan_knobs(vm).at(kProfileKnob) == "1") o.run_flags.emplace_back("--profile", "");
  return o;
}

}  // namespace zl::cli
