// `zlcore run`: flags (each with the seed's environment variable; the flag
// wins), validation of the values, then run_operator().
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "../util/text.hpp"
#include "option_parser.hpp"
#include "plan_options.hpp"
#include "run_options.hpp"
#include "zlcore/autotune.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/l2_policy.hpp"
#include "zlcore/provider.hpp"
#include "zlcore/run.hpp"
#include "zlcore/visible_devices.hpp"

namespace zl::cli {
namespace {

void require_one_of(const std::string& value, const std::vector<std::string>& allowed, const std::string& what) {
  for (const std::string& a : allowed) {
    if (value == a) return;
  }
  std::string list;
  for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
  throw UsageError(what + "='" + value + "' is not allowed; use one of: " + list);
}

bool given(const po::variables_map& vm, const char* flag) { return vm.count(flag) && !vm[flag].defaulted(); }

std::string env_text(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// Which shapes. An explicit mode wins; a shape file given without a mode
// means file mode (a file given and then ignored would measure other shapes
// than the user asked for). Flags before variables, as everywhere.
void choose_shapes(const po::variables_map& vm, RunOptions& o) {
  const bool mode_flag = given(vm, "shape-mode"), file_flag = given(vm, "shape-file");
  const std::string env_mode = env_text("SHAPE_MODE"), env_file = env_text("SHAPE_FILE");
  if (mode_flag) {
    o.shape_mode = vm["shape-mode"].as<std::string>();
    o.shape_mode_from = "--shape-mode";
  } else if (file_flag) {
    o.shape_mode = "file";
    o.shape_mode_from = "implied by --shape-file";
  } else if (!env_mode.empty()) {
    o.shape_mode = env_mode;
    o.shape_mode_from = "SHAPE_MODE";
    env_choices()["SHAPE_MODE"] = env_mode;
  } else if (!env_file.empty()) {
    o.shape_mode = "file";
    o.shape_mode_from = "implied by SHAPE_FILE";
  } else {
    o.shape_mode = "upstream";
    o.shape_mode_from = "default";
  }
  require_one_of(o.shape_mode, {"upstream", "file"}, mode_flag ? "--shape-mode" : "SHAPE_MODE");
  const std::string file = file_flag ? vm["shape-file"].as<std::string>() : env_file;
  const std::string mode_text = (mode_flag ? "--shape-mode " : "SHAPE_MODE=") + o.shape_mode;
  if (o.shape_mode == "file") {
    if (file.empty()) throw UsageError(mode_text + " needs a shape file: give --shape-file F (or SHAPE_FILE)");
    o.shape_file = file;
    if (!file_flag) env_choices()["SHAPE_FILE"] = env_file;
    return;
  }
  if (file_flag) {
    throw UsageError("--shape-file " + file + " and " + mode_text +
                     " contradict each other: the suite's own shapes "
                     "or that file? drop one");
  }
  if (!env_file.empty()) o.notes.push_back("SHAPE_FILE=" + env_file + " is set but not used: " + mode_text);
}

// An index as `zlcore devices` prints them: a whole number, 0 or more.
std::optional<int> device_index(const std::string& text) {
  if (text.empty() || text.size() > 6 || text.find_first_not_of("0123456789") != std::string::npos) return {};
  return std::stoi(text);
}

// --device given as a name (gpu0, dev:1) or negative: the line lists the
// indices the backend offers here, which is what the flag takes.
// Without a backend to ask, run_options_from's line (no list) stands.
void check_device_text(Context& ctx, const po::variables_map& vm) {
  if (!vm.count("device")) return;
  const std::string text = vm["device"].as<std::string>();
  const std::string name = flag_or_env(vm, "backend", "ZL_BACKEND");
  if (device_index(text) || name.empty() || ctx.registry().find(name) == nullptr) return;
  const Backend& backend = *ctx.registry().find(name);
  std::vector<std::string> valid;
  for (const Device& d : visible_devices(backend).query.devices) valid.push_back(std::to_string(d.index));
  throw UsageError("--device '" + text + "' is not a device index: give one of the " + backend.name() +
                   " indices that `zlcore devices --backend " + backend.name() + "` lists (" +
                   (valid.empty() ? std::string("it lists none here") : "valid: " + text::join(valid, ", ")) + ")");
}

}  // namespace

void check_dtypes(const std::vector<std::string>& dtypes) {
  const std::vector<std::string>& allowed = FlagGemsProvider::dtype_names();
  for (const std::string& d : dtypes) {
    if (std::find(allowed.begin(), allowed.end(), d) != allowed.end()) continue;
    const std::vector<std::string> near = text::nearest(d, allowed);
    throw UsageError("--dtypes: '" + d + "' is not a dtype the suite takes" +
                     (near.empty() ? "" : "; did you mean " + text::join(near, " or ") + "?") +
                     " (allowed: " + text::join(allowed) + ")");
  }
}

double parse_seconds(const std::string& text, const std::string& what) {
  constexpr double kWeek = 7 * 24 * 3600;
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && std::isfinite(v) && v >= 0 && v <= kWeek) return v;
  } catch (const std::exception&) {
  }
  throw UsageError(what + ": '" + text + "' is not allowed; use seconds from 0 (none) to 604800 (a week)");
}

