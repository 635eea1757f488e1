// The profiler half of the plan: which rule's profiler `--profile` runs,
// chosen from the backend's capabilities alone, like the timer.
#pragma once

#include "zlcore/plan.hpp"

namespace zl {

// Adds a reason per profiler rule to `plan`. When the knobs ask for a profile
// (kProfileKnob is "1"), sets plan.profiler and the child's ZL_PROFILER,
// ZL_PROFILER_MODULE and the rule's env to the offered rule of the highest
// priority; throws UsageError, one line naming in.profile_given, when the
// backend offers none.
void choose_profiler(const Rules& rules, const PlanInputs& in, Plan& plan);

}  // namespace zl
