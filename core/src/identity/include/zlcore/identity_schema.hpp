// The run identity's keys (run_identity.json): the one place they are
// spelled. `zlcore run` writes them, `compare` reads them, the caliber check
// compares the ones marked caliber, and docs/run-directory.md's key table is
// checked against fields() by a unit test (tests/unit/identity_schema_test.cpp),
// so a key added here and nowhere else fails the build's tests.
#pragma once

#include <string>
#include <vector>

namespace zl::identity {

// Who writes a field: the core itself, or a pytest plugin whose side facts
// the core merges (device_setup's versions, the timing plugin's settings).
enum class Writer { core, plugin };

struct Field {
  const char* path;  // dotted: "tuner_cache.kind"; a trailing ".*" is an open object
  Writer writer;
  bool caliber;  // a difference between two runs moves a number (compare flags it)
  const char* meaning;
};

// Every key, in the order docs/run-directory.md lists them; caliber_paths()
// keeps this order, which is the order compare reports differences in.
const std::vector<Field>& fields();
// Whether `path` is a key of fields(), or lies under one ending in ".*".
bool known(const std::string& path);
// The caliber fields' paths, in fields() order.
const std::vector<std::string>& caliber_paths();

namespace key {
inline constexpr char schema[] = "schema";
inline constexpr char run_id[] = "run_id";
inline constexpr char zlcore_version[] = "zlcore_version";
inline constexpr char status[] = "status";
inline constexpr char exit_code[] = "exit_code";
inline constexpr char started[] = "started";
inline constexpr char backend_name[] = "backend.name";
inline constexpr char backend_abi[] = "backend.abi";
inline constexpr char backend_version[] = "backend.version";
inline constexpr char backend_path[] = "backend.path";
inline constexpr char device_index[] = "device.index";
inline constexpr char device_id[] = "device.id";
inline constexpr char device_name[] = "device.name";
inline constexpr char device_memory_total_bytes[] = "device.memory_total_bytes";
inline constexpr char device_visibility[] = "device.visibility";
inline constexpr char device_pinned_by_env[] = "device.pinned_by_env";
inline constexpr char device_framework[] = "device.framework";
inline constexpr char host_name[] = "host.name";
inline constexpr char host[] = "host";  // + ".SLURM_JOB_ID" and the other Slurm ids
inline constexpr char test_node[] = "test_node";
inline constexpr char op[] = "op";
inline constexpr char marker[] = "marker";
inline constexpr char also_marked_in[] = "also_marked_in";
inline constexpr char marks[] = "marks";
inline constexpr char flaggems_dir[] = "flaggems_dir";
inline constexpr char suite_embedded[] = "suite.embedded";
inline constexpr char bench_level[] = "bench_level";
inline constexpr char mode[] = "mode";
inline constexpr char dtypes[] = "dtypes";
inline constexpr char shapes_mode[] = "shapes.mode";
inline constexpr char shapes_mode_from[] = "shapes.mode_from";
inline constexpr char shapes_file[] = "shapes.file";
inline constexpr char shapes_sha256[] = "shapes.sha256";
inline constexpr char timer_name[] = "timer.name";
inline constexpr char timer_planned[] = "timer.planned";
inline constexpr char timer_fallback[] = "timer.fallback";
inline constexpr char timer_fallback_shapes[] = "timer.fallback_shapes";
inline constexpr char timer_l2[] = "timer.l2";
inline constexpr char timer_l2_bytes[] = "timer.l2_bytes";
inline constexpr char timer_settings[] = "timer.settings";
inline constexpr char timer_sides_extended[] = "timer.sides_extended";
inline constexpr char timer_sides_unsettled[] = "timer.sides_unsettled";
inline constexpr char timer_clock_check[] = "timer.clock_check";
inline constexpr char timer_seconds_measuring[] = "timer.seconds_measuring";
inline constexpr char timer_seconds_in_session[] = "timer.seconds_in_session";
inline constexpr char pytest_plugins[] = "pytest_plugins";
inline constexpr char profile[] = "profile";
inline constexpr char tuner_cache_kind[] = "tuner_cache.kind";
inline constexpr char tuner_cache_flaggems_dir[] = "tuner_cache.flaggems_dir";
inline constexpr char tuner_cache_triton_dir[] = "tuner_cache.triton_dir";
inline constexpr char tuner_cache_winners_present[] = "tuner_cache.winners_present";
inline constexpr char tuner_cache_entries_present[] = "tuner_cache.entries_present";
inline constexpr char tuner_cache_variants_compiled[] = "tuner_cache.variants_compiled";
inline constexpr char tuner_cache_cache_entries_added[] = "tuner_cache.cache_entries_added";
inline constexpr char tuner_cache_new_winners[] = "tuner_cache.new_winners";
inline constexpr char tuner_cache_used_winners[] = "tuner_cache.used_winners";
inline constexpr char tuner_cache_inherited_winners[] = "tuner_cache.inherited_winners";
inline constexpr char tuner_cache_kept[] = "tuner_cache.kept";
inline constexpr char autotune_mode[] = "autotune.mode";
inline constexpr char autotune_source[] = "autotune.source";
inline constexpr char autotune_source_run_id[] = "autotune.source_run_id";
inline constexpr char autotune_records_hash[] = "autotune.records_hash";
inline constexpr char autotune_records_hash_modified[] = "autotune.records_hash_modified";
inline constexpr char autotune_source_triton[] = "autotune.source_triton";
inline constexpr char autotune_force[] = "autotune.force";
inline constexpr char autotune_replay_libtuner_rows[] = "autotune.replay_libtuner_rows";
inline constexpr char autotune_replay_triton_kernels[] = "autotune.replay_triton_kernels";
inline constexpr char autotune_replay_in_cache[] = "autotune.replay_in_cache";
inline constexpr char autotune_variants_compiled[] = "autotune.variants_compiled";
inline constexpr char autotune_tuning_benchmarks[] = "autotune.tuning_benchmarks";
inline constexpr char autotune_records_written[] = "autotune.records_written";
inline constexpr char autotune_record_files[] = "autotune.record_files";
inline constexpr char autotune_winners_hash[] = "autotune.winners_hash";
inline constexpr char autotune_winners[] = "autotune.winners";
inline constexpr char autotune_replay_misses[] = "autotune.replay_misses";
inline constexpr char autotune_replay_refused[] = "autotune.replay_refused";
inline constexpr char autotune_replay_miss_examples[] = "autotune.replay_miss_examples";
inline constexpr char autotune_plugin[] = "autotune.plugin";
inline constexpr char worker_kind[] = "worker.kind";
inline constexpr char worker_ops_before[] = "worker.ops_before";
inline constexpr char worker_pid[] = "worker.pid";
inline constexpr char worker_standby[] = "worker.standby";
inline constexpr char worker_reason[] = "worker.reason";
inline constexpr char worker_healthy[] = "worker.healthy";
inline constexpr char worker_unhealthy_reason[] = "worker.unhealthy_reason";
inline constexpr char worker_wait_seconds[] = "worker.wait_seconds";
inline constexpr char worker_memory_baseline_bytes[] = "worker.memory_baseline_bytes";
inline constexpr char worker_memory_after_bytes[] = "worker.memory_after_bytes";
inline constexpr char worker_memory_reserved_after_bytes[] = "worker.memory_reserved_after_bytes";
inline constexpr char warmup_warmed[] = "warmup.warmed";
inline constexpr char warmup_device[] = "warmup.device";
inline constexpr char batch_dir[] = "batch_dir";
inline constexpr char versions[] = "versions";  // + "." and a framework name the device_setup plugin reports
inline constexpr char versions_zlcore[] = "versions.zlcore";
inline constexpr char versions_zlcore_commit[] = "versions.zlcore_commit";
inline constexpr char versions_python[] = "versions.python";
inline constexpr char versions_torch[] = "versions.torch";
inline constexpr char versions_triton[] = "versions.triton";
inline constexpr char versions_flaggems_version[] = "versions.flaggems.version";
inline constexpr char versions_flaggems_git_sha[] = "versions.flaggems.git_sha";
inline constexpr char versions_flaggems_dirty[] = "versions.flaggems.dirty";
inline constexpr char versions_flaggems_git_sha_core[] = "versions.flaggems_git.sha";
inline constexpr char versions_flaggems_git_dirty[] = "versions.flaggems_git.dirty";
inline constexpr char versions_flaggems_git_note[] = "versions.flaggems_git.note";
inline constexpr char python_command[] = "python.command";
inline constexpr char python_path[] = "python.path";
inline constexpr char python_requested[] = "python.requested";
inline constexpr char python_passed_over[] = "python.passed_over";
inline constexpr char env_choices[] = "env_choices";
inline constexpr char env[] = "env";
inline constexpr char command[] = "command";
inline constexpr char zlcore_command[] = "zlcore_command";
inline constexpr char plugins[] = "plugins";
inline constexpr char reason[] = "reason";
inline constexpr char error[] = "error";
inline constexpr char tests_passed[] = "tests.passed";
inline constexpr char tests_skipped[] = "tests.skipped";
inline constexpr char tests_failed[] = "tests.failed";
inline constexpr char tests_declined[] = "tests.declined";
inline constexpr char rows[] = "rows";
inline constexpr char child_exit_code[] = "child_exit_code";
inline constexpr char child_signal[] = "child_signal";
inline constexpr char ended[] = "ended";
inline constexpr char seconds[] = "seconds";
inline constexpr char child_seconds[] = "child_seconds";
inline constexpr char time[] = "time";
inline constexpr char memory[] = "memory";
inline constexpr char disk_full[] = "disk_full";
}  // namespace key

}  // namespace zl::identity
