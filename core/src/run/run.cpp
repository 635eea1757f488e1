// One operator end to end. The order matters: everything that can fail
// cheaply (preflight, the run directory) fails before the ~10 s of imports
// the child pays; the identity is on disk (status running) before the child
// starts, so even a SIGKILL of zlcore leaves a run directory that says so.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <ctime>

#include <cstdio>
#include <filesystem>
#include <future>
#include <memory>
#include <iostream>
#include <random>

#include "../util/json.hpp"
#include "../util/json_read.hpp"
#include "../util/printable.hpp"
#include "../util/space_reserve.hpp"
#include "identity.hpp"
#include "status.hpp"
#include "results_table.hpp"
#include "worker_client.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/autotune.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/paths.hpp"
#include "zlcore/process.hpp"
#include "zlcore/python_choice.hpp"
#include "zlcore/run.hpp"
#include "zlcore/sha256.hpp"
#include "zlcore/signals.hpp"
#include "zlcore/tuner_cache.hpp"
#include "zlcore/visible_devices.hpp"
#include "device_facts.hpp"

namespace zl {
namespace {

namespace fs = std::filesystem;

std::string stamp() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

std::string short_random() {
  std::random_device rd;
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04x", rd() & 0xffff);
  return buf;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// The op as one file-name component of the default run directory: an op
// named after a file or a node may hold anything its file name holds, and
// must neither leave runs/ nor exceed a file name's 255 bytes.
std::string safe_component(const std::string& op) {
  std::string out;
  for (char c : op) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    out += ok ? c : '_';
  }
  if (out.empty() || out.find_first_not_of('.') == std::string::npos) out = "op";
  return out.size() > 120 ? out.substr(0, 100) + "-" + sha256_hex(op).substr(0, 16) : out;
}

// Creates the run directory, refusing one that exists: a rerun must never
// overwrite the numbers of an earlier one.
std::string make_run_dir(const RunOptions& opts, const TestTarget& target, const std::string& backend) {
  std::string dir = opts.out_dir;
  if (dir.empty()) dir = (fs::path("runs") / (stamp() + "-" + safe_component(target.op) + "-" + backend)).string();
  fs::path p = fs::absolute(dir);
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  if (::mkdir(p.c_str(), 0755) != 0) {
    if (errno == EEXIST) {
      throw UsageError("run directory " + p.string() + " already exists; refusing to overwrite it (choose another --out)");
    }
    throw UsageError("cannot create run directory " + p.string() + ": " + std::strerror(errno));
  }
  return p.lexically_normal().string();
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

// A plugin's side facts, or null when it wrote none.
rapidjson::Value read_child_json(const fs::path& file, rapidjson::Document::AllocatorType& a) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return rapidjson::Value(rapidjson::kNullType);
  rapidjson::Document d;
  try {
    // Half the readers' limit: the report lands a few levels down in
    // run_identity.json, which compare must still be able to read.
    if (!json::parse(d, read_file(file.string()), json::kMaxDepth / 2).empty()) {
      return rapidjson::Value(rapidjson::kNullType);
    }
  } catch (const std::exception&) {
    return rapidjson::Value(rapidjson::kNullType);
  }
  return rapidjson::Value(d, a);
}

const rapidjson::Value* member(const rapidjson::Value& v, const char* key) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(key);
  return it == v.MemberEnd() ? nullptr : &it->value;
}

// The device to pin: the one with this index (-1: the first offered) among
// those the backend offers this process, i.e. within a visibility variable
// already set in zlcore's environment. Throws PreflightError when none is
// offered at all, UsageError (listing the valid ones) otherwise.
Device pick_device(const Backend& backend, const VisibleDevices& visible, int index) {
  const DeviceQuery& devices = visible.query;
  if (devices.devices.empty()) {
    throw PreflightError("device", "backend '" + backend.name() + "' reports no devices: " + devices.reason);
  }
  if (index < 0) return devices.devices.front();
  std::vector<std::string> valid;
  for (const Device& d : devices.devices) {
    if (d.index == index) return d;
    valid.push_back(std::to_string(d.index));
  }
  throw UsageError("--device " + std::to_string(index) + " is not a " + backend.name() + " device" +
                   (visible.pins.empty() ? "" : " within " + visible.describe() + " (set in zlcore's environment)") +
                   "; valid: " + join(valid, ", "));
}

// Reads every .child/<plugin>.json into one object (kept whole in the
// identity under "plugins") and lifts the facts the caliber compares:
// framework versions, the framework's view of the device, fallback shapes.
rapidjson::Value merge_child_reports(Identity& id, const fs::path& child_dir) {
  auto& a = id.alloc();
  rapidjson::Value plugins(rapidjson::kObjectType);
  std::error_code ec;
  for (fs::directory_iterator it(child_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".json") continue;
    rapidjson::Value v = read_child_json(it->path(), a);
    if (v.IsNull()) continue;
    plugins.AddMember(json::str(it->path().stem().string(), a), v, a);
  }
  if (const rapidjson::Value* ds = member(plugins, "device_setup")) {
    if (const rapidjson::Value* versions = member(*ds, "versions")) {
      for (auto it = versions->MemberBegin(); it != versions->MemberEnd(); ++it) {
        std::string k = it->name.GetString();
        if (k == "python" || k == "zlcore") continue;
        id.set("versions." + k, rapidjson::Value(it->value, a));
      }
    }
    if (const rapidjson::Value* dev = member(*ds, "device")) id.set("device.framework", rapidjson::Value(*dev, a));
  }
  if (const rapidjson::Value* timing = member(plugins, "timing")) {
    if (const rapidjson::Value* fb = member(*timing, "fallback_shapes")) {
      id.set("timer.fallback_shapes", rapidjson::Value(*fb, a));
    }
    // Every setting the timers measured with, defaults included: two builds
    // whose defaults differ measure differently with the same environment.
    if (const rapidjson::Value* st = member(*timing, "settings")) id.set("timer.settings", rapidjson::Value(*st, a));
    // Graph-timed sides whose pace moved past the minimum of windows
    // (extended), and those whose pace never held (unsettled).
    for (const char* k : {"sides_extended", "sides_unsettled"}) {
      if (const rapidjson::Value* v = member(*timing, k); v && v->IsInt64()) {
        id.set(std::string("timer.") + k, v->GetInt64());
      }
    }
  }
  return plugins;
}

void record_git(Identity& id, const GitInfo& gi) {
  if (gi.sha) {
    id.set("versions.flaggems_git.sha", *gi.sha);
  } else {
    id.set_null("versions.flaggems_git.sha");
  }
  if (gi.dirty) {
    id.set("versions.flaggems_git.dirty", *gi.dirty);
  } else {
    id.set_null("versions.flaggems_git.dirty");
  }
  if (!gi.note.empty()) id.set("versions.flaggems_git.note", gi.note);
}

// What the child step reports when SIGINT/SIGTERM reached us before pytest
// started: nothing is started, the run ends `interrupted` like one stopped
// mid-way.
ChildResult interrupted_before_start() {
  ChildResult r;
  r.started = true;
  r.interrupted = true;
  return r;
}

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
  const double t_start = state.t_start;
  // `started` and `seconds` share one origin, so started + seconds is when
  // the run ended (the batch checks that two ops never overlap on a device).
  const std::string started_at = utc_now_iso();
  // No suite given: the example suite installed with zlcore, so that a first
  // `zlcore run --backend host --op abs` works anywhere.
  const bool embedded = opts.flaggems_dir.empty();
  const std::string suite_dir = embedded ? embedded_suite_dir() : opts.flaggems_dir;
  FlagGemsProvider provider(fs::absolute(suite_dir).lexically_normal().string());
  if (!fs::is_directory(provider.root())) {
    throw PreflightError("flaggems_dir", embedded ? "no FlagGems directory given (--flaggems-dir / FLAGGEMS_DIR) and "
                                                    "the embedded example suite is not at " + provider.root()
                                                  : provider.root() + " is not a directory (--flaggems-dir / FLAGGEMS_DIR)");
  }
  TestTarget target = provider.resolve(opts.target);
  RunOptions o = opts;
  // No file given is preflight's to name (check=shape_file), not a path error.
  if (o.shape_mode == "file" && !o.shape_file.empty()) {
    o.shape_file = fs::absolute(o.shape_file).lexically_normal().string();
  }
  preflight(provider, target, o);
  const PythonChoice python = choose_python(o.python);
  o.python = python.command;
  const std::string& python_version = python.version;

