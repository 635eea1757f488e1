// Stage `identity_finish`: what the child left (plugin reports, results, the
// caches it filled) becomes the final identity and the run's status.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <utility>

#include "../util/json.hpp"
#include "../util/json_read.hpp"
#include "stages.hpp"
#include "status.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/signals.hpp"
#include "zlcore/time_breakdown.hpp"

namespace zl::run_stage {

namespace fs = std::filesystem;
namespace key = identity::key;

namespace {

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

const rapidjson::Value* member(const rapidjson::Value& v, const char* name) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(name);
  return it == v.MemberEnd() ? nullptr : &it->value;
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
        id.set(std::string(key::versions) + "." + k, rapidjson::Value(it->value, a));
      }
    }
    if (const rapidjson::Value* dev = member(*ds, "device")) id.set(key::device_framework, rapidjson::Value(*dev, a));
  }
  if (const rapidjson::Value* timing = member(plugins, "timing")) {
    if (const rapidjson::Value* fb = member(*timing, "fallback_shapes")) {
      id.set(key::timer_fallback_shapes, rapidjson::Value(*fb, a));
    }
    // Every setting the timers measured with, defaults included: two builds
    // whose defaults differ measure differently with the same environment.
    if (const rapidjson::Value* st = member(*timing, "settings")) id.set(key::timer_settings, rapidjson::Value(*st, a));
    // Graph-timed sides whose pace moved past the minimum of windows
    // (extended), and those whose pace never held (unsettled).
    if (const rapidjson::Value* v = member(*timing, "sides_extended"); v && v->IsInt64()) {
      id.set(key::timer_sides_extended, v->GetInt64());
    }
    if (const rapidjson::Value* v = member(*timing, "sides_unsettled"); v && v->IsInt64()) {
      id.set(key::timer_sides_unsettled, v->GetInt64());
    }
    // Whether the graph timer's clock check ran on every side, why not, and
    // the windows it dropped: its settings alone do not say whether it ran.
    if (const rapidjson::Value* v = member(*timing, "clock_check"); v && v->IsObject()) {
      id.set(key::timer_clock_check, rapidjson::Value(*v, a));
    }
    // What a run costs beside its measurements: the session's seconds less
    // the timer's are the suite's own (inputs, collection); the run's less
    // the session's, the interpreter's start and zlcore.
    if (const rapidjson::Value* v = member(*timing, "seconds_measuring"); v && v->IsNumber()) {
      id.set(key::timer_seconds_measuring, v->GetDouble());
    }
    if (const rapidjson::Value* v = member(*timing, "seconds_in_session"); v && v->IsNumber()) {
      id.set(key::timer_seconds_in_session, v->GetDouble());
    }
  }
  return plugins;
}

void record_git(Identity& id, const GitInfo& gi) {
  if (gi.sha) {
    id.set(key::versions_flaggems_git_sha_core, *gi.sha);
  } else {
    id.set_null(key::versions_flaggems_git_sha_core);
  }
  if (gi.dirty) {
    id.set(key::versions_flaggems_git_dirty, *gi.dirty);
  } else {
    id.set_null(key::versions_flaggems_git_dirty);
  }
  if (!gi.note.empty()) id.set(key::versions_flaggems_git_note, gi.note);
  // The caliber compares versions.flaggems.{version,git_sha,dirty}; the facts
  // come from two writers (device_setup's module version, git's view of the
  // tree), so they are copied here, after both, or no A/B would ever see the
  // library change.
  const rapidjson::Value* library = id.get("versions.flag_gems");
  if (library != nullptr && library->IsString()) {
    id.set(key::versions_flaggems_version, std::string(library->GetString()));
  } else {
    id.set_null(key::versions_flaggems_version);
  }
  if (gi.sha) {
    id.set(key::versions_flaggems_git_sha, *gi.sha);
  } else {
    id.set_null(key::versions_flaggems_git_sha);
  }
  if (gi.dirty) {
    id.set(key::versions_flaggems_dirty, *gi.dirty);
  } else {
    id.set_null(key::versions_flaggems_dirty);
  }
}

