// A rules document a vendor drops in rules.d/ (docs/rules.md), read after the
// rules.yaml zlcore ships, then the plan every kind of backend would get from
// them: what `zlcore plan`, run, batch and ab derive before anything runs.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_util.hpp"
#include "zlcore/plan.hpp"

namespace {

using Caps = std::map<std::string, std::string>;

// What the in-tree backends declare, from the richest to none at all.
const std::vector<Caps>& backends() {
  static const std::vector<Caps> all = {
      {{"graph_capture", "cuda"}, {"device_events", "1"}, {"cluster_fix", "1"}, {"torch_profiler", "cuda"}},
      {{"graph_capture", "hip"}, {"device_events", "1"}, {"torch_profiler", "cuda"}},
      {{"device_events", "1"}},
      {{"torch_profiler", "cpu"}},
      {},
  };
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string shipped = [] {
    std::ifstream in(std::string(ZL_SOURCE_DIR) + "/plugins/timers/rules.yaml", std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    if (s.str().empty()) std::abort();  // the target would test nothing
    return s.str();
  }();
  const zl_fuzz::fs::path dir = zl_fuzz::fresh("data");
  zl_fuzz::put(dir / "rules.yaml", shipped);
  zl_fuzz::put(dir / "rules.d" / "vendor.yaml", zl_fuzz::text(data, size));
  zl::Rules rules;
  try {
    rules = zl::load_rules(dir.string());
  } catch (const std::exception&) {
    return 0;  // refused, naming the file: what a reader may do
  }
  // The knobs a user sets decide rules too: none, graphs off, cold, a profile.
  const std::vector<std::map<std::string, std::string>> knobs = {
      {}, {{"ZL_ENABLE_CUDAGRAPH", "0"}}, {{zl::kL2Knob, "cold"}}, {{zl::kProfileKnob, "1"}}};
  for (const Caps& caps : backends()) {
    for (const auto& k : knobs) {
      for (const std::string forced : {"", "host", "graph"}) {
        zl::PlanInputs in;
        in.backend = "fuzz";
        in.capabilities = caps;
        in.knobs = k;
        in.forced_timer = forced;
        try {
          (void)zl::derive_plan(rules, in);
        } catch (const std::exception&) {
          // A plan refused with a line for the user.
        }
      }
    }
  }
  return 0;
}
