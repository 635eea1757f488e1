// The options that steer the planner, shared by `plan`, `run` and `batch`.
#pragma once

#include "command.hpp"
#include "zlcore/plan.hpp"

namespace zl::cli {

void add_plan_options(po::options_description& desc);
// Derives the plan for `backend` from the rules in data_dir() and the
// --timer / --enable-cudagraph flags (or ZL_ENABLE_CUDAGRAPH).
Plan make_plan(const Backend& backend, const po::variables_map& vm);
// Knob values the plan depends on, flag over env, for the identity.
std::map<std::string, std::string> plan_knobs(const po::variables_map& vm);

}  // namespace zl::cli
