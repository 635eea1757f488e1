// How a run's status is decided from what its child left (run/status.cpp).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "run/status.hpp"
#include "zlcore/provider.hpp"

namespace {

struct Facts {
  zl::ChildFacts facts;
  rapidjson::Document outcomes;
};

// One outcomes.json as the plugin writes it, the child's exit, and rows per test.
Facts make(const std::string& outcomes_json, int exit_code, std::map<std::string, int> rows = {}) {
  Facts f;
  f.facts.child.started = true;
  f.facts.child.exit_code = exit_code;
  if (!outcomes_json.empty()) {
    f.outcomes.Parse(outcomes_json.c_str());
    EXPECT_FALSE(f.outcomes.HasParseError()) << outcomes_json;
  }
  for (const auto& [node, n] : rows) {
    f.facts.rows.by_test[node] = n;
    f.facts.rows.total += n;
  }
  return f;
}

zl::RunStatus decide(Facts& f) {
  if (!f.outcomes.IsNull()) f.facts.outcomes = &f.outcomes;
  return zl::decide_status(f.facts, zl::FlagGemsProvider::is_decline);
}

const char* kDecline = "ValueError: Given dtype(s) 'torch.float16'can't be supported by this op 'special_bessel_j1'";

std::string test(const std::string& node, const std::string& outcome, const std::string& message = "",
                 bool harness = false, bool device = false) {
  return "{\"node\": \"" + node + "\", \"outcome\": \"" + outcome + "\", \"message\": \"" + message +
         "\", \"harness\": " + (harness ? "true" : "false") + ", \"device_error\": " + (device ? "true" : "false") +
         "}";
}

std::string outcomes(const std::vector<std::string>& tests, int selected = -1, int deselected = 0) {
  std::string list;
  for (const std::string& t : tests) list += (list.empty() ? "" : ", ") + t;
  return "{\"selected\": " + std::to_string(selected < 0 ? static_cast<int>(tests.size()) : selected) +
         ", \"deselected\": " + std::to_string(deselected) + ", \"tests\": [" + list + "]}";
}

}  // namespace

TEST(RunStatus, PassedNeedsRows) {
  Facts f = make(outcomes({test("t::a", "passed")}), 0, {{"t::a", 3}});
  EXPECT_EQ(decide(f).status, "passed");
  EXPECT_EQ(decide(f).exit_code, 0);
  Facts none = make(outcomes({test("t::a", "passed")}), 0);
  EXPECT_EQ(decide(none).status, "empty");
  EXPECT_EQ(decide(none).exit_code, zl::kExitEmpty);
}

TEST(RunStatus, TheSuiteDecliningIsUnsupportedNotFailed) {
  Facts f = make(outcomes({test("t::a", "failed", kDecline)}), 1);
  zl::RunStatus s = decide(f);
  EXPECT_EQ(s.status, "unsupported");
  EXPECT_EQ(s.exit_code, zl::kExitUnsupported);
  EXPECT_NE(s.reason.find("can't be supported"), std::string::npos);
}

TEST(RunStatus, DeclinedNextToMeasuredRowsIsPassedWithANote) {
  Facts f = make(outcomes({test("t::a[f16]", "passed"), test("t::a[f32]", "failed", kDecline)}), 1, {{"t::a[f16]", 5}});
  zl::RunStatus s = decide(f);
  EXPECT_EQ(s.status, "passed");
  EXPECT_EQ(s.exit_code, 0);
  EXPECT_NE(s.reason.find("declined"), std::string::npos);
  EXPECT_EQ(s.declined_tests, std::vector<std::string>{"t::a[f32]"});
}

TEST(RunStatus, RealFailureNextToRowsIsPartialAndNamesTheTest) {
  Facts f =
      make(outcomes({test("t::good", "passed"), test("t::bad", "failed", "RuntimeError: boom")}), 1, {{"t::good", 2}});
  zl::RunStatus s = decide(f);
  EXPECT_EQ(s.status, "partial");
  EXPECT_EQ(s.exit_code, 1);
  EXPECT_NE(s.reason.find("t::bad: RuntimeError: boom"), std::string::npos);
  // Without rows from the passing test, it is a failure.
  Facts g = make(outcomes({test("t::good", "passed"), test("t::bad", "failed", "RuntimeError: boom")}), 1);
  EXPECT_EQ(decide(g).status, "failed");
}

