// `zlcore batch`'s flags, and the command line into batch::BatchOptions.
#include "batch_options.hpp"

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "../util/clock.hpp"
#include "batch_caliber.hpp"
#include "batch_queue_options.hpp"
#include "option_parser.hpp"
#include "plan_options.hpp"
#include "run_options.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/l2_policy.hpp"
#include "zlcore/paths.hpp"
#include "zlcore/provider.hpp"
#include "zlcore/python_choice.hpp"
#include "zlcore/shared_dir.hpp"
#include "zlcore/visible_devices.hpp"

namespace zl::cli {
namespace {

// `zlcore run` options every op gets, forwarded only when given here (a
// variable such as BENCH_LEVEL reaches the child through the environment).
const char* const kRunFlags[] = {"flaggems-dir",        "level",      "mode",
                                 "shape-mode",          "shape-file", "autotune",
                                 "isolate-tuner-cache", "timer",      "enable-cudagraph",
                                 "direct-repeat",       "python"};
// Switches of `zlcore run` every op gets, forwarded as they are.
const char* const kRunSwitches[] = {"force-replay", "keep-tuner-cache"};

void check_suite(const std::string& suite, bool dtypes, bool shape_file) {
  const std::string root = std::filesystem::absolute(suite).lexically_normal().string();
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec)) {
    throw PreflightError("flaggems_dir", root + " is not a directory (--flaggems-dir / FLAGGEMS_DIR)");
  }
  FlagGemsProvider(root).check_layout(dtypes, shape_file);
}

// UTC like run directories (util/clock.hpp says why).
std::string default_out(const std::string& backend) { return "runs/batch-" + utc_stamp_compact() + "-" + backend; }

// The batch's own flags: ops, devices, the directory, resume and the queue.
void add_batch_flags(po::options_description& desc) {
  desc.add_options()("backend", po::value<std::string>(), "backend name or alias (env ZL_BACKEND)")(
      "devices", po::value<std::string>(), "device indices: all (default), 0,2 or ranges like 0-3")(
      "gpus", po::value<std::string>(), "alias of --devices")(
      "ops", po::value<std::string>(),
      "ops to run: a,b,c (the suite's marks, `all`, benchmark files or pytest node ids)")(
      "ops-file", po::value<std::string>(),
      "ops file: one per line (# comments), or .yaml/.yml with per-op node, dtypes, shape_file")(
      "out", po::value<std::string>(), "batch directory (default runs/batch-<timestamp>-<backend>)")(
      "resume", "continue the batch in --out: ops already passed are skipped, the rest run again")(
      "force-resume",
      "--resume even when a setting that changes numbers differs from the batch's (the rows then mix them)")(
      "orphans", po::value<std::string>(),
      "--resume: an op an earlier, killed batch left running is waited for (wait, the default: its result is recorded) "
      "or killed (kill)")("cold",
                          "a fresh pytest process per op (default: one warm worker per device pays the imports once; "
                          "docs/warm-workers.md)")(
      "timeout", po::value<std::string>(),
      "seconds per op before it is killed and recorded as timeout (default 600; 0: none)")(
      "parallel-warmup-gpus", po::value<std::string>(),
      "first compile and tune every op spread over N devices, then time each warm (env PARALLEL_WARMUP_GPUS; 0: off)")(
      "compile-ahead", po::value<std::string>(),
      "before timing anything, compile the ops N at a time on the host's cores; auto: half the cores, at most 8, "
      "none below 4 (default off; docs/batch.md, \"Compiling ahead\")")(
      "no-compile-ahead", "compile each op in its timed run, as it comes (the default; --compile-ahead 0)")(
      "launcher", po::value<std::string>()->default_value("local"),
      "where the batch runs: local, or slurm (docs/slurm.md)");
}

