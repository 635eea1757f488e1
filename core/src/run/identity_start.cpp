// Stage `identity_start`: the identity as it stands before the child runs
// (status `running`), and the header printed above the child's output.
#include <unistd.h>

#include <cstdlib>

#include "../util/build_commit.hpp"
#include "../util/printable.hpp"
#include "../util/text.hpp"
#include "stages.hpp"
#include "zlcore/l2_policy.hpp"

namespace zl::run_stage {

namespace key = identity::key;

namespace {

// Under operator/wrapper FlagGems measures host overhead on purpose and the
// planned device timer does not apply; the identity says what measured.
bool device_timed(const RunOptions& o) { return o.mode == "kernel" || o.mode == "cudagraph"; }

void set_or_null(Identity& id, const char* path, const std::string& value) {
  if (value.empty()) {
    id.set_null(path);
  } else {
    id.set(path, value);
  }
}

void start_device(Identity& id, const Backend& backend, const Resolved& r) {
  id.set(key::backend_name, backend.name());
  id.set(key::backend_abi, backend.abi());
  id.set(key::backend_version, backend.backend_version());
  id.set(key::backend_path, backend.path());
  id.set(key::device_index, int64_t{r.device.index});
  id.set(key::device_id, r.device.id);
  id.set(key::device_name, r.device.name);
  id.set(key::device_memory_total_bytes, static_cast<int64_t>(r.device.memory_total_bytes));
  std::map<std::string, std::string> visibility;
  for (const std::string& var : backend.visibility_env()) visibility[var] = r.device.visibility_value;
  id.set(key::device_visibility, visibility);
  // The pin the environment already held, which restricted the choice.
  id.set(key::device_pinned_by_env, r.visible.pins);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  id.set(key::host_name, std::string(host));
  for (const char* var : {"SLURM_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_JOB_ID"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') id.set(std::string(key::host) + "." + var, std::string(v));
  }
}

void start_target(Identity& id, const Plan& plan, const Resolved& r, const Shapes& shapes) {
  const RunOptions& o = r.options;
  const TestTarget& t = r.target;
  id.set(key::test_node, t.selection());
  id.set(key::op, t.op);
  id.set(key::marker, t.marker);
  if (!t.also_marked_in.empty()) id.set(key::also_marked_in, t.also_marked_in);
  if (!t.marks.empty()) id.set(key::marks, t.marks);
  id.set(key::flaggems_dir, r.provider.root());
  id.set(key::suite_embedded, r.embedded);
  id.set(key::bench_level, o.level);
  id.set(key::mode, o.mode);
  id.set(key::dtypes, o.dtypes);
  id.set(key::shapes_mode, o.shape_mode);
  id.set(key::shapes_mode_from, o.shape_mode_from);
  id.set(key::shapes_file, shapes.source);
  set_or_null(id, key::shapes_sha256, shapes.sha256);
  id.set(key::timer_name, device_timed(o) ? plan.timer : o.mode);
  id.set(key::timer_planned, plan.timer);
  id.set(key::timer_fallback, plan.timer_fallback);
  id.set(key::timer_fallback_shapes, rapidjson::Value(rapidjson::kArrayType));
  id.set(key::timer_l2, plan.l2);
  if (plan.l2 == "cold") {
    if (const auto bytes = l2_cache_bytes(r.device)) id.set(key::timer_l2_bytes, *bytes);
  }
  id.set(key::pytest_plugins, plan.pytest_plugins);
  id.set(key::profile, plan.profiler.empty() ? std::string("off") : plan.profiler);
}

void start_caches(Identity& id, const Caches& c) {
  id.set(key::tuner_cache_kind, c.dirs.isolated ? "isolated" : "shared");
  id.set(key::tuner_cache_flaggems_dir, c.dirs.flaggems);
  id.set(key::tuner_cache_triton_dir, c.dirs.triton);
  id.set(key::tuner_cache_winners_present, static_cast<int64_t>(c.before.winners.size()));
  id.set(key::tuner_cache_entries_present, static_cast<int64_t>(c.before.triton_entries.size()));
  const AutotuneSetup& at = c.autotune;
  id.set(key::autotune_mode, at.mode);
  if (at.mode == "replay") {
    id.set(key::autotune_source, at.records_dir);
    id.set(key::autotune_source_run_id, at.source_run_id);
    id.set(key::autotune_records_hash, at.records_hash);
    id.set(key::autotune_records_hash_modified, !at.manifest_hash.empty() && at.manifest_hash != at.records_hash);
    set_or_null(id, key::autotune_source_triton, at.source_triton);
    id.set(key::autotune_force, at.force);
    id.set(key::autotune_replay_libtuner_rows, int64_t{at.replay_rows});
    id.set(key::autotune_replay_triton_kernels, int64_t{at.replay_kernels});
    id.set(key::autotune_replay_in_cache, at.in_cache);
  } else {
    id.set_null(key::autotune_source_run_id);
    id.set_null(key::autotune_records_hash);
  }
}

void start_process(Identity& id, const Resolved& r, const ChildCommand& cmd) {
  const RunOptions& o = r.options;
  id.set(key::worker_kind, o.worker);
  id.set(key::worker_ops_before, int64_t{o.worker_ops_before});
  id.set(key::warmup_warmed, !o.warmed_on.empty());
  if (!o.warmed_on.empty()) id.set(key::warmup_device, o.warmed_on);
  if (!o.batch_dir.empty()) id.set(key::batch_dir, o.batch_dir);
  id.set(key::versions_zlcore, ZL_VERSION);
  if (*build_commit() != '\0') {
    id.set(key::versions_zlcore_commit, build_commit());
  } else {
    id.set_null(key::versions_zlcore_commit);
  }
  id.set(key::versions_python, r.python.version);
  id.set(key::python_command, r.python.command);
  id.set(key::python_path, r.python.path);
  id.set(key::python_requested, r.python.requested);
  if (!r.python.passed_over.empty()) id.set(key::python_passed_over, r.python.passed_over);
  id.set(key::env_choices, o.env_choices);
  id.set(key::env, number_knobs(cmd.env));
  id.set(key::command, cmd.argv);
  id.set(key::zlcore_command, o.command_line);
}

}  // namespace

void identity_start(Identity& id, const Backend& backend, const Plan& plan, const Resolved& r, const Caches& caches,
                    const Shapes& shapes, const ChildCommand& cmd, const std::string& run_id) {
  id.set(key::schema, int64_t{1});
  id.set(key::run_id, run_id);
  id.set(key::zlcore_version, ZL_VERSION);
  id.set(key::status, "running");
  id.set_null(key::exit_code);
  id.set(key::started, r.started_at);
  start_device(id, backend, r);
  start_target(id, plan, r, shapes);
  start_caches(id, caches);
  start_process(id, r, cmd);
}

std::string run_header(const Backend& backend, const Plan& plan, const Resolved& r, const Caches& caches,
                       const Shapes& shapes, const std::string& run_id, const std::string& run_dir) {
  const RunOptions& o = r.options;
  const bool device_time = device_timed(o);
  const CacheSnapshot& before = caches.before;
  std::string h;
  h += "zlcore run " + run_id + "\n";
  h += "  op           " + r.target.op + "   (" + r.target.display() + ")\n";
  h += "  suite        " + r.provider.root() +
       (r.embedded ? "   (the embedded example suite: no --flaggems-dir / FLAGGEMS_DIR given)" : "") + "\n";
  h += "  backend      " + backend.name() + "   device [" + std::to_string(r.device.index) + "] " + r.device.name +
       "  " + r.device.id + "\n";
  if (!r.visible.pins.empty()) {
    std::vector<std::string> offered;
    for (const Device& d : r.visible.query.devices) offered.push_back(std::to_string(d.index));
    h += "  device pin   " + r.visible.describe() + " was already set: only device(s) " + text::join(offered, ",") +
         " offered\n";
  }
  h += "  python       " + r.python.path + "  (Python " + r.python.version + ")" +
       (r.python.passed_over.empty() ? "" : "   chosen because " + text::join(r.python.passed_over, "; ")) + "\n";
  h += "  timer        " + (device_time ? plan.timer : o.mode + " (FlagGems host-overhead mode)") +
       (device_time && !plan.timer_fallback.empty() ? "  (per-shape fallback " + plan.timer_fallback + ")" : "") + "\n";
  h += "  bench level  " + o.level + "   mode " + o.mode + "   dtypes " +
       (o.dtypes.empty() ? std::string("(op's own)") : text::join(o.dtypes, ",")) + "\n";
  h += "  shapes       " + o.shape_mode +
       (o.shape_mode_from == "default" ? std::string() : " (" + o.shape_mode_from + ")") + "  " + shapes.source +
       (shapes.sha256.empty() ? "" : "  sha256 " + shapes.sha256.substr(0, 12)) + "\n";
  h += "  tuner cache  " + std::string(caches.dirs.isolated ? "isolated" : "shared") + "  (" +
       std::to_string(before.winners.size()) + " winners, " + std::to_string(before.triton_entries.size()) +
       " Triton cache entries present)\n";
  h += "  autotune     " + caches.autotune.mode +
       (caches.autotune.mode == "replay" ? "  from " + caches.autotune.records_dir : "") + "\n";
  if (!o.env_choices.empty()) {
    std::vector<std::string> vars;
    for (const auto& [k, v] : o.env_choices) vars.push_back(k + "=" + v);
    h += "  from env     " + text::join(vars, "  ") + "\n";
  }
  for (const std::string& note : o.notes) h += "  note         " + note + "\n";
  h += "  run dir      " + run_dir + "\n";
  // The op, the node and the paths are whatever was given: as printed, escaped.
  return printable_lines(h);
}

}  // namespace zl::run_stage