  const VisibleDevices visible = visible_devices(backend);
  const Device device = pick_device(backend, visible, o.device);
  // A pin already set is a choice the environment made: on record with the others.
  for (const auto& [var, value] : visible.pins) o.env_choices[var] = value;

  const std::string run_dir = make_run_dir(o, target, backend.name());
  HalfMadeDir half_made{run_dir};
  const fs::path rd(run_dir);
  // The final identity must be writable even if pytest fills the disk.
  state.reserve = std::make_unique<SpaceReserve>((rd / ".space_reserve").string(), 128 * 1024);
  const fs::path child_dir = rd / ".child";
  state.child_dir = child_dir.string();
  state.run_dir = run_dir;
  fs::create_directories(child_dir);

  // FlagGems' git state is only needed for the identity: ask git while the
  // child runs, not before it.
  auto git = std::async(std::launch::async, [&provider] { return provider.git_info(); });

  // A replay always gets an isolated cache: winners or binaries another run
  // left in a shared one must not leak in (docs/autotune.md).
  CacheDirs cache =
      resolve_cache_dirs(o.isolate_tuner_cache || autotune_replays(o.autotune_mode, o.replay_from), run_dir);
  if (cache.isolated) {
    fs::create_directories(cache.flaggems);
    fs::create_directories(cache.triton);
  }
  // Before the snapshot: a replay's cache starts with the recorded winners.
  AutotuneSetup autotune = prepare_autotune(o.autotune_mode, o.replay_from, o.force_replay, cache, run_dir);
  CacheSnapshot before = snapshot_cache(cache);

