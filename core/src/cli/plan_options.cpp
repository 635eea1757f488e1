#include "plan_options.hpp"

#include "zlcore/errors.hpp"
#include "zlcore/paths.hpp"

namespace zl::cli {

void add_plan_options(po::options_description& desc) {
  desc.add_options()("timer", po::value<std::string>(),
                     "force a timer (graph, direct, host); refused when the backend lacks what it needs")(
      "enable-cudagraph", po::value<std::string>(),
      "a boolean; off removes graph timing and its plugins (env ZL_ENABLE_CUDAGRAPH; default on)");
}

std::map<std::string, std::string> plan_knobs(const po::variables_map& vm) {
  // Spelled 0 or 1 from here on: the rules (rules.yaml) and the child read that.
  const bool graph = flag_or_env_bool(vm, "enable-cudagraph", "ZL_ENABLE_CUDAGRAPH", true);
  return {{"ZL_ENABLE_CUDAGRAPH", graph ? "1" : "0"}};
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
