// Identity and results writing for a 1,000-shape run: what the core writes
// around one `zlcore run` (the identity at start with status running, again at
// the end, header and shapes) plus reading the 1,000-row results.jsonl back
// for the terminal table. The rows themselves are appended by the Python
// results plugin inside the child; bench/report.py times that writer on the
// same 1,000 rows and adds it, so the table's figure covers both sides.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <fstream>

#include "bench_common.hpp"
#include "run/identity.hpp"
#include "run/results_table.hpp"
#include "zlcore/atomic_file.hpp"

namespace {

constexpr int kShapes = 1000;

// One results.jsonl line as docs/run-directory.md shows it, 10 samples a side.
std::string result_line(int i) {
  char buf[1024];
  std::snprintf(
      buf, sizeof buf,
      "{\"op\": \"abs\", \"test_node\": \"benchmark/test_abs.py::test_abs\", \"dtype\": \"float16\", "
      "\"shape\": \"[[%d, 64]]\", \"shape_detail\": [[%d, 64]], \"mode\": \"kernel\", \"bench_level\": \"core\", "
      "\"latency_base_ms\": 0.00161, \"latency_ms\": 0.00108, \"speedup\": 1.49, \"timer\": \"graph\", "
      "\"timer_base\": \"graph\", \"fallback_reason\": null, \"repeats\": 10, "
      "\"samples_ms\": [0.00108, 0.00109, 0.00107, 0.00108, 0.00110, 0.00108, 0.00108, 0.00107, 0.00109, 0.00108], "
      "\"samples_base_ms\": [0.00161, 0.00162, 0.00160, 0.00161, 0.00161, 0.00163, 0.00161, 0.00160, 0.00161, "
      "0.00161], "
      "\"spread_pct\": 0.4, \"spread_base_pct\": 0.3, \"gbps\": null, \"tflops\": null, "
      "\"cluster_kernel\": null, \"error\": null}\n",
      64 * (i + 1), 64 * (i + 1));
  return buf;
}

// The identity run.cpp writes at the start: the same keys, realistic values.
void fill_start(zl::Identity& id, const std::string& run_dir) {
  id.set("schema", int64_t{1});
  id.set("run_id", "20261202-103000-abs-cuda-4f2a");
  id.set("zlcore_version", "0.1.0");
  id.set("status", "running");
  id.set_null("exit_code");
  id.set("started", zl::utc_now_iso());
  id.set("backend.name", "cuda");
  id.set("backend.abi", "1.0");
  id.set("backend.version", "0.1.0");
  id.set("backend.path", "/opt/zlcore/lib/zlcore/plugins/zl_backend_cuda.so");
  id.set("device.index", int64_t{0});
  id.set("device.id", "GPU-6f1c9a3e-93b1-2c4d-8e7f-0a1b2c3d4e5f");
  id.set("device.name", "NVIDIA H200");
  id.set("device.memory_total_bytes", int64_t{150754820096});
  id.set("device.visibility", std::map<std::string, std::string>{{"CUDA_VISIBLE_DEVICES", "GPU-6f1c9a3e"}});
  id.set("host.name", "node1");
  id.set("test_node", "benchmark/test_abs.py::test_abs");
  id.set("op", "abs");
  id.set("marker", "abs");
  id.set("flaggems_dir", "/home/user/FlagGems");
  id.set("bench_level", "core");
  id.set("mode", "kernel");
  id.set("dtypes", std::vector<std::string>{"float16", "float32", "bfloat16"});
  id.set("shapes.mode", "upstream");
  id.set("shapes.file", "/home/user/FlagGems/benchmark/core_shapes.yaml");
  id.set("shapes.sha256", std::string(64, 'a'));
  id.set("timer.name", "graph");
  id.set("timer.planned", "graph");
  id.set("timer.fallback", "direct");
  id.set("timer.fallback_shapes", rapidjson::Value(rapidjson::kArrayType));
  id.set("pytest_plugins",
         std::vector<std::string>{"zlcore_pytest.device_setup", "zlcore_pytest.timing", "zlcore_pytest.graph_capture",
                                  "zlcore_pytest.cluster_fix", "zlcore_pytest.autotune", "zlcore_pytest.results"});
  id.set("tuner_cache.kind", "shared");
  id.set("tuner_cache.flaggems_dir", "/home/user/.flaggems");
  id.set("tuner_cache.triton_dir", "/home/user/.triton/cache");
  id.set("tuner_cache.winners_present", int64_t{120});
  id.set("tuner_cache.entries_present", int64_t{800});
  id.set("autotune.mode", "tune");
  id.set_null("autotune.source_run_id");
  id.set_null("autotune.records_hash");
  id.set("worker.kind", "cold");
  id.set("worker.ops_before", int64_t{0});
  id.set("warmup.warmed", false);
  id.set("versions.zlcore", "0.1.0");
  id.set("versions.python", "3.12.3");
  id.set("env", std::map<std::string, std::string>{
                    {"GEMS_VENDOR", "nvidia"},
                    {"ZL_BACKEND", "cuda"},
                    {"ZL_CAPABILITIES", "graph_capture=torch.cuda.CUDAGraph;sync=torch.cuda.synchronize"},
                    {"ZL_ENABLE_CUDAGRAPH", "1"},
                    {"ZL_TIMER", "graph"},
                    {"ZL_TIMER_FALLBACK", "direct"},
                    {"ZL_TORCH_DEVICE", "cuda"},
                    {"ZL_VISIBILITY_ENV", "CUDA_VISIBLE_DEVICES"},
                    {"TRITON_CACHE_MANAGER", ""}});
  id.set("command",
         std::vector<std::string>{"python3", "-m", "pytest", "-s", "-p", "no:cacheprovider", "-p",
                                  "zlcore_pytest.device_setup", "-p", "zlcore_pytest.results", "benchmark/test_abs.py",
                                  "-m", "abs", "--level", "core", "--mode", "kernel"});
  id.set("zlcore_command",
         std::vector<std::string>{"zlcore", "run", "--backend", "cuda", "--op", "abs", "--out", run_dir});
}

// What run.cpp adds at the end, before the second write.
void fill_end(zl::Identity& id) {
  auto& a = id.alloc();
  rapidjson::Value plugins(rapidjson::kObjectType);
  rapidjson::Value results(rapidjson::kObjectType);
  results.AddMember("rows", kShapes, a);
  results.AddMember("rows_with_error", 0, a);
  plugins.AddMember("results", results, a);
  id.set("versions.torch", "2.11.0");
  id.set("versions.triton", "3.6.0");
  id.set("versions.flaggems_git.sha", std::string(40, 'b'));
  id.set("versions.flaggems_git.dirty", false);
  id.set("tuner_cache.variants_compiled", int64_t{7});
  id.set("tuner_cache.new_winners", int64_t{3});
  id.set("autotune.variants_compiled", int64_t{7});
  id.set("autotune.replay_misses", int64_t{0});
  id.set("tuner_cache.inherited_winners", int64_t{120});
  id.set("plugins", std::move(plugins));
  id.set("status", "passed");
  id.set("exit_code", int64_t{0});
  id.set("child_exit_code", int64_t{0});
  id.set("ended", zl::utc_now_iso());
  id.set("seconds", 12.3);
  id.set("child_seconds", 12.2);
}

std::string make_results(const std::string& dir) {
  std::string text;
  for (int i = 0; i < kShapes; ++i) text += result_line(i);
  std::string path = dir + "/results.jsonl";
  zl::write_file_atomic(path, text);
  return path;
}

// The identity alone, both writes (build, serialize, write, fsync, rename).
void BM_identity_start_and_end(benchmark::State& state) {
  const std::string dir = zl::bench::scratch_dir("identity");
  const std::string path = dir + "/run_identity.json";
  for (auto _ : state) {
    zl::Identity id;
    fill_start(id, dir);
    id.write(path);
    fill_end(id);
    id.write(path);
  }
  zl::bench::drop_dir(dir);
}
BENCHMARK(BM_identity_start_and_end)->Unit(benchmark::kMillisecond);

// The terminal table over 1,000 result rows (parse every line, format).
void BM_results_table_1000(benchmark::State& state) {
  const std::string dir = zl::bench::scratch_dir("results_table");
  const std::string path = make_results(dir);
  for (auto _ : state) benchmark::DoNotOptimize(zl::format_results_table(path));
  zl::bench::drop_dir(dir);
}
BENCHMARK(BM_results_table_1000)->Unit(benchmark::kMillisecond);

// Everything the core writes and reads for one 1,000-shape run: identity at
// start, header.txt and shapes.yaml, identity at the end, the results table.
// report.py's "identity + results" row is this plus the Python writer.
void BM_identity_and_results_1000(benchmark::State& state) {
  const std::string dir = zl::bench::scratch_dir("identity_results");
  const std::string results = make_results(dir);
  std::string shapes = "bench_level: core\nabs:\n  shapes:\n";
  for (int i = 0; i < kShapes; ++i) shapes += "    - [" + std::to_string(64 * (i + 1)) + ", 64]\n";
  const std::string header(900, 'h');
  for (auto _ : state) {
    zl::Identity id;
    fill_start(id, dir);
    id.write(dir + "/run_identity.json");
    zl::write_file_atomic(dir + "/shapes.yaml", shapes);
    zl::write_file_atomic(dir + "/header.txt", header);
    fill_end(id);
    id.write(dir + "/run_identity.json");
    benchmark::DoNotOptimize(zl::format_results_table(results));
  }
  zl::bench::drop_dir(dir);
}
BENCHMARK(BM_identity_and_results_1000)->Unit(benchmark::kMillisecond);

// fsync dominates the writes above; this is its cost on this disk, so the
// table can say how much of the figure is the storage, not zlcore.
void BM_fsync_small_file(benchmark::State& state) {
  const std::string dir = zl::bench::scratch_dir("fsync");
  for (auto _ : state) zl::write_file_atomic(dir + "/f", "x\n");
  zl::bench::drop_dir(dir);
}
BENCHMARK(BM_fsync_small_file)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
