#include "plan_options.hpp"

#include <cstdlib>

#include "zlcore/errors.hpp"
#include "zlcore/l2_policy.hpp"
#include "zlcore/paths.hpp"

namespace zl::cli {

void add_plan_options(po::options_description& desc) {
  desc.add_options()("timer", po::value<std::string>(),
                     "force a timer (graph, direct, host); refused when the backend lacks what it needs")(
      "enable-cudagraph", po::value<std::string>(),
      "a boolean; off removes graph timing and its plugins (env ZL_ENABLE_CUDAGRAPH; default on)")(
      "l2", po::value<std::string>(),
      "cold (the device's L2 cleared before each timed call, the clears kept out of the time) or warm (left as the "
      "calls before left it) (env ZL_L2; default warm; docs/graph-timer.md, \"The L2 policy\")")(
      "profile", po::value<std::string>()->zero_tokens()->implicit_value("1"),
      "after measuring each (shape, side), run it once more under the backend's profiler: the trace in the run "
      "directory, the top kernels in each row (env ZL_PROFILE, a boolean; default off; docs/profile.md)");
}

std::map<std::string, std::string> plan_knobs(const po::variables_map& vm) {
  // Spelled 0 or 1 from here on: the rules (rules.yaml) and the child read that.
  const bool graph = flag_or_env_bool(vm, "enable-cudagraph", "ZL_ENABLE_CUDAGRAPH", true);
  // Named as the user gave it: the flag when there is one, else the variable.
  const bool l2_flag = vm.count("l2") > 0;
  const std::string l2 = parse_l2_policy(flag_or_env(vm, "l2", kL2Knob), l2_flag ? "--l2 " : "ZL_L2=", !l2_flag);
  const bool profile = flag_or_env_bool(vm, "profile", kProfileKnob, false);
  return {{"ZL_ENABLE_CUDAGRAPH", graph ? "1" : "0"}, {kL2Knob, l2}, {kProfileKnob, profile ? "1" : "0"}};
}

std::string profile_given(const po::variables_map& vm) {
  if (vm.count("profile")) return "--profile";
  const char* v = std::getenv(kProfileKnob);
  return std::string(kProfileKnob) + "=" + (v != nullptr ? v : "");
}

std::string l2_given(const po::variables_map& vm) {
  return vm.count("l2") || std::getenv(kL2Knob) == nullptr ? "--l2" : kL2Knob;
}

Plan make_plan(const Backend& backend, const po::variables_map& vm) {
  PlanInputs in;
  in.backend = backend.name();
  in.capabilities = backend.capabilities();
  in.knobs = plan_knobs(vm);
  if (vm.count("timer")) in.forced_timer = vm["timer"].as<std::string>();
  in.l2_given = l2_given(vm);
  in.profile_given = profile_given(vm);
  return derive_plan(load_rules(data_dir()), in);
}

}  // namespace zl::cli