// The tuner cache and autotune bookkeeping: what the child compiled, tuned,
// inherited and (record mode) wrote down.
void finish_caches(Identity& id, Caches& caches, const rapidjson::Value& plugins, const std::string& run_dir,
                   bool keep_cache) {
  auto& a = id.alloc();
  const fs::path rd(run_dir);
  const CacheDirs& cache = caches.dirs;
  const CacheSnapshot& before = caches.before;
  CacheSnapshot after = snapshot_cache(cache);
  std::vector<KernelInfo> kernels = new_kernels(cache, before, after);
  write_file_atomic((rd / "kernels.csv").string(), kernels_csv(kernels));
  int new_winners = 0;
  for (const WinnerKey& w : after.winners) new_winners += before.winners.count(w) ? 0 : 1;
  // Kernels only: the new entries' launcher stubs are not variants.
  const auto compiled = static_cast<int64_t>(kernels.size());
  id.set(key::tuner_cache_variants_compiled, compiled);
  id.set(key::tuner_cache_cache_entries_added,
         static_cast<int64_t>(after.triton_entries.size()) - static_cast<int64_t>(before.triton_entries.size()));
  id.set(key::tuner_cache_new_winners, int64_t{new_winners});
  const AutotuneSetup& autotune = caches.autotune;
  AutotuneResult at = finish_autotune(autotune, cache, before, run_dir);
  id.set(key::autotune_variants_compiled, compiled);
  if (at.tuning_benchmarks >= 0) {
    id.set(key::autotune_tuning_benchmarks, int64_t{at.tuning_benchmarks});
  } else {
    id.set_null(key::autotune_tuning_benchmarks);
  }
  if (autotune.mode == "record") {
    id.set(key::autotune_records_hash, at.records_hash);
    id.set(key::autotune_records_written, int64_t{at.records_written});
    id.set(key::autotune_record_files, int64_t{at.record_files});
  }
  if (at.winners_hash.empty()) {
    id.set_null(key::autotune_winners_hash);
  } else {
    id.set(key::autotune_winners_hash, at.winners_hash);
    rapidjson::Value winners(rapidjson::kObjectType);
    for (const auto& [name, k] : at.winners) {
      rapidjson::Value v(rapidjson::kObjectType);
      v.AddMember("kind", json::str(k.kind, a), a);
      v.AddMember("entries", k.entries, a);
      v.AddMember("sha256", json::str(k.sha256, a), a);
      winners.AddMember(json::str(name, a), v, a);
    }
    id.set(key::autotune_winners, std::move(winners));
  }
  id.set(key::autotune_replay_misses, int64_t{at.replay_misses});
  if (at.replay_refused > 0) id.set(key::autotune_replay_refused, int64_t{at.replay_refused});
  if (!at.replay_miss_examples.empty()) id.set(key::autotune_replay_miss_examples, at.replay_miss_examples);
  if (const rapidjson::Value* atj = member(plugins, "autotune"))
    id.set(key::autotune_plugin, rapidjson::Value(*atj, a));
  if (at.used_winners >= 0) id.set(key::tuner_cache_used_winners, int64_t{at.used_winners});
  if (at.inherited_winners >= 0) id.set(key::tuner_cache_inherited_winners, int64_t{at.inherited_winners});
  if (!id.get(key::tuner_cache_inherited_winners)) {
    // Without the plugin's lookups, the winners already present for the
    // kernels this run wrote to or compiled are the best available count.
    id.set(key::tuner_cache_inherited_winners,
           cache.isolated ? int64_t{0} : static_cast<int64_t>(before.winners.size()));
  }
  std::error_code ec;
  if (cache.isolated && !keep_cache) fs::remove_all(rd / ".tuner_cache", ec);
  if (cache.isolated) id.set(key::tuner_cache_kept, keep_cache);
}

double number_or(const rapidjson::Value* v, double fallback) {
  return v != nullptr && v->IsNumber() ? v->GetDouble() : fallback;
}

// time.*: where the run's seconds went (docs/run-directory.md, "Where the
// time goes"). The phases plugin's clock covers the pytest session; the
// child's life outside it (interpreter start and exit, or handing the op to a
// warm worker) is `start`; the run's seconds outside the child are zlcore's,
// less the wait for a warm worker that was still importing (its imports).
TimeBreakdown run_time(const Identity& id, const rapidjson::Value& plugins, double seconds, double child_seconds) {
  TimeBreakdown t;
  t.known = true;
  const double wait = number_or(id.get(key::worker_wait_seconds), 0.0);
  t.zlcore = std::max(0.0, seconds - child_seconds - wait);
  t.imports = wait;
  t.start = child_seconds;
  const rapidjson::Value* phases = member(plugins, "phases");
  const rapidjson::Value* part = phases != nullptr ? member(*phases, "seconds") : nullptr;
  if (part == nullptr) return t;  // no clock: the whole child is unattributed start
  t.imports += number_or(member(*part, "imports"), 0.0);
  t.collection = number_or(member(*part, "collection"), 0.0);
  t.compiling = number_or(member(*part, "compiling"), 0.0);
  t.autotuning = number_or(member(*part, "autotuning"), 0.0);
  // --profile's passes are per-shape work of the session outside every timer:
  // counted with the suite's, so that the parts still add up to the child.
  t.suite = number_or(member(*part, "suite"), 0.0) + number_or(member(*part, "profiling"), 0.0);
  t.teardown = number_or(member(*part, "teardown"), 0.0);
  if (const rapidjson::Value* sides = member(*phases, "measuring_by_side")) {
    t.measuring_base = number_or(member(*sides, "base"), 0.0);
    t.measuring_gems = number_or(member(*sides, "gems"), 0.0);
    // A side the tracker could not name still cost the timer's time.
    t.measuring_gems += number_or(member(*sides, "unknown"), 0.0);
  }
  t.start = std::max(0.0, child_seconds - number_or(member(*phases, "span_s"), 0.0));
  return t;
}