void add_run_options(po::options_description& desc) {
  desc.add_options()("backend", po::value<std::string>(), "backend name or alias (env ZL_BACKEND)")(
      "flaggems-dir", po::value<std::string>(),
      "FlagGems checkout root, or a suite laid out like it (env FLAGGEMS_DIR)")(
      "op", po::value<std::string>(),
      "an op of the suite, a pytest mark (`zlcore ops` lists them): the files that mark it, with -m <op> (env OP)")(
      "op-file", po::value<std::string>(), "benchmark file for the op, relative to the root (env OP_FILE)")(
      "test-node", po::value<std::string>(),
      "exact pytest node id, e.g. benchmark/test_mm.py::test_mm (env TEST_NODE)")(
      "shape-mode", po::value<std::string>(), "upstream (the suite's own shapes) or file (env SHAPE_MODE)")(
      "shape-file", po::value<std::string>(),
      "YAML shape file; given alone it means --shape-mode file (env SHAPE_FILE)")(
      "level", po::value<std::string>(), "core or comprehensive (env BENCH_LEVEL; default core)")(
      "mode", po::value<std::string>(), "FlagGems mode: kernel, operator, wrapper, cudagraph (default kernel)")(
      "dtypes", po::value<std::string>(), "comma-separated dtypes, e.g. float16,bfloat16 (default: the op's own)")(
      "device", po::value<std::string>(),
      "device index as the backend numbers them (default: the first it offers, within a visibility variable "
      "already set)")(
      "autotune", po::value<std::string>(),
      "tune | record | replay (default: replay with --replay-from, record with an isolated cache, else tune)")(
      "replay-from", po::value<std::string>(), "run directory (or its autotune_records/) to replay (env REPLAY_FROM)")(
      "force-replay", "replay even when the Triton version or kernel source differs from the record")(
      "isolate-tuner-cache", po::value<std::string>(),
      "a boolean; on: the run gets its own FLAGGEMS_CACHE_DIR and TRITON_CACHE_DIR (env ZL_ISOLATE_TUNER_CACHE; "
      "default off)")("keep-tuner-cache",
                      "keep an isolated or replay tuner cache in <run dir>/.tuner_cache after the run")(
      "direct-repeat", po::value<std::string>(),
      "repeats of the direct timer, each on a fresh input placement (env ZL_DIRECT_REPEAT; default 5)")(
      "python", po::value<std::string>(),
      "Python interpreter for pytest (default: the first of python3, /usr/bin/python3 that has pytest)")(
      "timeout", po::value<std::string>(),
      "seconds before the run is killed and recorded as timeout (default none; 0: none)");
  add_plan_options(desc);
}

