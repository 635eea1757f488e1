#include "plan_options.hpp"

#include "zlcore/errors.hpp"
#include "zlcore/paths.hpp"

namespace zl::cli {

void add_plan_options(po::options_description& desc) {
  desc.add_options()("timer", po::value<std::string>(), "force a timer (graph, direct, host); refused when the backend lacks what it needs")(
      "enable-cudagraph", po::value<std::string>(), "0 removes graph timing and its plugins (env ZL_ENABLE_CUDAGRAPH; default 1)");
}

std::map<std::string, std::string> plan_knobs(const po::variables_map& vm) {
  std::string graph = flag_or_env(vm, "enable-cudagraph", "ZL_ENABLE_CUDAGRAPH", "1");
  if (graph != "0" && graph != "1") {
    throw UsageError("ZL_ENABLE_CUDAGRAPH / --enable-cudagraph must be 0 or 1, not '" + graph + "'");
  }
  return {{"ZL_ENABLE_CUDAGRAPH", graph}};
}

Plan make_plan(const Backend& backend, const po::variables_map& vm) {
  PlanInputs in;
  in.backend = backend.name();
  in.capabilities = backend.capabilities();
  in.knobs = plan_knobs(vm);
  if (vm.count("timer")) in.forced_timer = vm["timer"].as<std::string>();
  return derive_plan(load_rules(data_dir()), in);
}

}  // namespace zl::cli
