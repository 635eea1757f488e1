// ops_status.csv: the per-op bookkeeping a batch does on its own file. One
// append per finished op (one write(2) + fsync), and the read a --resume
// does over a 1,000-op file. The whole-batch figure against a plain loop is
// in bench/report.py; these say which part of it is the CSV.
#include <benchmark/benchmark.h>

#include "bench_common.hpp"
#include "zlcore/batch.hpp"

namespace {

zl::batch::OpRow row(int i) {
  zl::batch::OpRow r;
  r.op = "op" + std::to_string(i);
  r.test_node = "benchmark/test_ok1.py::test_ok1";
  r.status = zl::batch::Status::passed;
  r.exit_code = 0;
  r.backend = "fakegpu";
  r.device_index = i % 8;
  r.device_id = "FAKE-000" + std::to_string(i % 8);
  r.timer = "graph";
  r.bench_level = "core";
  r.started = "2026-12-02T10:30:00.000Z";
  r.seconds = 1.234;
  r.run_dir = "runs/" + r.op;
  r.reason = i % 10 == 0 ? "exit code 1, \"quoted\", two words" : "";
  return r;
}

void BM_csv_record(benchmark::State& state) {
  const zl::batch::OpRow r = row(10);
  for (auto _ : state) benchmark::DoNotOptimize(zl::batch::csv_record(r));
}
BENCHMARK(BM_csv_record);

// One op's append, with the file growing as in a real batch (restarted
// every 1,000 appends so it stays the size of a 1,000-op batch).
void BM_append_status_row(benchmark::State& state) {
  const std::string dir = zl::bench::scratch_dir("status_append");
  const std::string path = dir + "/ops_status.csv";
  std::string note;
  zl::batch::prepare_status_csv(path, &note);
  int i = 0;
  for (auto _ : state) {
    zl::batch::append_status_row(path, row(i));
    if (++i == 1000) {
      state.PauseTiming();
      std::filesystem::remove(path);
      zl::batch::prepare_status_csv(path, &note);
      i = 0;
      state.ResumeTiming();
    }
  }
  zl::bench::drop_dir(dir);
}
BENCHMARK(BM_append_status_row)->Unit(benchmark::kMicrosecond);

void BM_read_status_csv_1000(benchmark::State& state) {
  const std::string dir = zl::bench::scratch_dir("status_read");
  const std::string path = dir + "/ops_status.csv";
  std::string note;
  zl::batch::prepare_status_csv(path, &note);
  for (int i = 0; i < 1000; ++i) zl::batch::append_status_row(path, row(i));
  for (auto _ : state) benchmark::DoNotOptimize(zl::batch::read_status_csv(path));
  zl::bench::drop_dir(dir);
}
BENCHMARK(BM_read_status_csv_1000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