// --launcher slurm (docs/slurm.md); carried to the launcher as
// launcher_options. Then the idle check of the local queue.
void add_cluster_and_idle_flags(po::options_description& desc) {
  desc.add_options()("partition", po::value<std::string>(), "slurm: the partition to submit to")(
      "nodes", po::value<std::string>(), "slurm: shard over N nodes (one shard per node; --shards wins)")(
      "shards", po::value<std::string>(), "slurm: number of shards, one array task each")(
      "gpus-per-shard", po::value<std::string>(), "slurm: GPUs each shard asks for (--gres=gpu:N)")(
      "time", po::value<std::string>(), "slurm: time limit per shard (sbatch --time)")(
      "sbatch-arg", po::value<std::vector<std::string>>()->composing(),
      "slurm: one more sbatch argument, as is (repeatable)")(
      "wait", "slurm: block until the shards are merged and print the summary")(
      "dry-run", "slurm: print the plan and the sbatch scripts, submit nothing")(
      "plan", po::value<std::string>(), "slurm (in the job): the plan.json the job takes every option from")(
      "shard", po::value<std::string>(), "slurm (in the job): run shard i of the plan")(
      "merge", "slurm (in the job): merge the shards' ops_status.csv")(
      "no-idle-check", "start ops on a device without checking it is idle")(
      "idle-util", po::value<std::string>(), "a device above this utilization % is busy (default 10)")(
      "idle-mem-mib", po::value<std::string>(), "a device with more memory in use (MiB) is busy (default 2048)")(
      "busy-recheck", po::value<std::string>(), "seconds before a busy device is asked again (default 5)")(
      "busy-give-up", po::value<std::string>(),
      "seconds with every device busy and none running before the rest are skipped (default 600)");
}

// zlcore run's options, for every op.
void add_run_flags(po::options_description& desc) {
  desc.add_options()("flaggems-dir", po::value<std::string>(), "FlagGems checkout (see zlcore run)")(
      "level", po::value<std::string>(), "core or comprehensive (env BENCH_LEVEL)")(
      "mode", po::value<std::string>(), "FlagGems' --mode")("dtypes", po::value<std::string>(),
                                                            "dtypes a,b (an op's own dtypes in a YAML ops file win)")(
      "shape-mode", po::value<std::string>(), "upstream or file (env SHAPE_MODE)")(
      "shape-file", po::value<std::string>(),
      "YAML shape file; given alone it means --shape-mode file (env SHAPE_FILE)")(
      "replay-from", po::value<std::string>(), "a run dir, or a batch dir (each op replays its own runs/<op>)")(
      "autotune", po::value<std::string>(), "tune, record or replay")("isolate-tuner-cache", po::value<std::string>(),
                                                                      "a boolean (env ZL_ISOLATE_TUNER_CACHE)")(
      "direct-repeat", po::value<std::string>(), "repeats of the direct timer (env ZL_DIRECT_REPEAT)")(
      "force-replay", "replay even when the Triton version or kernel source differs (see zlcore run)")(
      "keep-tuner-cache", "keep each op's isolated or replay tuner cache in its run directory (see zlcore run)")(
      "python", po::value<std::string>(),
      "the Python that runs pytest (default: the first of python3, /usr/bin/python3 that has pytest)");
}

// Every value each op's run would check (level, mode, shape mode, the
// booleans, repeats, autotune and its source, the timeout), once, before the
// batch writes anything.
RunOptions checked_run_options(const po::variables_map& vm) {
  RunOptions checked = run_options_from(vm);
  if (checked.shape_mode == "file") {
    std::error_code ec;
    if (checked.shape_file.empty() || !std::filesystem::is_regular_file(checked.shape_file, ec)) {
      throw PreflightError("shape_file",
                           (checked.shape_file.empty() ? std::string("(none given)") : checked.shape_file) +
                               " is not a file (SHAPE_MODE=file needs --shape-file / SHAPE_FILE)");
    }
  }
  return checked;
}

