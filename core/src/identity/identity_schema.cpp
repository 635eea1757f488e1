#include "zlcore/identity_schema.hpp"

#include <algorithm>

namespace zl::identity {

const std::vector<Field>& fields() {
  using W = Writer;
  static const std::vector<Field> table = {
      {key::schema, W::core, false, "version of this layout (1)"},
      {key::run_id, W::core, false, "<UTC stamp>-<op>-<backend>-<4 hex>"},
      {key::zlcore_version, W::core, false, "the zlcore that ran (older identities: the only version)"},
      {key::status, W::core, false, "`running` until the run ends, then its status (Statuses, below)"},
      {key::exit_code, W::core, false, "zlcore's exit code (null while running)"},
      {key::started, W::core, false, "UTC, ISO 8601 with milliseconds"},
      {key::backend_name, W::core, true, "the backend's canonical name"},
      {key::backend_abi, W::core, false, "the ABI version the backend reported"},
      {key::backend_version, W::core, false, "the backend's own version"},
      {key::backend_path, W::core, false, "the backend's .so"},
      {key::device_index, W::core, false, "the device's index as the backend lists it"},
      {key::device_id, W::core, false, "the device's stable id (UUID, bus id)"},
      {key::device_name, W::core, true, "the device's name"},
      {key::device_memory_total_bytes, W::core, false, "its memory (0: unknown)"},
      {key::device_visibility, W::core, false, "the visibility variables set for the child, with their value"},
      {key::device_pinned_by_env, W::core, false, "a visibility variable already set in zlcore's environment"},
      {"device.attributes.*", W::core, false, "the backend's named device attributes (ABI 1.2), typed"},
      {"device.state_start.*", W::core, false, "the device's state before the child (ABI 1.2 state query)"},
      {"device.state_end.*", W::core, false, "its state after the child"},
      {"device.state_error_start", W::core, false, "why the state query failed before the child"},
      {"device.state_error_end", W::core, false, "why it failed after the child"},
      {"host.*", W::core, false, "`name`, and the Slurm job and array ids when set"},
      {key::test_node, W::core, false, "the node or the files run (space separated)"},
      {key::op, W::core, false, "the mark run"},
      {key::marker, W::core, false, "the `-m` value"},
      {key::also_marked_in, W::core, false, "files that mark the op but did not run"},
      {key::marks, W::core, false, "every op of a file run with `--op-file` alone"},
      {key::flaggems_dir, W::core, false, "the suite's root"},
      {key::suite_embedded, W::core, false, "no suite given: the example suite installed with zlcore ran"},
      {key::timer_name, W::core, true, "what measured: the planned timer, or FlagGems' host-overhead mode"},
      {key::timer_planned, W::core, false, "the plan's timer"},
      {key::timer_fallback, W::core, true, "the plan's per-shape fallback timer"},
      {key::timer_fallback_shapes, W::plugin, true, "shapes that fell back, with dtype, side and reason"},
      {key::timer_settings, W::plugin, true, "every timer setting, defaults included"},
      {key::timer_sides_extended, W::plugin, false, "graph-timed sides measured by the sustained procedure"},
      {key::timer_sides_unsettled, W::plugin, false, "those whose readings never held"},
      {key::timer_clock_check, W::plugin, false,
       "the graph timer's clock check: `setting` (off, auto, on), `active` (every graph-timed side checked) and "
       "`why_off`, `sides_checked`, `sides_unchecked`, `windows_dropped`, `sides_throttled` (sides left without a "
       "number); its thresholds are in timer.settings"},
      {key::timer_seconds_measuring, W::plugin, false, "wall seconds inside the timer, every side of every shape"},
      {key::timer_seconds_in_session, W::plugin, false,
       "wall seconds of the child's pytest session: collection, the suite's own work per shape, the timer"},
      {key::bench_level, W::core, true, "FlagGems' `--level`"},
      {key::mode, W::core, true, "FlagGems' `--mode`"},
      {key::dtypes, W::core, false, "`--dtypes` as given (empty: each op's own)"},
      {key::shapes_mode, W::core, true, "`upstream` or `file`"},
      {key::shapes_mode_from, W::core, false, "how the mode was chosen"},
      {key::shapes_file, W::core, false, "the shape file used"},
      {key::shapes_sha256, W::core, true, "its sha256 (null: the suite has none)"},
      {key::pytest_plugins, W::core, false, "the planned `-p` modules"},
      {key::profile, W::core, false,
       "`off`, or the profiler `--profile` ran once per (shape, side) after its measurement (not caliber: the pass "
       "lies outside every timing window; docs/profile.md)"},
      {key::tuner_cache_kind, W::core, true, "`isolated` or `shared`"},
      {key::tuner_cache_flaggems_dir, W::core, false, "FLAGGEMS_CACHE_DIR the child got"},
      {key::tuner_cache_triton_dir, W::core, false, "TRITON_CACHE_DIR the child got"},
      {key::tuner_cache_winners_present, W::core, false, "LibTuner rows in the cache before the child"},
      {key::tuner_cache_entries_present, W::core, false, "Triton cache entries before the child"},
      {key::tuner_cache_variants_compiled, W::core, false, "new kernel binaries"},
      {key::tuner_cache_cache_entries_added, W::core, false, "new cache directories of any kind"},
      {key::tuner_cache_new_winners, W::core, false, "LibTuner rows added"},
      {key::tuner_cache_used_winners, W::core, false, "winners the autotune plugin saw used"},
      {key::tuner_cache_inherited_winners, W::core, true, "winners used without tuning them"},
      {key::tuner_cache_kept, W::core, false, "isolated caches: whether `--keep-tuner-cache` kept it"},
      {key::autotune_mode, W::core, false, "`tune`, `record` or `replay` (compared as a pairing)"},
      {key::autotune_source, W::core, false, "replay: the records directory"},
      {key::autotune_source_run_id, W::core, false, "replay: the run that recorded them"},
      {key::autotune_records_hash, W::core, false, "the records' hash (record: written; replay: read)"},
      {key::autotune_records_hash_modified, W::core, false, "replay: the records changed since they were written"},
      {key::autotune_source_triton, W::core, false, "replay: the Triton version that recorded them"},
      {key::autotune_force, W::core, false, "replay: `--force-replay`"},
      {key::autotune_replay_libtuner_rows, W::core, false, "replay: LibTuner rows seeded into the cache"},
      {key::autotune_replay_triton_kernels, W::core, false, "replay: plain-autotune kernels pinned"},
      {key::autotune_replay_in_cache, W::core, false,
       "replay: `--replay-in-cache`, the records written into the cache in use (a caller's own), not an isolated one"},
      {key::autotune_variants_compiled, W::core, false, "as tuner_cache.variants_compiled"},
      {key::autotune_tuning_benchmarks, W::core, false, "configs the tuners timed (null: unknown)"},
      {key::autotune_records_written, W::core, false, "record: records written"},
      {key::autotune_record_files, W::core, false, "record: files written"},
      {key::autotune_winners_hash, W::core, false, "hash over the winners' digests (compared as a pairing)"},
      {key::autotune_winners, W::core, false, "per kernel: kind, entries, sha256"},
      {key::autotune_replay_misses, W::core, false, "replayed kernels that found no winner"},
      {key::autotune_replay_refused, W::core, false, "records replay refused"},
      {key::autotune_replay_miss_examples, W::core, false, "the first misses"},
      {key::autotune_plugin, W::plugin, false, "the autotune plugin's report"},
      {key::worker_kind, W::core, true, "`cold` or `warm`"},
      {key::worker_ops_before, W::core, false, "ops the warm worker ran before this one"},
      {key::worker_pid, W::core, false, "the warm worker's pid"},
      {key::worker_standby, W::core, false,
       "true: the worker began as a standby, importing what touches no device before it took over"},
      {key::worker_reason, W::core, false, "why a batch op that asked for a worker ran cold"},
      {key::worker_healthy, W::core, false, "the warm worker's check of itself after the op"},
      {key::worker_unhealthy_reason, W::core, false, "why that check failed"},
      {key::worker_wait_seconds, W::core, false,
       "how long the op waited for the warm worker to be ready (its imports)"},
      {key::worker_memory_baseline_bytes, W::core, false,
       "device memory the warm worker had allocated before its first op"},
      {key::worker_memory_after_bytes, W::core, false,
       "what it still had allocated after this op, collected and emptied (at most the baseline plus "
       "ZL_WARM_MEMORY_MARGIN_MB, else it is replaced)"},
      {key::worker_memory_reserved_after_bytes, W::core, false, "what its allocator still reserved then"},
      {key::warmup_warmed, W::core, false, "a batch warmed this op on another device first"},
      {key::warmup_device, W::core, false, "that device's id"},
      {key::batch_dir, W::core, false, "the batch this run belongs to"},
      {key::versions_zlcore, W::core, true, "zlcore's version"},
      {key::versions_zlcore_commit, W::core, false,
       "the git commit zlcore was built from, `-dirty` with uncommitted changes (null: built outside git)"},
      {key::versions_python, W::core, true, "the child's Python"},
      {key::versions_torch, W::plugin, true, "torch (device_setup)"},
      {key::versions_triton, W::plugin, true, "triton (device_setup)"},
      {key::versions_flaggems_version, W::core, true,
       "the operator library's version (device_setup's `versions.flag_gems`)"},
      {key::versions_flaggems_git_sha, W::core, true, "its git SHA (`versions.flaggems_git.sha`)"},
      {key::versions_flaggems_dirty, W::core, true, "its dirty flag (`versions.flaggems_git.dirty`)"},
      {"versions.*", W::plugin, false, "every other version device_setup reports (flag_gems, suite, torch_cuda, ...)"},
      {key::versions_flaggems_git_sha_core, W::core, false, "the suite's git SHA as zlcore read it (null: no git)"},
      {key::versions_flaggems_git_dirty, W::core, false, "its dirty flag (null: unknown)"},
      {key::versions_flaggems_git_note, W::core, false, "why git could not say"},
      {key::device_framework, W::plugin, false, "the framework's view of the device (device_setup)"},
      {key::python_command, W::core, false, "the interpreter command that ran pytest"},
      {key::python_path, W::core, false, "its resolved path"},
      {key::python_requested, W::core, false, "whether `--python` named it"},
      {key::python_passed_over, W::core, false, "candidates passed over, with why"},
      {key::env_choices, W::core, false, "variables that decided a choice because their flag was absent"},
      {"env.*", W::core, false, "the knobs that change numbers (each compared)"},
      {key::command, W::core, false, "the child's argv"},
      {key::zlcore_command, W::core, false, "zlcore's own argv"},
      {"plugins.*", W::plugin, false, "every plugin's side facts (.child/<plugin>.json), whole"},
      {key::reason, W::core, false, "one line saying why"},
      {key::error, W::core, false, "the reason again for crashed, failed and harness_error"},
      {key::tests_passed, W::core, false, "tests passed"},
      {key::tests_skipped, W::core, false, "tests skipped"},
      {key::tests_failed, W::core, false, "failed tests as `node: message`"},
      {key::tests_declined, W::core, false, "test ids the suite declined"},
      {key::rows, W::core, false, "lines of results.jsonl"},
      {key::child_exit_code, W::core, false, "pytest's exit status"},
      {key::child_signal, W::core, false, "the signal that ended pytest"},
      {key::ended, W::core, false, "UTC, ISO 8601 with milliseconds"},
      {key::seconds, W::core, false, "from `started` to `ended`"},
      {key::child_seconds, W::core, false, "the child's own wall time"},
      {"time.*", W::core, false,
       "where the run's seconds went, one `<part>_s` per part (below, \"Where the time goes\")"},
      {"memory.*", W::plugin, false,
       "device memory: the device's total and free bytes and the process's at the start and end, the rows' "
       "largest suite peak and zlcore-added peak (below, \"Device memory\")"},
      {key::disk_full, W::core, false, "the run ended on a full disk"},
      // ABI 1.2 device attributes that move a number: the driver (codegen and
      // scheduling), the board's power limit and clocks policy (how far clocks
      // boost), ECC (memory bandwidth). Absent on older backends, so they only
      // differ where both runs know them or one side lost them. Last, so that
      // caliber tables keep the order they had before these existed.
      {"device.attributes.driver_version", W::core, true, "the driver's version"},
      {"device.attributes.power_limit_w", W::core, true, "the board's power limit"},
      {"device.attributes.clock_sm_application_mhz", W::core, true, "the application SM clock"},
      {"device.attributes.clocks_policy", W::core, true, "the clocks policy"},
      {"device.attributes.ecc_enabled", W::core, true, "whether ECC is on"},
      // Last for the same reason: the L2 policy, recorded since `--l2`.
      {key::timer_l2, W::core, true,
       "the L2 policy: `cold` (cleared before each timed call, the clears kept out of the time) or `warm` (absent in "
       "older identities, whose timers all ran warm: compare reads it so)"},
      {key::timer_l2_bytes, W::core, false, "cold: the device's L2 size (`l2_cache_bytes`), what each clear covers"},
  };
  return table;
}

bool known(const std::string& path) {
  return std::any_of(fields().begin(), fields().end(), [&](const Field& f) {
    const std::string p = f.path;
    // An open object is known as a whole ("env") and member by member ("env.GEMS_VENDOR").
    if (p.size() > 2 && p.compare(p.size() - 2, 2, ".*") == 0) {
      return path == p.substr(0, p.size() - 2) || path.rfind(p.substr(0, p.size() - 1), 0) == 0;
    }
    return path == p;
  });
}

const std::vector<std::string>& caliber_paths() {
  static const std::vector<std::string> paths = [] {
    std::vector<std::string> out;
    for (const Field& f : fields()) {
      if (f.caliber) out.emplace_back(f.path);
    }
    return out;
  }();
  return paths;
}

}  // namespace zl::identity
