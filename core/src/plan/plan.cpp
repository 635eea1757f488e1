#include <algorithm>

#include "../util/text.hpp"
#include "profiler.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/plan.hpp"

namespace zl {
namespace {

// Empty when every required capability is declared, else the missing ones.
std::vector<std::string> missing_caps(const std::vector<std::string>& needs,
                                      const std::map<std::string, std::string>& caps) {
  std::vector<std::string> missing;
  for (const std::string& c : needs) {
    if (caps.find(c) == caps.end()) missing.push_back(c);
  }
  return missing;
}

// Non-empty when a knob switches the rule off.
std::string switched_off(const std::optional<DisabledBy>& d, const std::map<std::string, std::string>& knobs) {
  if (!d) return {};
  auto it = knobs.find(d->env);
  if (it != knobs.end() && it->second == d->value) return d->env + "=" + d->value;
  return {};
}

std::string requirement_text(const std::vector<std::string>& needs) {
  return needs.empty() ? "requires nothing" : "backend declares " + text::join(needs);
}

// The L2 policy asked for: the knob's value, warm when it is absent.
std::string l2_policy(const std::map<std::string, std::string>& knobs) {
  auto it = knobs.find(kL2Knob);
  return it == knobs.end() || it->second.empty() ? "warm" : it->second;
}

void check_l2(const TimerRule& t, const std::string& policy, const std::string& given, const char* role) {
  if (std::find(t.l2.begin(), t.l2.end(), policy) != t.l2.end()) return;
  throw UsageError(given + (given == "--l2" ? " " : "=") + policy + " cannot be honoured by the " + t.name +
                   " timer (" + role + ")" +
                   (t.l2_why.empty() ? std::string(": it clears no cache") : ": " + t.l2_why) + "; use --l2 " +
                   text::join(t.l2, " or --l2 "));
}

// The plugins whose capabilities the backend declares and no knob switches off, in order.
void take_plugins(const Rules& rules, const PlanInputs& in, Plan& plan) {
  for (const PluginRule& r : rules.plugins) {
    PlanReason why{"plugin", r.name, false, {}};
    std::vector<std::string> missing = missing_caps(r.requires_caps, in.capabilities);
    std::string off = switched_off(r.disabled_by, in.knobs);
    if (!missing.empty()) {
      why.why = "backend '" + in.backend + "' lacks " + text::join(missing);
    } else if (!off.empty()) {
      why.why = "disabled by " + off;
    } else {
      why.taken = true;
      why.why = requirement_text(r.requires_caps);
      plan.pytest_plugins.push_back(r.module);
    }
    plan.reasons.push_back(std::move(why));
  }
}

}  // namespace

Plan derive_plan(const Rules& rules, const PlanInputs& given) {
  PlanInputs in = given;
  in.knobs.emplace(kProfileKnob, "0");  // a caller that names no profile asks for none
  Plan plan;
  plan.backend = in.backend;

  take_plugins(rules, in, plan);

  // Eligibility of every timer, so the chosen one, a forced one and the
  // fallback are all judged by the same rule.
  std::map<std::string, std::string> ineligible;  // name -> why not
  for (const TimerRule& t : rules.timers) {
    std::vector<std::string> missing = missing_caps(t.requires_caps, in.capabilities);
    std::string off = switched_off(t.disabled_by, in.knobs);
    if (!missing.empty()) {
      ineligible[t.name] = "backend '" + in.backend + "' lacks " + text::join(missing);
    } else if (!off.empty()) {
      ineligible[t.name] = "disabled by " + off;
    }
  }
  auto find_timer = [&](const std::string& name) -> const TimerRule* {
    for (const TimerRule& t : rules.timers) {
      if (t.name == name) return &t;
    }
    return nullptr;
  };

  const TimerRule* chosen = nullptr;
  if (!in.forced_timer.empty()) {
    chosen = find_timer(in.forced_timer);
    if (chosen == nullptr) {
      std::vector<std::string> names;
      for (const TimerRule& t : rules.timers) names.push_back(t.name);
      throw UsageError("unknown timer '" + in.forced_timer + "' (--timer); known timers: " + text::join(names));
    }
    auto it = ineligible.find(chosen->name);
    if (it != ineligible.end()) {
      throw UsageError("timer '" + chosen->name + "' (--timer) cannot be used: " + it->second);
    }
  } else {
    for (const TimerRule& t : rules.timers) {
      if (ineligible.count(t.name)) continue;
      if (chosen == nullptr || t.priority > chosen->priority) chosen = &t;
    }
    if (chosen == nullptr) {
      throw UsageError("no timer in " + text::join(rules.files) + " is usable with backend '" + in.backend + "'");
    }
  }

  plan.timer = chosen->name;
  plan.timer_clock = chosen->clock;
  plan.l2 = l2_policy(in.knobs);
  check_l2(*chosen, plan.l2, in.l2_given, in.forced_timer.empty() ? "the plan's" : "forced by --timer");
  // The child maps timer names to modules through these, so a timer that the
  // rules add needs no change in the child.
  if (!chosen->module.empty()) plan.child_env["ZL_TIMER_MODULE"] = chosen->module;
  if (!chosen->fallback.empty()) {
    const TimerRule* fb = find_timer(chosen->fallback);
    if (fb != nullptr && !ineligible.count(fb->name)) {
      check_l2(*fb, plan.l2, in.l2_given, "the per-shape fallback");
      plan.timer_fallback = fb->name;
      if (!fb->module.empty()) plan.child_env["ZL_TIMER_FALLBACK_MODULE"] = fb->module;
    }
  }
  for (const auto& [var, cap] : chosen->env_from) {
    auto it = in.capabilities.find(cap);
    if (it != in.capabilities.end()) plan.child_env[var] = it->second;
  }

  for (const TimerRule& t : rules.timers) {
    PlanReason why{"timer", t.name, t.name == plan.timer, {}};
    auto it = ineligible.find(t.name);
    if (why.taken) {
      why.why = (in.forced_timer.empty() ? "highest priority (" + std::to_string(t.priority) + ") of the eligible; "
                                         : std::string("forced by --timer; ")) +
                requirement_text(t.requires_caps);
      if (!plan.timer_fallback.empty()) why.why += "; falls back per shape to " + plan.timer_fallback;
    } else if (it != ineligible.end()) {
      why.why = it->second;
    } else if (t.name == plan.timer_fallback) {
      why.why = "eligible; per-shape fallback of " + plan.timer;
    } else {
      why.why = "eligible, but " + plan.timer + " was chosen";
    }
    plan.reasons.push_back(std::move(why));
  }
  choose_profiler(rules, in, plan);
  return plan;
}

}  // namespace zl