// The Slurm flags, for a cluster launcher only.
void set_launcher_options(const po::variables_map& vm, const batch::Launcher& launcher, batch::BatchOptions& o) {
  for (const char* flag : {"partition", "nodes", "shards", "gpus-per-shard", "time"}) {
    if (vm.count(flag)) o.launcher_options[flag] = vm[flag].as<std::string>();
  }
  for (const char* flag : {"wait", "dry-run"}) {
    if (vm.count(flag)) o.launcher_options[flag] = "1";
  }
  if (vm.count("sbatch-arg")) o.launcher_args = vm["sbatch-arg"].as<std::vector<std::string>>();
  if (std::string(launcher.name()) == "local" && (!o.launcher_options.empty() || !o.launcher_args.empty())) {
    throw UsageError(needs_cluster_launcher(
        "batch", o.launcher_args.empty() ? o.launcher_options.begin()->first : std::string("sbatch-arg"),
        "a cluster --launcher (slurm)"));
  }
}

// --devices, or its alias --gpus (both given must agree); "" for all.
std::string devices_spec_of(const po::variables_map& vm) {
  std::string spec = vm.count("devices") ? vm["devices"].as<std::string>() : "";
  // Given but empty is a mistake (an unset shell variable), never "all".
  for (const char* flag : {"devices", "gpus"}) {
    if (vm.count(flag) && vm[flag].as<std::string>().find_first_not_of(" \t") == std::string::npos) {
      throw UsageError(std::string("--") + flag + ": empty device list; give all, indices like 0,2 or ranges like 0-3");
    }
  }
  if (vm.count("gpus")) {
    const std::string gpus = vm["gpus"].as<std::string>();
    if (!spec.empty() && spec != gpus) throw UsageError("--devices and --gpus disagree; give one");
    spec = gpus;
  }
  return spec;
}

// The devices of this host the batch runs on, within a visibility variable
// already set here, like `zlcore run`. A cluster launcher picks devices on
// its nodes; this host may have none.
void resolve_devices(const po::variables_map& vm, const Backend& backend, const batch::Launcher& launcher,
                     const std::string& devices_spec, const std::string& l2, batch::BatchOptions& o) {
  if (!launcher.uses_local_devices(o)) {
    if (!devices_spec.empty()) {
      throw UsageError("--devices does not apply to --launcher " + std::string(launcher.name()) +
                       ": the cluster allocates devices (see --gpus-per-shard)");
    }
    return;
  }
  const VisibleDevices visible = visible_devices(backend);
  const DeviceQuery& q = visible.query;
  if (q.devices.empty()) {
    throw PreflightError(
        "device", "backend '" + backend.name() + "' reports no devices: " + (q.reason.empty() ? q.error : q.reason));
  }
  std::vector<int> valid;
  for (const Device& d : q.devices) valid.push_back(d.index);
  const std::string what = vm.count("gpus") && !vm.count("devices") ? "--gpus" : "--devices";
  o.device_indices =
      batch::parse_device_list(devices_spec.empty() ? "all" : devices_spec, valid,
                               visible.pins.empty() ? what : what + " (within " + visible.describe() + ")");
  // Every device the batch may give an op must honour the L2 policy: said
  // once here, not as one refused run per op.
  for (const Device& d : q.devices) {
    if (std::find(o.device_indices.begin(), o.device_indices.end(), d.index) != o.device_indices.end()) {
      check_l2_device(l2, backend.name(), d, l2_given(vm));
    }
  }
  if (!visible.pins.empty()) {
    std::string list;
    for (int i : valid) list += (list.empty() ? "" : ",") + std::to_string(i);
    std::cout << "devices: " << visible.describe() << " is set in this environment: the batch uses only device(s) "
              << list << "\n";
    for (const auto& [var, value] : visible.pins) o.recorded_options["env:" + var] = value;
  }
}

