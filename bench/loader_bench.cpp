// Backend loading and ABI negotiation, in process. The target ("`zlcore
// backends` with every plugin loads in under 10 ms") is judged on the whole
// process by bench/report.py, because the first dlopen of each plugin, which
// only a fresh process pays, is most of the cost. Here: the parts that repeat.
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <filesystem>
#include <stdexcept>
#include <vector>

#include "bench_common.hpp"
#include "zlcore/loader.hpp"

namespace {

// Every shipped backend's table, resolved once: negotiate_abi and the Backend
// constructor then run on the tables real plugins return.
const std::vector<const zl_backend_api*>& tables() {
  static const std::vector<const zl_backend_api*> all = [] {
    std::vector<const zl_backend_api*> out;
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(ZL_BENCH_PLUGIN_DIR)) {
      if (e.path().extension() == ".so") files.push_back(e.path());
    }
    for (const auto& f : files) {
      void* h = dlopen(f.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (h == nullptr) continue;
      auto entry = reinterpret_cast<const zl_backend_api* (*)(uint32_t, uint32_t)>(dlsym(h, ZL_BACKEND_ENTRY_SYMBOL));
      if (entry == nullptr) continue;
      out.push_back(entry(ZL_BACKEND_ABI_MAJOR, ZL_BACKEND_ABI_MINOR));
    }
    if (out.empty()) throw std::runtime_error("no backends in " ZL_BENCH_PLUGIN_DIR);
    return out;
  }();
  return all;
}

// A second load_backends in one process: directory scan, ELF check, dlopen of
// an already mapped library (a reference count), entry call, negotiation.
void BM_load_backends_warm(benchmark::State& state) {
  zl::load_backends(ZL_BENCH_PLUGIN_DIR);  // the cold first load is not timed here
  size_t n = 0;
  for (auto _ : state) {
    zl::LoadReport r = zl::load_backends(ZL_BENCH_PLUGIN_DIR);
    n = r.backends.size();
    benchmark::DoNotOptimize(r);
  }
  state.counters["backends"] = static_cast<double>(n);
}
BENCHMARK(BM_load_backends_warm)->Unit(benchmark::kMicrosecond);

void BM_negotiate_abi(benchmark::State& state) {
  const auto& t = tables();
  for (auto _ : state) {
    for (const zl_backend_api* api : t) benchmark::DoNotOptimize(zl::negotiate_abi(api));
  }
  state.counters["backends"] = static_cast<double>(t.size());
}
BENCHMARK(BM_negotiate_abi);

// Reading a table into ordinary values (names, aliases, capabilities).
void BM_backend_from_table(benchmark::State& state) {
  const auto& t = tables();
  for (auto _ : state) {
    for (const zl_backend_api* api : t) benchmark::DoNotOptimize(zl::Backend(api, "bench"));
  }
  state.counters["backends"] = static_cast<double>(t.size());
}
BENCHMARK(BM_backend_from_table);

}  // namespace

BENCHMARK_MAIN();
