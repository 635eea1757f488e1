// `zlcore compare` on 10,000 rows a side: loading both run directories,
// matching rows, caliber check, verdicts and geomeans, and the table and CSV
// outputs. No target; the table reports it so a slowdown shows.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <sstream>

#include "bench_common.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/compare.hpp"

namespace {

constexpr int kRows = 10000;

// A run directory with a minimal identity and kRows rows: 4 dtypes x 2,500
// shapes. Side B is 3 % faster with a little spread, so verdicts vary.
void make_run(const std::string& dir, const char* run_id, double scale) {
  std::filesystem::create_directories(dir);
  zl::write_file_atomic(dir + "/run_identity.json",
                        std::string("{\"schema\": 1, \"run_id\": \"") + run_id +
                            "\", \"op\": \"abs\", \"status\": \"passed\", \"backend\": {\"name\": \"cuda\"}, "
                            "\"timer\": {\"name\": \"graph\"}, \"bench_level\": \"core\", \"mode\": \"kernel\", "
                            "\"autotune\": {\"mode\": \"tune\"}, \"env\": {\"GEMS_VENDOR\": \"nvidia\"}}\n");
  static const char* dtypes[] = {"float16", "float32", "bfloat16", "int32"};
  std::string text;
  char buf[512];
  for (int i = 0; i < kRows; ++i) {
    const int n = 64 * (i / 4 + 1);
    const double ms = 0.001 * (1 + i % 97) * scale;
    std::snprintf(buf, sizeof buf,
                  "{\"op\": \"abs\", \"dtype\": \"%s\", \"shape\": \"[[%d, 64]]\", \"latency_base_ms\": %.6f, "
                  "\"latency_ms\": %.6f, \"repeats\": 10, \"spread_pct\": %.2f, \"spread_base_pct\": 0.3, "
                  "\"timer\": \"graph\", \"timer_base\": \"graph\", \"error\": null}\n",
                  dtypes[i % 4], n, ms * 1.5, ms, 0.2 + (i % 7) * 0.3);
    text += buf;
  }
  zl::write_file_atomic(dir + "/results.jsonl", text);
}

struct Pair {
  std::string root, a, b;
  Pair() : root(zl::bench::scratch_dir("compare")), a(root + "/A"), b(root + "/B") {
    make_run(a, "run-a", 1.0);
    make_run(b, "run-b", 0.97);
  }
  ~Pair() { zl::bench::drop_dir(root); }
};

// Matching, caliber, verdicts, geomeans on sides already in memory.
void BM_compare_10000_rows(benchmark::State& state) {
  Pair p;
  const zl::compare::Side a = zl::compare::load_side("A", p.a);
  const zl::compare::Side b = zl::compare::load_side("B", p.b);
  for (auto _ : state) benchmark::DoNotOptimize(zl::compare::compare(a, b, {}));
}
BENCHMARK(BM_compare_10000_rows)->Unit(benchmark::kMillisecond);

// What `zlcore compare A B --format csv` does besides starting: read both
// sides from disk, compare, and write the table and the CSV.
void BM_compare_10000_rows_load_and_format(benchmark::State& state) {
  Pair p;
  for (auto _ : state) {
    zl::compare::Report r =
        zl::compare::compare(zl::compare::load_side("A", p.a), zl::compare::load_side("B", p.b), {});
    std::ostringstream table, csv;
    zl::compare::write_table(table, r);
    zl::compare::write_csv(csv, r);
    benchmark::DoNotOptimize(table.str().size() + csv.str().size());
  }
}
BENCHMARK(BM_compare_10000_rows_load_and_format)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