// The ops, expanded through the suite's index where they name marks or
// `all`. No suite given: every op runs on the embedded example suite, named
// once here so the warm workers and the runs agree on it. (A cluster
// launcher leaves both to each shard, which runs on its node.)
void resolve_ops(const po::variables_map& vm, const RunOptions& checked, bool runs_here, batch::BatchOptions& o) {
  const auto flag = [&vm](const char* name) { return vm.count(name) ? &vm[name].as<std::string>() : nullptr; };
  o.ops = batch::ops_from_flags(flag("ops"), flag("ops-file"), "batch");
  std::string suite = flag_or_env(vm, "flaggems-dir", "FLAGGEMS_DIR");
  if (suite.empty()) {
    suite = embedded_suite_dir();
    if (runs_here) o.run.flags.emplace_back("--flaggems-dir", suite);
    std::cout << "suite: " << suite << " (the embedded example suite: no --flaggems-dir / FLAGGEMS_DIR given)\n";
  }
  // The suite as `zlcore run` checks it, once: a wrong directory is one
  // PREFLIGHT_FAILED line, not one preflight_failed row per op.
  if (runs_here) check_suite(suite, vm.count("dtypes") > 0, checked.shape_mode == "file");
  if (batch::needs_expansion(o.ops)) {
    FlagGemsProvider provider(std::filesystem::absolute(suite).lexically_normal().string());
    o.ops = batch::expand_ops(o.ops, provider.index(), provider.root());
    batch::check_ops(o.ops, vm.count("ops") ? "--ops" : "--ops-file");
  }
}

// The batch directory, what --resume does with an earlier batch's
// leftovers, the per-op timeout and the warm-up pass.
void set_directory_and_passes(const po::variables_map& vm, const Backend& backend, batch::BatchOptions& o) {
  o.cold = vm.count("cold") > 0;
  if (vm.count("orphans")) {
    o.orphans = vm["orphans"].as<std::string>();
    if (o.orphans != "wait" && o.orphans != "kill") {
      throw UsageError("--orphans: '" + o.orphans + "' is not allowed; use wait or kill");
    }
  }
  if (o.resume && !vm.count("out")) throw UsageError("--resume needs --out, the batch directory to continue");
  o.out_dir = vm.count("out") ? vm["out"].as<std::string>() : default_out(backend.name());
  if (o.out_dir.empty()) throw UsageError("--out: an empty path; name the batch directory");
  warn_if_writable_by_others(o.out_dir, "batch --out directory");
  o.timeout_s = parse_seconds(vm.count("timeout") ? vm["timeout"].as<std::string>() : "600", "--timeout");
  o.warmup_devices = static_cast<int>(parse_count(
      flag_or_env(vm, "parallel-warmup-gpus", "PARALLEL_WARMUP_GPUS", "0"),
      vm.count("parallel-warmup-gpus") ? "--parallel-warmup-gpus" : "PARALLEL_WARMUP_GPUS", batch::kMaxWarmupDevices,
      "a number of devices from 0 to " + std::to_string(batch::kMaxWarmupDevices) + " (0: no warm-up pass)"));
  if (o.warmup_devices > 0 && flag_or_env_bool(vm, "isolate-tuner-cache", "ZL_ISOLATE_TUNER_CACHE", false)) {
    throw UsageError("--parallel-warmup-gpus needs the shared tuner cache; it cannot warm an isolated one");
  }
  set_compile_lanes(vm, o);
}

// The `zlcore run` flags each op gets, with one interpreter for every op and
// warm worker, chosen (and checked) once.
void set_run_flags(const po::variables_map& vm, const Backend& backend, const RunOptions& checked, bool runs_here,
                   batch::BatchOptions& o) {
  for (const char* flag : kRunFlags) {
    if (vm.count(flag)) o.run.flags.emplace_back(std::string("--") + flag, vm[flag].as<std::string>());
  }
  for (const char* flag : kRunSwitches) {
    if (vm.count(flag)) o.run.flags.emplace_back(std::string("--") + flag, "");  // a switch: no value
  }
  if (runs_here) {
    const std::string python = choose_python(vm.count("python") ? vm["python"].as<std::string>() : "",
                                             modules_for_device(backend.torch_device()))
                                   .command;
    if (!vm.count("python")) o.run.flags.emplace_back("--python", python);
  }
  if (vm.count("dtypes")) o.run.dtypes = parse_dtypes(vm["dtypes"].as<std::string>());
  // REPLAY_FROM means what --replay-from means here, a batch directory
  // included: each op gets its own run in it as its run's --replay-from.
  o.run.replay_from = checked.replay_from;
}

