// Plan derivation from capabilities alone, with the rules zlcore ships.
#include <gtest/gtest.h>

#include <algorithm>

#include "zlcore/errors.hpp"
#include "zlcore/plan.hpp"
#include "zlcore/registry.hpp"

namespace {

const zl::Rules& rules() {
  static zl::Rules r = zl::load_rules(ZL_RULES_DIR);
  return r;
}

zl::Plan plan_for(const zl::Backend& b, std::map<std::string, std::string> knobs = {}, std::string timer = "") {
  zl::PlanInputs in;
  in.backend = b.name();
  in.capabilities = b.capabilities();
  in.knobs = std::move(knobs);
  in.forced_timer = std::move(timer);
  return zl::derive_plan(rules(), in);
}

const zl::Registry& all() {
  static zl::Registry reg([] {
    zl::LoadReport r = zl::load_backends(ZL_SHIPPED_PLUGIN_DIR);
    zl::LoadReport v = zl::load_backends(ZL_VENDOR_DIR);
    for (zl::Backend& b : v.backends) r.backends.push_back(std::move(b));
    return r;
  }());
  return reg;
}

const std::vector<std::string> kBase{"zlcore_pytest.phases", "zlcore_pytest.device_setup", "zlcore_pytest.autotune",
                                     "zlcore_pytest.timing", "zlcore_pytest.results",      "zlcore_pytest.outcomes"};

TEST(Plan, CudaGetsGraphAndClusterPluginsAndTheGraphTimer) {
  zl::Plan p = plan_for(*all().find("cuda"));
  EXPECT_EQ(p.timer, "graph");
  EXPECT_EQ(p.timer_fallback, "direct");
  EXPECT_EQ(p.pytest_plugins,
            (std::vector<std::string>{"zlcore_pytest.phases", "zlcore_pytest.device_setup", "zlcore_pytest.cluster_fix",
                                      "zlcore_pytest.autotune", "zlcore_pytest.timing", "zlcore_pytest.results",
                                      "zlcore_pytest.outcomes"}));
  EXPECT_EQ(p.child_env.at("ZL_GRAPH_API"), "torch.cuda.CUDAGraph");
  // The timer's module and its fallback's, from the rules, for the child's registry.
  EXPECT_EQ(p.child_env.at("ZL_TIMER_MODULE"), "zlcore_pytest.timers.graph");
  EXPECT_EQ(p.child_env.at("ZL_TIMER_FALLBACK_MODULE"), "zlcore_pytest.timers.direct");
}

TEST(Plan, RocmMusaAscendGetDirectAndNeitherPlugin) {
  for (const char* name : {"rocm", "musa", "ascend"}) {
    zl::Plan p = plan_for(*all().find(name));
    EXPECT_EQ(p.timer, "direct") << name;
    EXPECT_EQ(p.timer_fallback, "") << name;
    EXPECT_EQ(p.pytest_plugins, kBase) << name;
  }
}

TEST(Plan, HostGetsTheHostTimer) {
  zl::Plan p = plan_for(*all().find("host"));
  EXPECT_EQ(p.timer, "host");
  EXPECT_EQ(p.pytest_plugins, kBase);
  EXPECT_EQ(p.child_env.at("ZL_TIMER_MODULE"), "zlcore_pytest.timers.host");
  EXPECT_EQ(p.child_env.count("ZL_TIMER_FALLBACK_MODULE"), 0u);
}

// No rule names this vendor: declaring graph_capture is enough.
TEST(Plan, AVendorBackendDeclaringGraphCaptureGetsTheGraphTimer) {
  zl::Plan p = plan_for(*all().find("vendorx"));
  EXPECT_EQ(p.timer, "graph");
  EXPECT_EQ(p.child_env.at("ZL_GRAPH_API"), "torch.vendorx.Graph");
  EXPECT_EQ(p.child_env.at("ZL_TIMER_MODULE"), "zlcore_pytest.timers.graph");
  // It declares no cluster_fix, so that plugin stays out, with the reason.
  EXPECT_EQ(std::find(p.pytest_plugins.begin(), p.pytest_plugins.end(), "zlcore_pytest.cluster_fix"),
            p.pytest_plugins.end());
  bool explained = false;
  for (const zl::PlanReason& r : p.reasons) {
    if (r.name == "cluster_fix") explained = r.why == "backend 'vendorx' lacks cluster_fix";
  }
  EXPECT_TRUE(explained);
}

TEST(Plan, EnableCudagraphZeroRemovesGraphTimingAndItsPlugins) {
  zl::Plan p = plan_for(*all().find("cuda"), {{"ZL_ENABLE_CUDAGRAPH", "0"}});
  EXPECT_EQ(p.timer, "direct");
  EXPECT_EQ(p.pytest_plugins, kBase);
  for (const zl::PlanReason& r : p.reasons) {
    if (r.name == "graph") {
      EXPECT_EQ(r.why, "disabled by ZL_ENABLE_CUDAGRAPH=0");
    }
  }
}

TEST(Plan, ForcedTimerIsHonouredOrRefusedWithTheReason) {
  EXPECT_EQ(plan_for(*all().find("cuda"), {}, "direct").timer, "direct");
  EXPECT_EQ(plan_for(*all().find("cuda"), {}, "host").timer, "host");
  try {
    plan_for(*all().find("rocm"), {}, "graph");
    FAIL();
  } catch (const zl::UsageError& e) {
    EXPECT_STREQ(e.what(), "timer 'graph' (--timer) cannot be used: backend 'rocm' lacks graph_capture");
  }
  try {
    plan_for(*all().find("cuda"), {{"ZL_ENABLE_CUDAGRAPH", "0"}}, "graph");
    FAIL();
  } catch (const zl::UsageError& e) {
    EXPECT_STREQ(e.what(), "timer 'graph' (--timer) cannot be used: disabled by ZL_ENABLE_CUDAGRAPH=0");
  }
  EXPECT_THROW(plan_for(*all().find("cuda"), {}, "stopwatch"), zl::UsageError);
}

TEST(Plan, RulesAreDataAndALaterFileReplacesARuleByName) {
  zl::Rules r;
  zl::parse_rules("timers:\n  - {name: base, priority: 1, requires: []}\n", "a.yaml", r);
  zl::parse_rules(
      "pytest_plugins:\n  - {name: probe, module: vendor.probe, requires: [probe_api]}\n"
      "timers:\n  - {name: fancy, module: vendor.fancy_timer, priority: 50, requires: [probe_api],"
      " env: {ZL_PROBE: probe_api}}\n",
      "b.yaml", r);
  zl::PlanInputs in;
  in.backend = "x";
  in.capabilities = {{"probe_api", "vendor.Probe"}};
  zl::Plan p = zl::derive_plan(r, in);
  EXPECT_EQ(p.timer, "fancy");
  EXPECT_EQ(p.pytest_plugins, std::vector<std::string>{"vendor.probe"});
  EXPECT_EQ(p.child_env.at("ZL_PROBE"), "vendor.Probe");
  // A new timer is its module plus this rule: the child imports what the rule names.
  EXPECT_EQ(p.child_env.at("ZL_TIMER_MODULE"), "vendor.fancy_timer");
  in.capabilities.clear();
  zl::Plan plain = zl::derive_plan(r, in);
  EXPECT_EQ(plain.timer, "base");
  EXPECT_EQ(plain.child_env.count("ZL_TIMER_MODULE"), 0u);  // no module named: the child's built-in
  EXPECT_THROW(zl::parse_rules("timers: {name: x}\n", "bad.yaml", r), zl::UsageError);
  EXPECT_THROW(zl::parse_rules("pytest_plugins:\n  - {name: nomodule}\n", "bad.yaml", r), zl::UsageError);
}

// Where a timer's clock runs decides whether a batch may start a standby
// worker beside it: the installed rules put only the host timer on the host.
TEST(Plan, TheChosenTimersClockComesFromItsRule) {
  EXPECT_EQ(plan_for(*all().find("cuda"), {}).timer_clock, "device");
  EXPECT_EQ(plan_for(*all().find("cuda"), {}, "host").timer_clock, "host");
  zl::Rules r;
  zl::parse_rules("timers:\n  - {name: t, priority: 1, requires: [], clock: host}\n", "a.yaml", r);
  EXPECT_EQ(r.timers.at(0).clock, "host");
  try {
    zl::parse_rules("timers:\n  - {name: t, priority: 1, requires: [], clock: wall}\n", "c.yaml", r);
    FAIL();
  } catch (const zl::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("timer 't' clock must be device or host, not 'wall'"), std::string::npos)
        << e.what();
  }
}