void record_time(Identity& id, const TimeBreakdown& t) {
  rapidjson::Value out(rapidjson::kObjectType);
  auto& a = id.alloc();
  for (const TimePart& p : time_parts()) {
    out.AddMember(json::str(std::string(p.name) + "_s", a), rapidjson::Value(std::round(t.*p.field * 1e4) / 1e4), a);
  }
  id.set(key::time, std::move(out));
}

// memory.*: the device's and the process's memory at the session's start
// and end (device_setup) and the rows' largest figures (timing).
void record_memory(Identity& id, const rapidjson::Value& plugins) {
  auto& a = id.alloc();
  rapidjson::Value out(rapidjson::kObjectType);
  if (const rapidjson::Value* ds = member(plugins, "device_setup")) {
    for (const auto& [reported, named] : {std::pair{"memory_at_start", "start"}, std::pair{"memory_at_end", "end"}}) {
      if (const rapidjson::Value* m = member(*ds, reported); m != nullptr && m->IsObject()) {
        out.AddMember(rapidjson::StringRef(named), rapidjson::Value(*m, a), a);
      }
    }
  }
  if (const rapidjson::Value* timing = member(plugins, "timing")) {
    if (const rapidjson::Value* m = member(*timing, "memory"); m != nullptr && m->IsObject()) {
      for (auto it = m->MemberBegin(); it != m->MemberEnd(); ++it) {
        out.AddMember(rapidjson::Value(it->name, a), rapidjson::Value(it->value, a), a);
      }
    }
  }
  if (out.MemberCount() > 0) id.set(key::memory, std::move(out));
}

bool mentions_full_disk(const std::string& reason) {
  return reason.find("No space left on device") != std::string::npos || reason.find("[Errno 28]") != std::string::npos;
}

}  // namespace

Finished identity_finish(Identity& id, const Resolved& r, Caches& caches, const GitInfo& git, const ChildResult& child,
                         const std::string& run_dir, const std::string& log_path, double t_start) {
  const fs::path rd(run_dir);
  const fs::path child_dir = rd / ".child";
  rapidjson::Value plugins = merge_child_reports(id, child_dir);
  record_git(id, git);
  finish_caches(id, caches, plugins, run_dir, r.options.keep_tuner_cache);
  id.set(key::plugins, std::move(plugins));

  ChildFacts facts;
  facts.child = child;
  if (const rapidjson::Value* reported = id.get(key::plugins)) facts.outcomes = member(*reported, "outcomes");
  facts.rows = count_rows((rd / "results.jsonl").string());
  facts.log_tail = file_tail(log_path, size_t{64} * 1024);
  facts.compile_only = r.options.compile_only;
  RunStatus end = decide_status(facts, FlagGemsProvider::is_decline);
  // An interrupt that arrived after the child ended still ends the run here.
  if (end.status == "passed" && signals::interrupt_count() > 0)
    end = make_status("interrupted", kExitInterrupted, "interrupted");
  if (!end.reason.empty()) id.set(key::reason, end.reason);
  if (end.status == "crashed" || end.status == "failed" || end.status == "harness_error")
    id.set(key::error, end.reason);
  id.set(key::tests_passed, int64_t{end.passed_tests});
  id.set(key::tests_skipped, int64_t{end.skipped_tests});
  id.set(key::tests_failed, end.failed_tests);
  id.set(key::tests_declined, end.declined_tests);
  id.set(key::rows, int64_t{facts.rows.total});
  id.set(key::status, end.status);
  id.set(key::exit_code, int64_t{end.exit_code});
  id.set(key::child_exit_code, int64_t{child.exit_code});
  if (child.term_signal != 0) id.set(key::child_signal, int64_t{child.term_signal});
  id.set(key::ended, utc_now_iso());
  const double seconds = monotonic_seconds() - t_start;
  id.set(key::seconds, seconds);
  id.set(key::child_seconds, child.seconds);
  // Each lookup anew: a set() may move the identity's members, and with them
  // a pointer to `plugins` taken before it.
  if (const rapidjson::Value* reported = id.get(key::plugins)) {
    record_time(id, run_time(id, *reported, seconds, child.seconds));
  }
  if (const rapidjson::Value* reported = id.get(key::plugins)) record_memory(id, *reported);
  // pytest (or what it imports) failing to write is a full disk too.
  if (mentions_full_disk(end.reason)) id.set(key::disk_full, true);
  id.write((rd / "run_identity.json").string());
  std::error_code ec;
  fs::remove_all(child_dir, ec);
  return {end.status, end.exit_code};
}

}  // namespace zl::run_stage