RunOptions run_options_from(const po::variables_map& vm) {
  RunOptions o;
  o.flaggems_dir = flag_or_env(vm, "flaggems-dir", "FLAGGEMS_DIR");
  o.target.op = flag_or_env(vm, "op", "OP");
  o.target.op_file = flag_or_env(vm, "op-file", "OP_FILE");
  o.target.test_node = flag_or_env(vm, "test-node", "TEST_NODE");
  choose_shapes(vm, o);
  o.level = flag_or_env(vm, "level", "BENCH_LEVEL", "core");
  require_one_of(o.level, FlagGemsProvider::levels(), "BENCH_LEVEL (--level)");
  o.mode = vm.count("mode") ? vm["mode"].as<std::string>() : "kernel";
  require_one_of(o.mode, FlagGemsProvider::modes(), "--mode");
  if (vm.count("dtypes")) o.dtypes = parse_dtypes(vm["dtypes"].as<std::string>());
  check_dtypes(o.dtypes);
  if (vm.count("device")) {
    const std::string text = vm["device"].as<std::string>();
    const std::optional<int> index = device_index(text);
    if (!index) throw UsageError("--device '" + text + "' is not a device index: give a number, 0 or more");
    o.device = *index;
  }
  if (vm.count("autotune")) o.autotune_mode = vm["autotune"].as<std::string>();
  o.replay_from = flag_or_env(vm, "replay-from", "REPLAY_FROM");
  // The autotune mode and its source, before any directory exists.
  if (!o.autotune_mode.empty()) require_one_of(o.autotune_mode, {"tune", "record", "replay"}, "--autotune");
  if (o.autotune_mode == "replay" && o.replay_from.empty()) {
    throw UsageError("--autotune replay needs --replay-from / REPLAY_FROM");
  }
  if (!o.autotune_mode.empty() && o.autotune_mode != "replay" && !o.replay_from.empty()) {
    throw UsageError("--replay-from / REPLAY_FROM implies --autotune replay, not '" + o.autotune_mode + "'");
  }
  o.force_replay = vm.count("force-replay") > 0;
  o.isolate_tuner_cache = flag_or_env_bool(vm, "isolate-tuner-cache", "ZL_ISOLATE_TUNER_CACHE", false);
  o.keep_tuner_cache = vm.count("keep-tuner-cache") > 0;
  // The timer plugin's own default (timers/settings.py): five placements give
  // compare's rank test the five values a side it needs to decide a row.
  std::string repeat = flag_or_env(vm, "direct-repeat", "ZL_DIRECT_REPEAT", "5");
  // Digits only: strtol would take a sign or leading blanks the child's own parser refuses.
  const bool digits =
      !repeat.empty() && repeat.size() <= 4 && repeat.find_first_not_of("0123456789") == std::string::npos;
  const long r = digits ? std::strtol(repeat.c_str(), nullptr, 10) : 0;
  if (r < 1 || r > 1000) {
    // Named as the user gave it: the flag when there is one, else the variable.
    const std::string given = vm.count("direct-repeat") ? "--direct-repeat " : "ZL_DIRECT_REPEAT=";
    throw UsageError(given + "'" + repeat + "' is not allowed; use a whole number from 1 to 1000");
  }
  o.knobs = plan_knobs(vm);
  check_l2_mode(o.knobs[kL2Knob], o.mode, l2_given(vm));
  o.knobs["ZL_DIRECT_REPEAT"] = std::to_string(r);
  o.knobs["ZL_ISOLATE_TUNER_CACHE"] = o.isolate_tuner_cache ? "1" : "0";
  if (vm.count("python")) o.python = vm["python"].as<std::string>();
  if (vm.count("timeout")) o.timeout_s = parse_seconds(vm["timeout"].as<std::string>(), "--timeout");
  return o;
}

namespace {

// --replay-in-cache and --compile-only: which tuner cache a run may write
// into, and what into it, checked against the options already read.
void set_cache_switches(const po::variables_map& vm, RunOptions& o) {
  if (vm.count("replay-in-cache")) {
    if (!autotune_replays(o.autotune_mode, o.replay_from))
      throw UsageError("run: --replay-in-cache needs a replay (--replay-from / REPLAY_FROM)");
    if (o.isolate_tuner_cache)
      throw UsageError("run: --replay-in-cache replays into the cache in use; not with --isolate-tuner-cache 1");
    // It writes rows into that cache: never into the user's default one,
    // which every other run of theirs reads.
    for (const char* var : {"FLAGGEMS_CACHE_DIR", "TRITON_CACHE_DIR"}) {
      if (env_text(var).empty())
        throw UsageError(std::string("run: --replay-in-cache needs ") + var +
                         " set to a tuner cache of the caller's own (it is unset, so the default shared one would "
                         "get the records)");
    }
    o.replay_in_cache = true;
  }
  if (vm.count("compile-only")) {
    // It fills the caches later runs read: an isolated cache is thrown away
    // with the run, and a replay or a record pins or keeps winners, which a
    // run that benchmarks nothing has none of.
    // Each conflict named as the caller gave it: a flag, or a variable
    // left in the environment.
    if (o.isolate_tuner_cache) {
      throw UsageError("run: --compile-only fills the shared caches; not with " +
                       (vm.count("isolate-tuner-cache")
                            ? "--isolate-tuner-cache " + vm["isolate-tuner-cache"].as<std::string>()
                            : "ZL_ISOLATE_TUNER_CACHE=" + env_text("ZL_ISOLATE_TUNER_CACHE")));
    }
    if (!o.autotune_mode.empty() && o.autotune_mode != "tune")
      throw UsageError("run: --compile-only tunes nothing; not with --autotune " + o.autotune_mode);
    if (!o.replay_from.empty()) {
      throw UsageError(std::string("run: --compile-only tunes nothing; not with ") +
                       (vm.count("replay-from") ? "--replay-from" : "REPLAY_FROM"));
    }
    o.compile_only = true;
  }
}

}  // namespace