TEST(Plan, ColdL2IsHonouredByTheGraphAndDirectTimers) {
  zl::Plan cuda = plan_for(*all().find("cuda"), {{zl::kL2Knob, "cold"}});
  EXPECT_EQ(cuda.timer, "graph");
  EXPECT_EQ(cuda.timer_fallback, "direct");
  EXPECT_EQ(cuda.l2, "cold");
  EXPECT_EQ(plan_for(*all().find("rocm"), {{zl::kL2Knob, "cold"}}).timer, "direct");
  EXPECT_EQ(plan_for(*all().find("cuda")).l2, "warm");  // no knob: warm
}

TEST(Plan, ColdL2IsRefusedOnTheHostTimerSayingWhy) {
  const std::string why =
      "it reads the host's clock around loops of back-to-back calls, so a clear between two calls would be timed "
      "with them, and without device events there is no clock that could time the clears alone to subtract them; "
      "use --l2 warm";
  try {
    plan_for(*all().find("host"), {{zl::kL2Knob, "cold"}});
    FAIL();
  } catch (const zl::UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--l2 cold cannot be honoured by the host timer (the plan's): " + why);
  }
  try {
    plan_for(*all().find("cuda"), {{zl::kL2Knob, "cold"}}, "host");
    FAIL();
  } catch (const zl::UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--l2 cold cannot be honoured by the host timer (forced by --timer): " + why);
  }
  EXPECT_EQ(plan_for(*all().find("host"), {{zl::kL2Knob, "warm"}}).timer, "host");
}

// A timer a rules.d file adds says which policies it honours; one that says
// nothing is warm only, and a fallback is held to the policy as well.
TEST(Plan, ATimerRuleWithoutL2HonoursWarmOnly) {
  zl::Rules r;
  zl::parse_rules(
      "timers:\n  - {name: plain, priority: 1, requires: []}\n"
      "  - {name: clears, priority: 2, requires: [x], fallback: plain, l2: [warm, cold]}\n",
      "a.yaml", r);
  zl::PlanInputs in;
  in.backend = "b";
  in.knobs = {{zl::kL2Knob, "cold"}};
  try {
    zl::derive_plan(r, in);
    FAIL();
  } catch (const zl::UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "--l2 cold cannot be honoured by the plain timer (the plan's): it clears no cache; use "
                 "--l2 warm");
  }
  in.capabilities = {{"x", "1"}};
  try {
    zl::derive_plan(r, in);
    FAIL();
  } catch (const zl::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("by the plain timer (the per-shape fallback)"), std::string::npos) << e.what();
  }
  try {
    zl::parse_rules("timers:\n  - {name: odd, l2: [tepid]}\n", "bad.yaml", r);
    FAIL();
  } catch (const zl::UsageError& e) {
    EXPECT_STREQ(e.what(), "rules file bad.yaml: timer 'odd' l2 lists 'tepid'; use warm, cold");
  }
}

