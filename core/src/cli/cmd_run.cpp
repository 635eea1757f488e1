// `zlcore run`: flags (each with the seed's environment variable; the flag
// wins), validation of the values, then run_operator().
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "plan_options.hpp"
#include "run_options.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/provider.hpp"
#include "zlcore/run.hpp"

namespace zl::cli {
namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ',' || c == ' ') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

void require_one_of(const std::string& value, const std::vector<std::string>& allowed, const std::string& what) {
  for (const std::string& a : allowed) {
    if (value == a) return;
  }
  std::string list;
  for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
  throw UsageError(what + "='" + value + "' is not allowed; use one of: " + list);
}

bool truthy(const std::string& v, const std::string& what) {
  if (v == "1" || v == "true" || v == "yes") return true;
  if (v == "0" || v == "false" || v == "no" || v.empty()) return false;
  throw UsageError(what + "='" + v + "' is not allowed; use 0 or 1");
}

}  // namespace

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
  desc.add_options()
      ("backend", po::value<std::string>(), "backend name or alias (env ZL_BACKEND)")
      ("flaggems-dir", po::value<std::string>(), "FlagGems checkout root, or a suite laid out like it (env FLAGGEMS_DIR)")
      ("op", po::value<std::string>(), "operator: benchmark/test_<op>.py with marker <op> (env OP)")
      ("op-file", po::value<std::string>(), "benchmark file for the op, relative to the root (env OP_FILE)")
      ("test-node", po::value<std::string>(), "exact pytest node id, e.g. benchmark/test_mm.py::test_mm (env TEST_NODE)")
      ("shape-mode", po::value<std::string>(), "upstream (the suite's own shapes) or file (env SHAPE_MODE)")
      ("shape-file", po::value<std::string>(), "YAML shape file for --shape-mode file (env SHAPE_FILE)")
      ("level", po::value<std::string>(), "core or comprehensive (env BENCH_LEVEL; default core)")
      ("mode", po::value<std::string>(), "FlagGems mode: kernel, operator, wrapper, cudagraph (default kernel)")
      ("dtypes", po::value<std::string>(), "comma-separated dtypes, e.g. float16,bfloat16 (default: the op's own)")
      ("device", po::value<int>(), "device index as the backend numbers them (default 0)")
      ("autotune", po::value<std::string>(),
       "tune | record | replay (default: replay with --replay-from, record with an isolated cache, else tune)")
      ("replay-from", po::value<std::string>(), "run directory (or its autotune_records/) to replay (env REPLAY_FROM)")
      ("force-replay", "replay even when the Triton version or kernel source differs from the record")
      ("isolate-tuner-cache", po::value<std::string>(),
       "1: the run gets its own FLAGGEMS_CACHE_DIR and TRITON_CACHE_DIR (env ZL_ISOLATE_TUNER_CACHE; default 0)")
      ("keep-tuner-cache", "keep an isolated or replay tuner cache in <run dir>/.tuner_cache after the run")
      ("direct-repeat", po::value<std::string>(), "repeats of the direct timer (env ZL_DIRECT_REPEAT; default 1)")
      ("python", po::value<std::string>(), "Python interpreter for pytest (default python3)")
      ("timeout", po::value<std::string>(), "seconds before the run is killed and recorded as timeout (default none; 0: none)");
  add_plan_options(desc);
}

RunOptions run_options_from(const po::variables_map& vm) {
  RunOptions o;
  o.flaggems_dir = flag_or_env(vm, "flaggems-dir", "FLAGGEMS_DIR");
  o.target.op = flag_or_env(vm, "op", "OP");
  o.target.op_file = flag_or_env(vm, "op-file", "OP_FILE");
  o.target.test_node = flag_or_env(vm, "test-node", "TEST_NODE");
  o.shape_mode = flag_or_env(vm, "shape-mode", "SHAPE_MODE", "upstream");
  require_one_of(o.shape_mode, {"upstream", "file"}, "SHAPE_MODE (--shape-mode)");
  o.shape_file = flag_or_env(vm, "shape-file", "SHAPE_FILE");
  o.level = flag_or_env(vm, "level", "BENCH_LEVEL", "core");
  require_one_of(o.level, FlagGemsProvider::levels(), "BENCH_LEVEL (--level)");
  o.mode = vm.count("mode") ? vm["mode"].as<std::string>() : "kernel";
  require_one_of(o.mode, FlagGemsProvider::modes(), "--mode");
  if (vm.count("dtypes")) o.dtypes = split_list(vm["dtypes"].as<std::string>());
  if (vm.count("device")) o.device = vm["device"].as<int>();
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
  o.isolate_tuner_cache =
      truthy(flag_or_env(vm, "isolate-tuner-cache", "ZL_ISOLATE_TUNER_CACHE", "0"), "ZL_ISOLATE_TUNER_CACHE");
  o.keep_tuner_cache = vm.count("keep-tuner-cache") > 0;
  std::string repeat = flag_or_env(vm, "direct-repeat", "ZL_DIRECT_REPEAT", "1");
  char* end = nullptr;
  long r = std::strtol(repeat.c_str(), &end, 10);
  if (end == repeat.c_str() || *end != '\0' || r < 1 || r > 1000) {
    throw UsageError("ZL_DIRECT_REPEAT='" + repeat + "' is not allowed; use a whole number from 1 to 1000");
  }
  o.knobs = plan_knobs(vm);
  o.knobs["ZL_DIRECT_REPEAT"] = std::to_string(r);
  o.knobs["ZL_ISOLATE_TUNER_CACHE"] = o.isolate_tuner_cache ? "1" : "0";
  o.python = vm.count("python") ? vm["python"].as<std::string>() : "python3";
  if (vm.count("timeout")) o.timeout_s = parse_seconds(vm["timeout"].as<std::string>(), "--timeout");
  return o;
}

int cmd_run(Context& ctx, const std::vector<std::string>& args) {
  po::options_description desc(
      "run: one operator end to end (preflight, pinned device, planned timer, run directory)\n\n"
      "Autotune modes: tune (normal tuning), record (tune, then keep every winner in\n"
      "autotune_records/; default with an isolated cache), replay (--replay-from: use\n"
      "exactly the recorded winners, tune nothing). A fair A/B: side A\n"
      "--isolate-tuner-cache 1 (records), side B --replay-from <A's run dir>.\n\n"
      "Arguments after -- go to pytest unchanged.\n\noptions");
  add_run_options(desc);
  desc.add_options()("out", po::value<std::string>(), "run directory to create (default runs/<time>-<op>-<backend>)");
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
  try {
    po::store(po::command_line_parser(ours).options(all).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(std::string("run: ") + e.what() + " (see 'zlcore run --help')");
  }
  if (vm.count("help")) {
    std::cout << "usage: zlcore run [options] [-- pytest args]\n\n" << desc << "\n";
    return 0;
  }

  RunOptions o = run_options_from(vm);
  if (vm.count("out")) o.out_dir = vm["out"].as<std::string>();
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

  const Backend& backend = ctx.registry().select(flag_or_env(vm, "backend", "ZL_BACKEND"), "--backend / ZL_BACKEND");
  Plan plan = make_plan(backend, vm);
  return run_operator(backend, plan, o);
}

}  // namespace zl::cli
