// The planner: from a backend's capabilities alone, the ordered pytest `-p`
// list and the timer. The rules are data (plugins/timers/rules.yaml plus any
// rules.d/*.yaml beside it), so a new capability-gated plugin or timer needs
// no change here, and no rule names a vendor.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace zl {

struct DisabledBy {
  std::string env;    // knob name, e.g. ZL_ENABLE_CUDAGRAPH
  std::string value;  // the rule is dropped when the knob equals this
};

struct PluginRule {
  std::string name;
  std::string module;
  std::vector<std::string> requires_caps;
  std::optional<DisabledBy> disabled_by;
  std::string source;  // file the rule came from
};

struct TimerRule {
  std::string name;
  std::string module;  // the Python module implementing it; empty: the child's built-in
  int priority = 0;
  std::vector<std::string> requires_caps;
  std::string fallback;                         // empty: none
  std::map<std::string, std::string> env_from;  // child variable -> capability key
  std::optional<DisabledBy> disabled_by;
  std::string summary;
  // Where its clock runs: "device" (the default) or "host". A host clock
  // times work on the CPU, so nothing else of ours may run beside it.
  std::string clock = "device";
  // The L2 policies (plan.hpp's kL2Knob) the timer can honour, and why not
  // the others: a rule that says nothing honours `warm` alone.
  std::vector<std::string> l2 = {"warm"};
  std::string l2_why;
  std::string source;
};

// A profiler `--profile` (kProfileKnob) can run: once per (shape, side),
// after that side's measurement and outside every timing window. The child
// gets its name as ZL_PROFILER and its module as ZL_PROFILER_MODULE, so a new
// profiler is a module plus a rule, like a timer.
struct ProfilerRule {
  std::string name;
  std::string module;
  int priority = 0;
  std::vector<std::string> requires_caps;
  std::map<std::string, std::string> env_from;  // child variable -> capability key
  std::string summary;
  std::string source;
};

struct Rules {
  std::vector<PluginRule> plugins;  // in load order
  std::vector<TimerRule> timers;
  std::vector<ProfilerRule> profilers;
  std::vector<std::string> files;  // every file read, in order
};

// Parses one rules document. Throws UsageError naming `source` on bad input.
void parse_rules(const std::string& yaml_text, const std::string& source, Rules& into);
// Reads <data_dir>/rules.yaml, then <data_dir>/rules.d/*.yaml in sorted order;
// a later rule with the same name replaces the earlier one in place.
Rules load_rules(const std::string& data_dir);

struct PlanReason {
  std::string kind;  // "plugin", "timer" or "profiler"
  std::string name;
  bool taken = false;
  std::string why;
};

// The knob that carries the L2 policy (`warm` or `cold`; absent: warm).
inline constexpr const char* kL2Knob = "ZL_L2";
// The knob that asks for the profile pass: "1" on; "0" or absent off.
inline constexpr const char* kProfileKnob = "ZL_PROFILE";

struct Plan {
  std::string backend;
  std::vector<std::string> pytest_plugins;  // modules, for `-p`
  std::string timer;
  std::string timer_fallback;          // empty: none
  std::string timer_clock = "device";  // the chosen timer's TimerRule::clock
  std::string l2 = "warm";             // the L2 policy both timers honour
  std::string profiler;                // the profiler `--profile` runs; empty: off
  std::map<std::string, std::string> child_env;
  std::vector<PlanReason> reasons;
};

struct PlanInputs {
  std::string backend;
  std::map<std::string, std::string> capabilities;
  // Knob values that rules may be disabled by (flag already merged over env).
  std::map<std::string, std::string> knobs;
  std::string forced_timer;                 // --timer; empty: choose by priority
  std::string l2_given = "--l2";            // where the L2 policy came from, for a refusal: "--l2" or "ZL_L2"
  std::string profile_given = "--profile";  // likewise: "--profile" or "ZL_PROFILE=1"
};

// Throws UsageError when a forced timer is unknown or not usable here, when
// no timer is eligible at all, or when the chosen timer (or its fallback)
// cannot honour the L2 policy the knobs ask for, or when the knobs ask for a
// profile and no profiler rule is satisfied by the backend's capabilities.
Plan derive_plan(const Rules& rules, const PlanInputs& in);

}  // namespace zl
