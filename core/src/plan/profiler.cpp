#include "profiler.hpp"

#include "../util/text.hpp"
#include "zlcore/errors.hpp"

namespace zl {
namespace {

bool profile_asked(const std::map<std::string, std::string>& knobs) {
  auto it = knobs.find(kProfileKnob);
  return it != knobs.end() && it->second == "1";
}

std::vector<std::string> lacking(const ProfilerRule& r, const std::map<std::string, std::string>& caps) {
  std::vector<std::string> missing;
  for (const std::string& c : r.requires_caps) {
    if (caps.find(c) == caps.end()) missing.push_back(c);
  }
  return missing;
}

[[noreturn]] void refuse(const Rules& rules, const PlanInputs& in) {
  std::vector<std::string> needs;
  for (const ProfilerRule& r : rules.profilers) needs.push_back(r.name + " needs " + text::join(r.requires_caps));
  throw UsageError(in.profile_given + " cannot be honoured with backend '" + in.backend + "': it offers no profiler (" +
                   (needs.empty() ? "no profiler rule in " + text::join(rules.files) : text::join(needs, "; ")) +
                   " among its capabilities); run without --profile");
}

}  // namespace

void choose_profiler(const Rules& rules, const PlanInputs& in, Plan& plan) {
  const bool asked = profile_asked(in.knobs);
  const ProfilerRule* chosen = nullptr;
  for (const ProfilerRule& r : rules.profilers) {
    if (lacking(r, in.capabilities).empty() && (chosen == nullptr || r.priority > chosen->priority)) chosen = &r;
  }
  if (asked && chosen == nullptr) refuse(rules, in);

  for (const ProfilerRule& r : rules.profilers) {
    PlanReason why{"profiler", r.name, asked && &r == chosen, {}};
    const std::vector<std::string> missing = lacking(r, in.capabilities);
    if (!missing.empty()) {
      why.why = "backend '" + in.backend + "' lacks " + text::join(missing);
    } else if (why.taken) {
      why.why = "asked by " + in.profile_given + "; highest priority (" + std::to_string(r.priority) +
                ") of the offered; backend declares " + text::join(r.requires_caps);
    } else if (!asked) {
      why.why = "offered; runs with --profile";
    } else {
      why.why = "offered, but " + chosen->name + " was chosen";
    }
    plan.reasons.push_back(std::move(why));
  }
  if (!asked) return;
  plan.profiler = chosen->name;
  plan.child_env["ZL_PROFILER"] = chosen->name;
  plan.child_env["ZL_PROFILER_MODULE"] = chosen->module;
  for (const auto& [var, cap] : chosen->env_from) {
    auto it = in.capabilities.find(cap);
    if (it != in.capabilities.end()) plan.child_env[var] = it->second;
  }
}

}  // namespace zl
