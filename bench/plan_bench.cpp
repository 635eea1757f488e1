// Plan derivation: the rules read from YAML (every command that plans pays
// this once), then capabilities x rules for each shipped backend.
#include <benchmark/benchmark.h>

#include "bench_common.hpp"
#include "zlcore/loader.hpp"
#include "zlcore/plan.hpp"

namespace {

void BM_load_rules(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(zl::load_rules(ZL_BENCH_RULES_DIR));
}
BENCHMARK(BM_load_rules)->Unit(benchmark::kMicrosecond);

// One derive_plan per shipped backend per iteration, on their real
// capabilities (graph capture or not, so both timer branches are taken).
void BM_derive_plan_all_backends(benchmark::State& state) {
  const zl::Rules rules = zl::load_rules(ZL_BENCH_RULES_DIR);
  const zl::LoadReport loaded = zl::load_backends(ZL_BENCH_PLUGIN_DIR);
  std::vector<zl::PlanInputs> inputs;
  for (const zl::Backend& b : loaded.backends) {
    inputs.push_back({b.name(), b.capabilities(), {{"ZL_ENABLE_CUDAGRAPH", "1"}}, ""});
  }
  for (auto _ : state) {
    for (const zl::PlanInputs& in : inputs) benchmark::DoNotOptimize(zl::derive_plan(rules, in));
  }
  state.counters["backends"] = static_cast<double>(inputs.size());
}
BENCHMARK(BM_derive_plan_all_backends)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