  // The shapes actually used, archived with the level they were used at.
  const std::string shape_source = o.shape_mode == "file" ? o.shape_file : provider.default_shape_file();
  std::string shape_text, shape_hash;
  try {
    shape_text = read_file(shape_source);
    shape_hash = sha256_hex(shape_text);
  } catch (const std::exception&) {
    shape_text = "# the suite has no " + shape_source + "; shapes come from the benchmark code\n";
  }
  write_file_atomic((rd / "shapes.yaml").string(),
                    "bench_level: " + o.level + "\n# source: " + shape_source + "\n" + shape_text);

  // The child: argv only, pytest's own options after the planned plugins.
  BenchArgs bench{o.level, o.mode, o.dtypes, o.shape_mode == "file" ? o.shape_file : ""};
  std::vector<std::string> argv{o.python, "-m", "pytest", "-s", "-p", "no:cacheprovider"};
  for (const std::string& m : plan.pytest_plugins) {
    argv.push_back("-p");
    argv.push_back(m);
  }
  for (const std::string& a : provider.pytest_args(target, bench)) argv.push_back(a);
  for (const std::string& a : o.extra_pytest_args) argv.push_back(a);

  std::map<std::string, std::string> env = plan.child_env;
  const char* pp = std::getenv("PYTHONPATH");
  env["PYTHONPATH"] = python_plugin_dir() + (pp != nullptr && *pp != '\0' ? ":" + std::string(pp) : "");
  env["PYTHONUNBUFFERED"] = "1";
  for (const std::string& var : backend.visibility_env()) env[var] = device.visibility_value;
  if (!backend.framework_vendor().empty()) env["GEMS_VENDOR"] = backend.framework_vendor();
  env["ZL_RUN_DIR"] = run_dir;
  env["ZL_RESULTS_FILE"] = (rd / "results.jsonl").string();
  env["ZL_CHILD_DIR"] = child_dir.string();
  env["ZL_BACKEND"] = backend.name();
  env["ZL_TORCH_DEVICE"] = backend.torch_device();
  env["ZL_VISIBILITY_ENV"] = join(backend.visibility_env(), ",");
  env["ZL_EXPECT_DEVICE_ID"] = device.id;
  std::vector<std::string> caps;
  for (const auto& [k, v] : backend.capabilities()) caps.push_back(k + "=" + v);
  env["ZL_CAPABILITIES"] = join(caps, ";");
  env["ZL_TIMER"] = plan.timer;
  env["ZL_TIMER_FALLBACK"] = plan.timer_fallback;
  add_device_env(env, backend, device);  // ABI 1.2 peaks and state (device_facts.hpp)
  for (const auto& [k, v] : o.knobs) env[k] = v;
  for (const auto& [k, v] : autotune.child_env) env[k] = v;
  if (cache.isolated) {
    env["FLAGGEMS_CACHE_DIR"] = cache.flaggems;
    env["TRITON_CACHE_DIR"] = cache.triton;
    env["ZL_ISOLATE_TUNER_CACHE"] = "1";
  }

