// The options that steer the planner, shared by `plan`, `run` and `batch`.
#pragma once

#include "command.hpp"
#include "zlcore/plan.hpp"

namespace zl::cli {

void add_plan_options(po::options_description& desc);
// Derives the plan for `backend` from the rules in data_dir() and the
// --timer / --enable-cudagraph / --l2 flags (or ZL_ENABLE_CUDAGRAPH, ZL_L2).
Plan make_plan(const Backend& backend, const po::variables_map& vm);
// Knob values the plan depends on, flag over env, for the identity: the
// cudagraph switch, the L2 policy (warm or cold; another word throws
// UsageError naming --l2 or ZL_L2 as given) and the profile switch (kProfileKnob,
// "1" or "0").
std::map<std::string, std::string> plan_knobs(const po::variables_map& vm);
// "--l2" when the flag was given (or neither was), else "ZL_L2": what a
// refusal of the policy names.
std::string l2_given(const po::variables_map& vm);
// "--profile" when the flag was given, else "ZL_PROFILE=<its value>": what a
// refusal of the profile pass names.
std::string profile_given(const po::variables_map& vm);

}  // namespace zl::cli