// --profile (ZL_PROFILE=1): the profiler comes from the capabilities alone,
// like the timer, and a backend that offers none refuses it in one line.
TEST(Plan, ProfileTakesTheOfferedProfilerAndItsPlugin) {
  for (const char* name : {"cuda", "rocm"}) {
    zl::Plan p = plan_for(*all().find(name), {{zl::kProfileKnob, "1"}});
    EXPECT_EQ(p.profiler, "torch.profiler") << name;
    EXPECT_EQ(p.child_env.at("ZL_PROFILER"), "torch.profiler") << name;
    EXPECT_EQ(p.child_env.at("ZL_PROFILER_MODULE"), "zlcore_pytest.torch_profile") << name;
    EXPECT_EQ(p.child_env.at("ZL_PROFILE_ACTIVITY"), "cuda") << name;
    EXPECT_EQ(p.pytest_plugins.back(), "zlcore_pytest.profile") << name;
  }
}

TEST(Plan, WithoutProfileNoProfilerRunsAndItsPluginStaysOut) {
  for (std::map<std::string, std::string> knobs :
       {std::map<std::string, std::string>{}, std::map<std::string, std::string>{{zl::kProfileKnob, "0"}}}) {
    zl::Plan p = plan_for(*all().find("cuda"), knobs);
    EXPECT_EQ(p.profiler, "");
    EXPECT_EQ(p.child_env.count("ZL_PROFILER_MODULE"), 0u);
    EXPECT_EQ(std::count(p.pytest_plugins.begin(), p.pytest_plugins.end(), "zlcore_pytest.profile"), 0);
  }
}

TEST(Plan, ABackendThatOffersNoProfilerRefusesProfile) {
  zl::PlanInputs in;
  in.backend = "host";
  in.capabilities = all().find("host")->capabilities();
  in.knobs = {{zl::kProfileKnob, "1"}};
  in.profile_given = "ZL_PROFILE=1";
  try {
    zl::derive_plan(rules(), in);
    FAIL();
  } catch (const zl::UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "ZL_PROFILE=1 cannot be honoured with backend 'host': it offers no profiler (torch.profiler needs "
                 "torch_profiler among its capabilities); run without --profile");
  }
}

TEST(Plan, AProfilerRuleNeedsAModuleAndTheHighestPriorityOfferedWins) {
  zl::Rules r;
  try {
    zl::parse_rules("profilers:\n  - {name: nomodule, requires: []}\n", "bad.yaml", r);
    FAIL();
  } catch (const zl::UsageError& e) {
    EXPECT_STREQ(e.what(), "rules file bad.yaml: profiler 'nomodule' needs a 'module'");
  }
  zl::parse_rules(
      "timers:\n  - {name: plain, requires: []}\n"
      "profilers:\n  - {name: low, module: m.low, priority: 1, requires: []}\n"
      "  - {name: high, module: m.high, priority: 2, requires: []}\n"
      "  - {name: absent, module: m.absent, priority: 3, requires: [nothing_declares_it]}\n",
      "a.yaml", r);
  zl::PlanInputs in;
  in.backend = "b";
  in.knobs = {{zl::kProfileKnob, "1"}};
  zl::Plan p = zl::derive_plan(r, in);
  EXPECT_EQ(p.profiler, "high");
  EXPECT_EQ(p.child_env.at("ZL_PROFILER_MODULE"), "m.high");
}

}  // namespace
