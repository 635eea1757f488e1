// Words on the command line and in records that were taken silently or
// named wrongly: a duplicate or empty --dtypes word, --direct-repeat
// refused under its variable's name, a utilization over 100 %, an --a-env
// name holding a newline, `all` in an A/B's ops file, a loader debug switch
// that is no boolean; and control characters from results.jsonl in
// compare's outputs.
#include <gtest/gtest.h>

#include <algorithm>

#include "zltest/fault_suite_batch.hpp"

namespace {

using zltest::TempDir;
namespace fs = std::filesystem;

void expect_refused(const zltest::Ran& r, const std::string& line) {
  EXPECT_EQ(r.exit_code, 2) << zltest::describe(r);
  EXPECT_EQ(r.err, "zlcore: " + line + "\n") << zltest::describe(r);
}

std::vector<std::string> ab_args(const fs::path& out, const std::vector<std::string>& extra) {
  std::vector<std::string> a{"--backend-dir",
                             ZL_BUILD_PLUGIN_DIR,
                             "ab",
                             "--backend",
                             "host",
                             "--a",
                             ZL_FAULT_SUITE,
                             "--b",
                             ZL_FAULT_SUITE,
                             "--a-python",
                             "/usr/bin/python3",
                             "--b-python",
                             "/usr/bin/python3",
                             "--out",
                             out.string()};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

std::vector<std::string> run_args(const fs::path& out, const std::vector<std::string>& extra) {
  std::vector<std::string> a{"--backend-dir",
                             ZL_BUILD_PLUGIN_DIR,
                             "run",
                             "--backend",
                             "host",
                             "--flaggems-dir",
                             ZL_FAULT_SUITE,
                             "--op",
                             "ok1",
                             "--python",
                             "/usr/bin/python3",
                             "--out",
                             out.string()};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

TEST(InputWords, DtypesWithAnEmptyOrARepeatedWordAreRefused) {
  TempDir tmp;
  const auto env = zltest::batch_env(tmp, zltest::new_tag());
  expect_refused(
      zltest::zlcore(zltest::batch_args(tmp / "b", "ok1", {"--dtypes", "float32,,float32"}), tmp.path(), env, 30),
      "--dtypes 'float32,,float32' holds an empty word; name one or more dtypes separated by commas");
  expect_refused(
      zltest::zlcore(zltest::batch_args(tmp / "b", "ok1", {"--dtypes", "float32,float32"}), tmp.path(), env, 30),
      "--dtypes 'float32,float32' names float32 twice; name each dtype once");
  expect_refused(zltest::zlcore(run_args(tmp / "b", {"--dtypes", ""}), tmp.path(), env, 30),
                 "--dtypes '' holds an empty word; name one or more dtypes separated by commas");
  EXPECT_FALSE(fs::exists(tmp / "b"));
}

// A conflict left in the environment is named as the variable, not as a
// flag the user never typed.
TEST(InputWords, ACompileOnlyConflictIsNamedAsTheUserGaveIt) {
  TempDir tmp;
  const std::vector<std::string> args = run_args(tmp / "r", {"--compile-only"});
  expect_refused(zltest::zlcore(args, tmp.path(), {{"ZL_ISOLATE_TUNER_CACHE", "1"}}, 30),
                 "run: --compile-only fills the shared caches; not with ZL_ISOLATE_TUNER_CACHE=1");
  expect_refused(zltest::zlcore(args, tmp.path(), {{"REPLAY_FROM", (tmp / "a").string()}}, 30),
                 "run: --compile-only tunes nothing; not with REPLAY_FROM");
  expect_refused(zltest::zlcore(run_args(tmp / "r", {"--compile-only", "--replay-from", (tmp / "a").string()}),
                                tmp.path(), {}, 30),
                 "run: --compile-only tunes nothing; not with --replay-from");
  EXPECT_FALSE(fs::exists(tmp / "r"));
}

TEST(InputWords, ABadDirectRepeatIsNamedAsTheUserGaveIt) {
  TempDir tmp;
  expect_refused(zltest::zlcore(run_args(tmp / "r", {"--direct-repeat", "0"}), tmp.path(), {}, 30),
                 "--direct-repeat '0' is not allowed; use a whole number from 1 to 1000");
  for (const std::string bad : {"-1", "+5", " 5", "5 ", "0x5", "99999999999999999999"}) {
    expect_refused(zltest::zlcore(run_args(tmp / "r", {}), tmp.path(), {{"ZL_DIRECT_REPEAT", bad}}, 30),
                   "ZL_DIRECT_REPEAT='" + bad + "' is not allowed; use a whole number from 1 to 1000");
  }
  EXPECT_FALSE(fs::exists(tmp / "r"));
}

TEST(InputWords, AnIdleUtilizationOverAHundredPercentIsRefused) {
  TempDir tmp;
  std::vector<std::string> args = zltest::batch_args(tmp / "b", "ok1", {"--idle-util", "101"});
  args.erase(std::find(args.begin(), args.end(), "--no-idle-check"));
  expect_refused(zltest::zlcore(args, tmp.path(), zltest::batch_env(tmp, zltest::new_tag()), 30),
                 "--idle-util: '101' is not allowed; use a percentage from 0 to 100");
  EXPECT_FALSE(fs::exists(tmp / "b"));
}

TEST(InputWords, CompileAheadLanesAreAutoOrACountAndNotBothSwitches) {
  TempDir tmp;
  const auto env = zltest::batch_env(tmp, zltest::new_tag());
  for (const std::string bad : {"-1", "65", "four", "", " 3", "+3", "3 ", "AUTO", "99999999999999999999"}) {
    expect_refused(zltest::zlcore(zltest::batch_args(tmp / "b", "ok1", {"--compile-ahead", bad}), tmp.path(), env, 30),
                   "--compile-ahead: '" + bad + "' is not allowed; use auto or a number of lanes from 0 to 64");
  }
  expect_refused(zltest::zlcore(zltest::batch_args(tmp / "b", "ok1", {"--compile-ahead", "2", "--no-compile-ahead"}),
                                tmp.path(), env, 30),
                 "--no-compile-ahead and --compile-ahead: give one of them");
  EXPECT_FALSE(fs::exists(tmp / "b"));
}

TEST(InputWords, AnAbEnvironmentNameMustBeAVariableName) {
  TempDir tmp;
  for (const std::string& kv : {std::string("K\nX=1"), std::string("1K=1"), std::string("=1")}) {
    zltest::Ran r = zltest::zlcore(ab_args(tmp / "o", {"--ops", "ok1", "--b-env", kv}), tmp.path(), {}, 30);
    std::string shown = kv;
    if (const size_t nl = shown.find('\n'); nl != std::string::npos) shown.replace(nl, 1, "\\n");
    expect_refused(r, "ab: --b-env '" + shown +
                          "' is not NAME=VALUE with NAME letters, digits and '_', not starting with a digit");
  }
  EXPECT_FALSE(fs::exists(tmp / "o"));
}

TEST(InputWords, AnAbOpsFileNamingAllIsRefused) {
  TempDir tmp;
  zltest::spit(tmp / "ops.txt", "all\n");
  zltest::Ran r = zltest::zlcore(ab_args(tmp / "o", {"--ops-file", (tmp / "ops.txt").string()}), tmp.path(), {}, 30);
  expect_refused(r, "ab: --ops names ops one by one (the suite's marks); `all` and benchmark files are for batch");
  EXPECT_FALSE(fs::exists(tmp / "o"));
}

TEST(InputWords, ALoaderDebugSwitchThatIsNoBooleanIsSaidAndReadAsOff) {
  TempDir tmp;
  zltest::Ran r = zltest::zlcore({"--backend-dir", ZL_BUILD_PLUGIN_DIR, "backends"}, tmp.path(),
                                 {{"ZL_DEBUG_LOADER", "maybe"}}, 60);
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  EXPECT_EQ(r.err,
            "zlcore: ZL_DEBUG_LOADER='maybe' is not a boolean (1/0, true/false, yes/no, on/off); loader tracing is "
            "off\n")
      << zltest::describe(r);
  // Empty is unset: nothing said.
  r = zltest::zlcore({"--backend-dir", ZL_BUILD_PLUGIN_DIR, "backends"}, tmp.path(), {{"ZL_DEBUG_LOADER", ""}}, 60);
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  EXPECT_EQ(r.err, "") << zltest::describe(r);
}

// An op name holding ESC, a newline and a NUL, on both sides of a compare.
fs::path run_with_odd_op_name(const TempDir& tmp, const std::string& side) {
  const fs::path run = tmp / side;
  fs::copy(fs::path(ZL_COMPARE_DATA) / "report" / side / "runs" / "abs", run, fs::copy_options::recursive);
  std::string rows = zltest::slurp(run / "results.jsonl");
  for (size_t at = 0; (at = rows.find("\"op\": \"abs\"", at)) != std::string::npos;) {
    rows.replace(at, 11, "\"op\": \"ab\\u001b[31m,\\\"s\\n\\u0000|<b>\"");
    ++at;
  }
  zltest::spit(run / "results.jsonl", rows);
  // And in the identity's env, whose differences the caliber section lists.
  std::string id = zltest::slurp(run / "run_identity.json");
  const size_t env = id.find("\"env\": {");
  if (env != std::string::npos) {
    id.insert(env + 9, "\"ZL_\\u001b]0;t\\u0007\": \"" + side + "\\u001b[2J\\nFAKE\", ");
  }
  zltest::spit(run / "run_identity.json", id);
  return run;
}

TEST(InputWords, CompareEscapesControlCharactersOfRecordsInEveryFormat) {
  TempDir tmp;
  const fs::path a = run_with_odd_op_name(tmp, "a"), b = run_with_odd_op_name(tmp, "b");
  for (const std::string& format : {std::string("table"), std::string("md"), std::string("csv")}) {
    zltest::Ran r = zltest::zlcore({"compare", a.string(), b.string(), "--format", format}, tmp.path(), {}, 60);
    EXPECT_EQ(r.exit_code, 0) << format << zltest::describe(r);
    EXPECT_NE(r.out.find("ab\\x1b[31m"), std::string::npos) << format << zltest::describe(r);
    if (format != "csv") {  // the caliber's differences are in the table and md reports
      EXPECT_NE(r.out.find("ZL_\\x1b]0;t\\x07"), std::string::npos) << format << zltest::describe(r);
    }
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << format;
    EXPECT_EQ(r.out.find('\0'), std::string::npos) << format;
  }
  zltest::Ran r =
      zltest::zlcore({"compare", a.string(), b.string(), "--html", (tmp / "p.html").string()}, tmp.path(), {}, 60);
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  const std::string page = zltest::slurp(tmp / "p.html");
  EXPECT_EQ(page.find('\x1b'), std::string::npos);
  EXPECT_EQ(page.find('\0'), std::string::npos);
  EXPECT_EQ(page.find("|<b>"), std::string::npos) << "markup from a record reached the page unescaped";
}

}  // namespace
