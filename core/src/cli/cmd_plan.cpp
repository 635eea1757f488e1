// `zlcore plan`: the pytest plugins and timer a run would use, and why.
#include <iostream>

#include "../util/json.hpp"
#include "command.hpp"
#include "plan_options.hpp"

namespace zl::cli {

int cmd_plan(Context& ctx, const std::vector<std::string>& args) {
  po::options_description desc("plan: show the pytest plugins and timer derived from a backend's capabilities");
  desc.add_options()("backend", po::value<std::string>(), "backend name or alias (env ZL_BACKEND)")(
      "json", "print one JSON object");
  add_plan_options(desc);
  add_help(desc);
  po::variables_map vm;
  if (!parse("plan", desc, args, vm)) return 0;
  const Backend& b = ctx.registry().select(flag_or_env(vm, "backend", "ZL_BACKEND"), "--backend / ZL_BACKEND");
  Plan plan = make_plan(b, vm);

  if (vm.count("json")) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    doc.AddMember("backend", json::str(plan.backend, a), a);
    doc.AddMember("pytest_plugins", json::str_array(plan.pytest_plugins, a), a);
    doc.AddMember("timer", json::str(plan.timer, a), a);
    doc.AddMember("timer_fallback", json::str(plan.timer_fallback, a), a);
    doc.AddMember("profiler", json::str(plan.profiler, a), a);
    doc.AddMember("child_env", json::str_map(plan.child_env, a), a);
    json::Value reasons(rapidjson::kArrayType);
    for (const PlanReason& r : plan.reasons) {
      json::Value o(rapidjson::kObjectType);
      o.AddMember("kind", json::str(r.kind, a), a);
      o.AddMember("name", json::str(r.name, a), a);
      o.AddMember("taken", r.taken, a);
      o.AddMember("why", json::str(r.why, a), a);
      reasons.PushBack(o, a);
    }
    doc.AddMember("reasons", reasons, a);
    std::cout << json::pretty(doc);
    return 0;
  }

  std::cout << "backend: " << plan.backend << "\n"
            << "timer:   " << plan.timer
            << (plan.timer_fallback.empty() ? "" : " (per-shape fallback " + plan.timer_fallback + ")")
            << (plan.profiler.empty() ? "" : "\nprofile: " + plan.profiler) << "\npytest:  ";
  for (const std::string& m : plan.pytest_plugins) std::cout << "-p " << m << " ";
  std::cout << "\n\nrules:\n";
  for (const PlanReason& r : plan.reasons) {
    std::cout << "  " << (r.taken ? "+ " : "- ") << r.kind << " " << r.name << ": " << r.why << "\n";
  }
  return 0;
}

}  // namespace zl::cli