// What batch_identity.json records: every option as given, flag over env.
void record_options(const po::variables_map& vm, const std::string& devices_spec, batch::BatchOptions& o) {
  for (const auto& [flag, value] : o.run.flags) o.recorded_options[flag.substr(2)] = value.empty() ? "1" : value;
  if (vm.count("dtypes")) o.recorded_options["dtypes"] = vm["dtypes"].as<std::string>();
  if (!o.run.replay_from.empty()) o.recorded_options["replay-from"] = o.run.replay_from;
  o.recorded_options["devices"] = devices_spec.empty() ? "all" : devices_spec;
  if (vm.count("ops")) o.recorded_options["ops"] = vm["ops"].as<std::string>();
  if (vm.count("ops-file")) o.recorded_options["ops-file"] = vm["ops-file"].as<std::string>();
  if (vm.count("compile-ahead")) o.recorded_options["compile-ahead"] = vm["compile-ahead"].as<std::string>();
  if (vm.count("no-compile-ahead")) o.recorded_options["no-compile-ahead"] = "1";
  for (const char* env : {"BENCH_LEVEL", "SHAPE_MODE", "SHAPE_FILE", "REPLAY_FROM", "ZL_ISOLATE_TUNER_CACHE",
                          "ZL_ENABLE_CUDAGRAPH", "ZL_DIRECT_REPEAT", "PARALLEL_WARMUP_GPUS"}) {
    if (const char* v = std::getenv(env)) o.recorded_options[std::string("env:") + env] = v;
  }
}

}  // namespace

po::options_description batch_description() {
  po::options_description desc("batch: run many ops over the devices of this host, one `zlcore run` per op");
  add_batch_flags(desc);
  add_cluster_and_idle_flags(desc);
  add_run_flags(desc);
  add_plan_options(desc);
  add_help(desc);
  return desc;
}

std::unique_ptr<batch::Launcher> launcher_named(const po::variables_map& vm) {
  std::unique_ptr<batch::Launcher> launcher = batch::make_launcher(vm["launcher"].as<std::string>());
  if (!launcher) {
    std::string names;
    for (const std::string& n : batch::launcher_names()) names += (names.empty() ? "" : ", ") + n;
    throw UsageError("--launcher: '" + vm["launcher"].as<std::string>() + "' is not available (" + names + ")");
  }
  return launcher;
}

batch::BatchOptions batch_options(Context& ctx, const Backend& backend, const po::variables_map& vm,
                                  std::unique_ptr<batch::Launcher>* launcher) {
  const RunOptions checked = checked_run_options(vm);
  *launcher = launcher_named(vm);
  // A bad --timer fails here once, not as one preflight failure per op.
  const Plan plan = make_plan(backend, vm);

  batch::BatchOptions o;
  o.backend = backend.name();
  o.backend_dir = ctx.backend_dir();
  set_launcher_options(vm, **launcher, o);
  const std::string devices_spec = devices_spec_of(vm);
  const std::string l2 = checked.knobs.at(kL2Knob);
  resolve_devices(vm, backend, **launcher, devices_spec, l2, o);
  const bool runs_here = (*launcher)->uses_local_devices(o);
  resolve_ops(vm, checked, runs_here, o);
  o.resume = vm.count("resume") > 0 || vm.count("force-resume") > 0;
  o.force_resume = vm.count("force-resume") > 0;
  o.caliber = batch_caliber(backend, plan, checked, vm);
  set_directory_and_passes(vm, backend, o);
  o.idle = idle_policy(vm);
  const bool standby = standby_wanted(plan);  // a bad value is named with --cold too
  o.standby = !o.cold && standby;
  set_run_flags(vm, backend, checked, runs_here, o);
  // Given to every run, flag or variable: a ZL_L2 the runs inherit must not
  // override a --l2 the batch was given.
  o.run.flags.emplace_back("--l2", l2);
  // The profile pass, flag or variable, for every op; make_plan above
  // refused it once already where the backend offers no profiler.
  if (checked.knobs.at(kProfileKnob) == "1") o.run.flags.emplace_back("--profile", "");
  record_options(vm, devices_spec, o);
  return o;
}

}  // namespace zl::cli