  Identity& id = state.id;
  const std::string run_id = stamp() + "-" + safe_component(target.op) + "-" + backend.name() + "-" + short_random();
  autotune.run_id = run_id;
  id.set("schema", int64_t{1});
  id.set("run_id", run_id);
  id.set("zlcore_version", ZL_VERSION);
  id.set("status", "running");
  id.set_null("exit_code");
  id.set("started", started_at);
  id.set("backend.name", backend.name());
  id.set("backend.abi", backend.abi());
  id.set("backend.version", backend.backend_version());
  id.set("backend.path", backend.path());
  id.set("device.index", int64_t{device.index});
  id.set("device.id", device.id);
  id.set("device.name", device.name);
  id.set("device.memory_total_bytes", static_cast<int64_t>(device.memory_total_bytes));
  id.set("device.visibility", [&] {
    std::map<std::string, std::string> m;
    for (const std::string& var : backend.visibility_env()) m[var] = device.visibility_value;
    return m;
  }());
  // The pin the environment already held, which restricted the choice.
  id.set("device.pinned_by_env", visible.pins);
  record_device_start(id, backend, device);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  id.set("host.name", std::string(host));
  for (const char* var : {"SLURM_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_JOB_ID"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') id.set(std::string("host.") + var, std::string(v));
  }
  id.set("test_node", target.selection());
  id.set("op", target.op);
  id.set("marker", target.marker);
  if (!target.also_marked_in.empty()) id.set("also_marked_in", target.also_marked_in);
  if (!target.marks.empty()) id.set("marks", target.marks);
  id.set("flaggems_dir", provider.root());
  id.set("suite.embedded", embedded);
  id.set("bench_level", o.level);
  id.set("mode", o.mode);
  id.set("dtypes", o.dtypes);
  id.set("shapes.mode", o.shape_mode);
  id.set("shapes.mode_from", o.shape_mode_from);
  id.set("shapes.file", shape_source);
  if (shape_hash.empty()) {
    id.set_null("shapes.sha256");
  } else {
    id.set("shapes.sha256", shape_hash);
  }
  // Under operator/wrapper FlagGems measures host overhead on purpose and the
  // planned device timer does not apply; the identity says what measured.
  const bool device_time = o.mode == "kernel" || o.mode == "cudagraph";
  id.set("timer.name", device_time ? plan.timer : o.mode);
  id.set("timer.planned", plan.timer);
  id.set("timer.fallback", plan.timer_fallback);
  id.set("timer.fallback_shapes", rapidjson::Value(rapidjson::kArrayType));
  id.set("pytest_plugins", plan.pytest_plugins);
  id.set("tuner_cache.kind", cache.isolated ? "isolated" : "shared");
  id.set("tuner_cache.flaggems_dir", cache.flaggems);
  id.set("tuner_cache.triton_dir", cache.triton);
  id.set("tuner_cache.winners_present", static_cast<int64_t>(before.winners.size()));
  id.set("tuner_cache.entries_present", static_cast<int64_t>(before.triton_entries.size()));
  id.set("autotune.mode", autotune.mode);
  if (autotune.mode == "replay") {
    id.set("autotune.source", autotune.records_dir);
    id.set("autotune.source_run_id", autotune.source_run_id);
    id.set("autotune.records_hash", autotune.records_hash);
    id.set("autotune.records_hash_modified", !autotune.manifest_hash.empty() && autotune.manifest_hash != autotune.records_hash);
    if (autotune.source_triton.empty()) {
      id.set_null("autotune.source_triton");
    } else {
      id.set("autotune.source_triton", autotune.source_triton);
    }
    id.set("autotune.force", autotune.force);
    id.set("autotune.replay_libtuner_rows", int64_t{autotune.replay_rows});
    id.set("autotune.replay_triton_kernels", int64_t{autotune.replay_kernels});
  } else {
    id.set_null("autotune.source_run_id");
    id.set_null("autotune.records_hash");
  }
  id.set("worker.kind", o.worker);
  id.set("worker.ops_before", int64_t{o.worker_ops_before});
  id.set("warmup.warmed", !o.warmed_on.empty());
  if (!o.warmed_on.empty()) id.set("warmup.device", o.warmed_on);
  if (!o.batch_dir.empty()) id.set("batch_dir", o.batch_dir);
  id.set("versions.zlcore", ZL_VERSION);
  id.set("versions.python", python_version);
  id.set("python.command", python.command);
  id.set("python.path", python.path);
  id.set("python.requested", python.requested);
  if (!python.passed_over.empty()) id.set("python.passed_over", python.passed_over);
  id.set("env_choices", o.env_choices);
  id.set("env", number_knobs(env));
  id.set("command", argv);
  id.set("zlcore_command", o.command_line);
  const std::string identity_path = (rd / "run_identity.json").string();
  id.write(identity_path);
  half_made.keep = true;  // from here on the directory says what happened
  state.identity_path = identity_path;

  std::string header;
  header += "zlcore run " + run_id + "\n";
  header += "  op           " + target.op + "   (" + target.display() + ")\n";
  header += "  suite        " + provider.root() +
            (embedded ? "   (the embedded example suite: no --flaggems-dir / FLAGGEMS_DIR given)" : "") + "\n";
  header += "  backend      " + backend.name() + "   device [" + std::to_string(device.index) + "] " + device.name +
            "  " + device.id + "\n";
  if (!visible.pins.empty()) {
    std::vector<std::string> offered;
    for (const Device& d : visible.query.devices) offered.push_back(std::to_string(d.index));
    header += "  device pin   " + visible.describe() + " was already set: only device(s) " + join(offered, ",") +
              " offered\n";
  }
  header += "  python       " + python.path + "  (Python " + python.version + ")" +
            (python.passed_over.empty() ? "" : "   chosen because " + join(python.passed_over, "; ")) + "\n";
  header += "  timer        " + (device_time ? plan.timer : o.mode + " (FlagGems host-overhead mode)") +
            (device_time && !plan.timer_fallback.empty() ? "  (per-shape fallback " + plan.timer_fallback + ")" : "") +
            "\n";
  header += "  bench level  " + o.level + "   mode " + o.mode + "   dtypes " +
            (o.dtypes.empty() ? std::string("(op's own)") : join(o.dtypes, ",")) + "\n";
  header += "  shapes       " + o.shape_mode +
            (o.shape_mode_from == "default" ? std::string() : " (" + o.shape_mode_from + ")") + "  " + shape_source +
            (shape_hash.empty() ? "" : "  sha256 " + shape_hash.substr(0, 12)) + "\n";
  header += "  tuner cache  " + std::string(cache.isolated ? "isolated" : "shared") + "  (" +
            std::to_string(before.winners.size()) + " winners, " + std::to_string(before.triton_entries.size()) +
            " Triton cache entries present)\n";
  header += "  autotune     " + autotune.mode + (autotune.mode == "replay" ? "  from " + autotune.records_dir : "") + "\n";
  if (!o.env_choices.empty()) {
    std::vector<std::string> vars;
    for (const auto& [k, v] : o.env_choices) vars.push_back(k + "=" + v);
    header += "  from env     " + join(vars, "  ") + "\n";
  }
  for (const std::string& note : o.notes) header += "  note         " + note + "\n";
  header += "  run dir      " + run_dir + "\n";
  // The op, the node and the paths are whatever was given: as printed, escaped.
  header = printable_lines(header);
  write_file_atomic((rd / "header.txt").string(), header);
  if (!o.quiet) std::cout << header << std::flush;

  ChildSpec spec;
  spec.argv = argv;
  spec.env_set = env;
  spec.cwd = provider.root();
  spec.log_path = (rd / "pytest.log").string();
  spec.echo = !o.quiet;
  spec.echo_printable = true;
  spec.new_group = !o.same_process_group;
  ChildResult child;
  bool ran_warm = false;
  if (!o.worker_socket.empty()) {
    // A warm worker imported flag_gems (and with it read FLAGGEMS_CACHE_DIR /
    // TRITON_CACHE_DIR and filled its tuner caches) before this op: an op
    // whose A/B needs its own cold caches gets a fresh process instead.
    std::string cold_because;
    if (cache.isolated) {
      cold_because = "isolated tuner cache: needs a process that imported with its own cache dirs";
    } else if (autotune.mode == "record" || autotune.mode == "replay") {
      cold_because = "autotune " + autotune.mode + ": needs cold tuner caches";
    }
    WorkerSession worker;
    std::string error;
    if (cold_because.empty() && !worker.connect(o.worker_socket, o.timeout_s, &error)) {
      cold_because = "no warm worker: " + error;
    }
    if (cold_because.empty()) {
      ran_warm = true;
      id.set("worker.kind", "warm");
      id.set("worker.ops_before", int64_t{worker.ops_before()});
      id.set("worker.pid", int64_t{worker.pid()});
      id.write(identity_path);
      std::vector<std::string> pytest_args(argv.begin() + 3, argv.end());  // after `python -m pytest`
      child = signals::interrupt_count() > 0 ? interrupted_before_start()
                                             : worker.run(pytest_args, env, spec.cwd, spec.log_path, o.timeout_s);
      id.set("worker.healthy", worker.healthy());
      if (!worker.healthy()) id.set("worker.unhealthy_reason", worker.health_reason());
    } else {
      id.set("worker.kind", "cold");
      id.set("worker.ops_before", int64_t{0});
      id.set("worker.reason", cold_because);
      id.write(identity_path);
    }
  }
  if (!ran_warm) child = signals::interrupt_count() > 0 ? interrupted_before_start() : run_child(spec, o.timeout_s);

  auto& a = id.alloc();
  rapidjson::Value plugins = merge_child_reports(id, child_dir);
  record_git(id, git.get());

  // Tuner cache and autotune bookkeeping, then drop an isolated cache.
  CacheSnapshot after = snapshot_cache(cache);
  std::vector<KernelInfo> kernels = new_kernels(cache, before, after);
  write_file_atomic((rd / "kernels.csv").string(), kernels_csv(kernels));
  int new_winners = 0;
  for (const WinnerKey& w : after.winners) new_winners += before.winners.count(w) ? 0 : 1;
  // Kernels only: the new entries' launcher stubs are not variants.
  const auto compiled = static_cast<int64_t>(kernels.size());
  id.set("tuner_cache.variants_compiled", compiled);
  id.set("tuner_cache.cache_entries_added",
         static_cast<int64_t>(after.triton_entries.size()) - static_cast<int64_t>(before.triton_entries.size()));
  id.set("tuner_cache.new_winners", int64_t{new_winners});
  AutotuneResult at = finish_autotune(autotune, cache, before, run_dir);
  id.set("autotune.variants_compiled", compiled);
  if (at.tuning_benchmarks >= 0) {
    id.set("autotune.tuning_benchmarks", int64_t{at.tuning_benchmarks});
  } else {
    id.set_null("autotune.tuning_benchmarks");
  }
  if (autotune.mode == "record") {
    id.set("autotune.records_hash", at.records_hash);
    id.set("autotune.records_written", int64_t{at.records_written});
    id.set("autotune.record_files", int64_t{at.record_files});
  }
  if (at.winners_hash.empty()) {
    id.set_null("autotune.winners_hash");
  } else {
    id.set("autotune.winners_hash", at.winners_hash);
    rapidjson::Value kernels(rapidjson::kObjectType);
    for (const auto& [name, k] : at.winners) {
      rapidjson::Value v(rapidjson::kObjectType);
      v.AddMember("kind", json::str(k.kind, a), a);
      v.AddMember("entries", k.entries, a);
      v.AddMember("sha256", json::str(k.sha256, a), a);
      kernels.AddMember(json::str(name, a), v, a);
    }
    id.set("autotune.winners", std::move(kernels));
  }
  id.set("autotune.replay_misses", int64_t{at.replay_misses});
  if (at.replay_refused > 0) id.set("autotune.replay_refused", int64_t{at.replay_refused});
  if (!at.replay_miss_examples.empty()) id.set("autotune.replay_miss_examples", at.replay_miss_examples);
  if (const rapidjson::Value* atj = member(plugins, "autotune")) id.set("autotune.plugin", rapidjson::Value(*atj, a));
  if (at.used_winners >= 0) id.set("tuner_cache.used_winners", int64_t{at.used_winners});
  if (at.inherited_winners >= 0) id.set("tuner_cache.inherited_winners", int64_t{at.inherited_winners});
  if (!id.get("tuner_cache.inherited_winners")) {
    // Without the plugin's lookups, the winners already present for the
    // kernels this run wrote to or compiled are the best available count.
    id.set("tuner_cache.inherited_winners", cache.isolated ? int64_t{0} : static_cast<int64_t>(before.winners.size()));
  }
  std::error_code ec;
  if (cache.isolated && !opts.keep_tuner_cache) fs::remove_all(rd / ".tuner_cache", ec);
  if (cache.isolated) id.set("tuner_cache.kept", opts.keep_tuner_cache);
  id.set("plugins", std::move(plugins));

  ChildFacts facts;
  facts.child = child;
  if (const rapidjson::Value* reported = id.get("plugins")) facts.outcomes = member(*reported, "outcomes");
  facts.rows = count_rows((rd / "results.jsonl").string());
  facts.log_tail = file_tail(spec.log_path, 64 * 1024);
  RunStatus end = decide_status(facts, FlagGemsProvider::is_decline);
  // An interrupt that arrived after the child ended still ends the run here.
  if (end.status == "passed" && signals::interrupt_count() > 0) end = make_status("interrupted", kExitInterrupted, "interrupted");
  const std::string& status = end.status;
  const int exit_code = end.exit_code;
  if (!end.reason.empty()) id.set("reason", end.reason);
  if (status == "crashed" || status == "failed" || status == "harness_error") id.set("error", end.reason);
  id.set("tests.passed", int64_t{end.passed_tests});
  id.set("tests.skipped", int64_t{end.skipped_tests});
  id.set("tests.failed", end.failed_tests);
  id.set("tests.declined", end.declined_tests);
  id.set("rows", int64_t{facts.rows.total});
  id.set("status", status);
  id.set("exit_code", int64_t{exit_code});
  id.set("child_exit_code", int64_t{child.exit_code});
  if (child.term_signal != 0) id.set("child_signal", int64_t{child.term_signal});
  record_device_end(id, backend, device);
  id.set("ended", utc_now_iso());
  id.set("seconds", monotonic_seconds() - t_start);
  id.set("child_seconds", child.seconds);
  // pytest (or what it imports) failing to write is a full disk too.
  if (end.reason.find("No space left on device") != std::string::npos || end.reason.find("[Errno 28]") != std::string::npos) {
    id.set("disk_full", true);
  }
  id.write(identity_path);
  fs::remove_all(child_dir, ec);

  if (!o.quiet) {
    std::cout << "\n" << printable_lines(format_results_table((rd / "results.jsonl").string()));
    std::cout << "status " << status << " (exit " << exit_code << ")  " << printable(run_dir) << "\n";
  }
  return exit_code;
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
    id.set("status", "failed");
    id.set("exit_code", int64_t{kExitFailed});
    id.set("reason", reason);
    id.set("error", reason);
    if (full) id.set("disk_full", true);
    id.set("ended", utc_now_iso());
    id.set("seconds", monotonic_seconds() - state.t_start);
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