int cmd_run(Context& ctx, const std::vector<std::string>& args) {
  po::options_description desc(
      "run: one operator end to end (preflight, pinned device, planned timer, run directory)\n\n"
      "Autotune modes: tune (normal tuning), record (tune, then keep every winner in\n"
      "autotune_records/; default with an isolated cache), replay (--replay-from: use\n"
      "exactly the recorded winners, tune nothing). A fair A/B: side A\n"
      "--isolate-tuner-cache 1 (records), side B --replay-from <A's run dir>.\n\n"
      "Arguments after -- go to pytest unchanged.\n\noptions");
  add_run_options(desc);
  desc.add_options()(
      "out", po::value<std::string>(),
      "run directory to create (default runs/<run id>: <time>-<op>-<backend>-<random>, the id in run_identity.json)")(
      "replay-in-cache",
      "replay into the tuner cache in use (FLAGGEMS_CACHE_DIR and TRITON_CACHE_DIR, both set, a cache the caller "
      "owns) instead of an isolated one, so a warm worker on that cache may run it; a recorded row replaces one of "
      "the same key")("compile-only",
                      "run each shape's sides once so their kernels compile into the shared caches; measure and "
                      "tune nothing, write no rows (what a batch's compile-ahead pass runs; docs/batch.md)");
  // Set by `zlcore batch` for the runs it starts.
  po::options_description hidden;
  hidden.add_options()("same-process-group", "")("warmed-on", po::value<std::string>(), "")(
      "batch-dir", po::value<std::string>(), "")("quiet", "")("worker", po::value<std::string>(), "")(
      "worker-ops-before", po::value<int>(), "")("worker-socket", po::value<std::string>(), "");
  add_help(desc);
  po::options_description all;
  all.add(desc).add(hidden);

  std::vector<std::string> ours, extra;
  bool after = false;
  for (const std::string& a : args) {
    if (!after && a == "--") {
      after = true;
      continue;
    }
    (after ? extra : ours).push_back(a);
  }
  po::variables_map vm;
  // pytest's own arguments go after `--`; a word before it is a mistake
  // (a value whose flag was forgotten), not something to drop.
  po::options_description stray;
  stray.add_options()("zl-stray-argument", po::value<std::vector<std::string>>(), "");
  all.add(stray);
  po::positional_options_description positional;
  positional.add("zl-stray-argument", -1);
  try {
    po::store(parse_options(ours, all, positional), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(option_error("run", e, desc));
  }
  if (vm.count("help")) {
    print_help(std::cout, "run", desc);
    return 0;
  }
  if (vm.count("zl-stray-argument")) {
    throw UsageError("run: unexpected argument '" + vm["zl-stray-argument"].as<std::vector<std::string>>().front() +
                     "'; pytest's own arguments go after -- (see 'zlcore run --help')");
  }

  // The backend first, then the options a run shares with a batch
  // (run_options_from), then a run's own: the order `zlcore batch` checks
  // them in, so both name the same first fault in a command line with several.
  const Backend& backend = ctx.registry().select(flag_or_env(vm, "backend", "ZL_BACKEND"), "--backend / ZL_BACKEND");
  check_device_text(ctx, vm);
  RunOptions o = run_options_from(vm);
  if (vm.count("out")) o.out_dir = vm["out"].as<std::string>();
  set_cache_switches(vm, o);
  o.same_process_group = vm.count("same-process-group") > 0;
  if (vm.count("warmed-on")) o.warmed_on = vm["warmed-on"].as<std::string>();
  if (vm.count("batch-dir")) o.batch_dir = vm["batch-dir"].as<std::string>();
  if (vm.count("worker")) o.worker = vm["worker"].as<std::string>();
  if (vm.count("worker-ops-before")) o.worker_ops_before = vm["worker-ops-before"].as<int>();
  if (vm.count("worker-socket")) o.worker_socket = vm["worker-socket"].as<std::string>();
  o.quiet = vm.count("quiet") > 0;
  o.extra_pytest_args = extra;
  o.command_line = {"zlcore", "run"};
  o.command_line.insert(o.command_line.end(), args.begin(), args.end());

  Plan plan = make_plan(backend, vm);
  for (const auto& [var, value] : env_choices()) o.env_choices[var] = value;
  return run_operator(backend, plan, o);
}

}  // namespace zl::cli