TEST(RunStatus, OurOwnPluginRaisingIsHarnessErrorEvenNextToRows) {
  Facts f = make(outcomes({test("t::a", "passed"), test("t::b", "failed", "KeyError: 'x'", true)}), 1, {{"t::a", 2}});
  zl::RunStatus s = decide(f);
  EXPECT_EQ(s.status, "harness_error");
  EXPECT_EQ(s.exit_code, zl::kExitHarnessError);
  Facts ie = make(
      "{\"selected\": 0, \"tests\": [], \"internal_error\": {\"message\": \"AttributeError: x\", "
      "\"harness\": true}}",
      3);
  EXPECT_EQ(decide(ie).status, "harness_error");
}

TEST(RunStatus, NothingSelectedOrAllSkippedIsNoTests) {
  Facts none = make(outcomes({}, 0, 4), 5);
  zl::RunStatus s = decide(none);
  EXPECT_EQ(s.status, "no_tests");
  EXPECT_EQ(s.exit_code, zl::kExitNoTests);
  EXPECT_NE(s.reason.find("deselected"), std::string::npos);
  Facts skipped = make(outcomes({test("t::a", "skipped", "requires Hopper")}), 0);
  s = decide(skipped);
  EXPECT_EQ(s.status, "no_tests");
  EXPECT_NE(s.reason.find("requires Hopper"), std::string::npos);
}

TEST(RunStatus, ATestTheSuiteMarksXfailIsUnsupportedWithItsReason) {
  const char* why = "the suite expects this test to fail (xfail): Triton 3.6.0 compilation error on Hopper";
  Facts alone = make(outcomes({test("t::a", "xfailed", why)}), 0);
  zl::RunStatus s = decide(alone);
  EXPECT_EQ(s.status, "unsupported");
  EXPECT_EQ(s.exit_code, zl::kExitUnsupported);
  EXPECT_NE(s.reason.find("Triton 3.6.0 compilation error"), std::string::npos);
  Facts beside = make(outcomes({test("t::a", "passed"), test("t::b", "xfailed", why)}), 0, {{"t::a", 4}});
  EXPECT_EQ(decide(beside).status, "passed");
  EXPECT_EQ(decide(beside).declined_tests, std::vector<std::string>{"t::b"});
}

TEST(RunStatus, ExitFactsComeFirst) {
  Facts t = make(outcomes({test("t::a", "passed")}), 0, {{"t::a", 1}});
  t.facts.child.timed_out = true;
  EXPECT_EQ(decide(t).status, "timeout");
  Facts c = make("", -1);
  c.facts.child.term_signal = 11;
  EXPECT_EQ(decide(c).status, "crashed");
  EXPECT_EQ(decide(c).exit_code, 139);
  Facts p = make("", 3);
  p.facts.log_tail = "noise\nzlcore device_setup: PREFLIGHT_FAILED check=device_setup: no torch\n";
  EXPECT_EQ(decide(p).status, "preflight_failed");
  EXPECT_EQ(decide(p).reason, "PREFLIGHT_FAILED check=device_setup: no torch");
}

TEST(RunStatus, NoPluginReportIsFailedWithPytestsWordsOrEmpty) {
  Facts usage = make("", 4);
  usage.facts.log_tail = "ERROR: usage: pytest [options]\npytest: error: unrecognized arguments: --level core\n";
  zl::RunStatus s = decide(usage);
  EXPECT_EQ(s.status, "failed");
  EXPECT_EQ(s.exit_code, 4);
  EXPECT_NE(s.reason.find("unrecognized arguments"), std::string::npos);
  Facts nothing = make("", 0);  // e.g. --python /bin/true
  EXPECT_EQ(decide(nothing).status, "empty");
}

namespace {

// A child's results file is someone else's JSON: a line nested 300,000 deep
// is skipped like any unreadable line, through the depth-limited reader.
TEST(RowCounts, ADeeplyNestedLineIsSkipped) {
  const std::string path = ::testing::TempDir() + "zl_status_deep_results.jsonl";
  {
    std::ofstream out(path);
    out << "{\"op\": \"abs\", \"test_node\": \"t\"}\n" << std::string(300000, '[') << "\n";
  }
  const zl::RowCounts counts = zl::count_rows(path);
  EXPECT_EQ(counts.total, 1);
  std::remove(path.c_str());
}

}  // namespace
