// 300,000 nested `[` in a file zlcore reads crashed it (a
// recursive parser overflows the stack). Every reader now fails with one line
// naming the file instead: compare (run_identity.json, a results.jsonl line),
// replay (a record, the manifest), the results table after a run, the
// child's side files, and the backends' own JSON reader.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <fstream>

#include "../../core/src/util/json_read.hpp"
#include "host_run.hpp"
#include "zl_kit/json.hpp"
#include "zltest/child.hpp"
#include "zltest/files.hpp"
#include "zltest/temp_dir.hpp"
#include "zltest/zlcore_cli.hpp"

namespace {

using zltest::TempDir;
namespace fs = std::filesystem;

const std::string kDeep(300000, '[');

std::string nested(unsigned depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(DeepJson, TheReaderStopsAtItsLimitWithoutRecursing) {
  rapidjson::Document d;
  EXPECT_EQ(zl::json::parse(d, kDeep), "nesting deeper than 128 levels at offset 128");
  EXPECT_TRUE(d.IsNull());
  EXPECT_EQ(zl::json::parse(d, nested(zl::json::kMaxDepth)), "");
  EXPECT_TRUE(d.IsArray());
  EXPECT_NE(zl::json::parse(d, nested(zl::json::kMaxDepth + 1)), "");
  EXPECT_EQ(zl::json::parse(d, "{\"a\": [1, {\"b\": \"c\"}]}"), "");
  EXPECT_EQ(std::string(d["a"][1]["b"].GetString()), "c");
  EXPECT_EQ(zl::json::parse(d, "{\"a\": 1"), "Missing a comma or '}' after an object member. at offset 7");
  EXPECT_NE(zl::json::parse(d, ""), "");
}

TEST(DeepJson, TheBackendsKitRefusesDeepNesting) {
  std::string error;
  EXPECT_FALSE(zl_kit::Json::parse(kDeep, &error).has_value());
  EXPECT_NE(error.find("nesting too deep"), std::string::npos) << error;
  EXPECT_TRUE(zl_kit::Json::parse(nested(60)).has_value());
}

TEST(DeepJson, CompareNamesADeepIdentityInOneLine) {
  TempDir tmp;
  zltest::copy_tree(ZL_COMPARE_DATA "/verdicts/a", tmp / "A");
  zltest::copy_tree(ZL_COMPARE_DATA "/verdicts/b", tmp / "B");
  zltest::spit(tmp / "B" / "run_identity.json", kDeep);
  zltest::Ran r = zltest::zlcore({"compare", (tmp / "A").string(), (tmp / "B").string()}, tmp.path());
  EXPECT_EQ(r.term_signal, 0) << zltest::describe(r);
  EXPECT_EQ(r.exit_code, 2) << zltest::describe(r);
  EXPECT_EQ(r.err, "zlcore: compare: " + (tmp / "B").string() +
                       "/run_identity.json is not valid JSON: nesting deeper than 128 levels at offset 128\n");
}

TEST(DeepJson, CompareNamesADeepNoiseFloorInOneLine) {
  TempDir tmp;
  zltest::spit(tmp / "floor.json", kDeep);
  zltest::Ran r = zltest::zlcore({"compare", ZL_COMPARE_DATA "/verdicts/a", ZL_COMPARE_DATA "/verdicts/b",
                                  "--noise-floor", (tmp / "floor.json").string()},
                                 tmp.path());
  EXPECT_EQ(r.term_signal, 0) << zltest::describe(r);
  EXPECT_EQ(r.exit_code, 2) << zltest::describe(r);
  EXPECT_EQ(r.err, "zlcore: compare: --noise-floor " + (tmp / "floor.json").string() +
                       ": not JSON (nesting deeper than 128 levels at offset 128); expected a regular file written "
                       "by 'zlcore compare --calibrate A1 A2 ... --out FILE'\n");
}

// ab reads the same file through compare's reader, and says it was ab's.
TEST(DeepJson, AbNamesADeepNoiseFloorAsItsOwnInOneLine) {
  TempDir tmp;
  zltest::spit(tmp / "floor.json", kDeep);
  zltest::Ran r = zltest::zlcore({"ab", "--backend", "host", "--a", ZL_EXAMPLE_SUITE, "--b", ZL_EXAMPLE_SUITE, "--ops",
                                  "abs", "--noise-floor", (tmp / "floor.json").string(), "--out", (tmp / "o").string()},
                                 tmp.path());
  EXPECT_EQ(r.term_signal, 0) << zltest::describe(r);
  EXPECT_EQ(r.exit_code, 2) << zltest::describe(r);
  EXPECT_EQ(r.err, "zlcore: ab: --noise-floor " + (tmp / "floor.json").string() +
                       ": not JSON (nesting deeper than 128 levels at offset 128); expected a regular file written "
                       "by 'zlcore compare --calibrate A1 A2 ... --out FILE'\n");
  EXPECT_FALSE(fs::exists(tmp / "o")) << "nothing written before the options are whole";
}

TEST(DeepJson, CompareSkipsADeepResultsLineWithAWarning) {
  TempDir tmp;
  zltest::copy_tree(ZL_COMPARE_DATA "/verdicts/a", tmp / "A");
  zltest::copy_tree(ZL_COMPARE_DATA "/verdicts/b", tmp / "B");
  { std::ofstream(tmp / "B" / "results.jsonl", std::ios::app) << "\n" << kDeep << "\n"; }
  const size_t line = zltest::count_lines(zltest::slurp(tmp / "B" / "results.jsonl"));
  zltest::Ran r = zltest::zlcore({"compare", (tmp / "A").string(), (tmp / "B").string(), "--format", "md"}, tmp.path());
  EXPECT_EQ(r.term_signal, 0) << zltest::describe(r);
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  const std::string warning =
      (tmp / "B").string() + "/results.jsonl:" + std::to_string(line) + ": unreadable line skipped";
  EXPECT_NE((r.out + r.err).find(warning), std::string::npos) << zltest::describe(r);
}

// A replay source: the manifest and one LibTuner record.
fs::path records(const TempDir& tmp, const std::string& manifest, const std::string& record) {
  const fs::path run = tmp / "A";
  zltest::spit(run / "autotune_records" / "manifest.json", manifest);
  if (!record.empty()) {
    zltest::spit(run / "autotune_records" / "libtuner" / "TunedConfig_host_numgems_0_1" / "t.json", record);
  }
  return run;
}

TEST(DeepJson, ReplayNamesADeepRecordInOneLine) {
  TempDir tmp;
  const fs::path source = records(tmp, "{\"schema\": 1}\n", kDeep);
  zltest::Ran r = bad_input::replay_run(tmp, source, "abs");
  EXPECT_EQ(r.term_signal, 0) << zltest::describe(r);
  EXPECT_EQ(r.exit_code, 3) << zltest::describe(r);
  EXPECT_EQ(r.err, "PREFLIGHT_FAILED check=replay_from cannot replay " +
                       (source / "autotune_records" / "libtuner" / "TunedConfig_host_numgems_0_1" / "t.json").string() +
                       ": not valid JSON (nesting deeper than 128 levels at offset 128)\n");
}

// A manifest that does not read is refused like a record (replaying on
// trust what no longer says where it came from).
TEST(DeepJson, ReplayRefusesADeepManifestInOneLine) {
  TempDir tmp;
  const fs::path source = records(tmp, kDeep, "");
  zltest::Ran r = bad_input::replay_run(tmp, source, "abs");
  EXPECT_EQ(r.term_signal, 0) << zltest::describe(r);
  EXPECT_EQ(r.exit_code, 3) << zltest::describe(r);
  EXPECT_EQ(r.err, "PREFLIGHT_FAILED check=replay_from cannot replay " +
                       (source / "autotune_records" / "manifest.json").string() +
                       ": not valid JSON (nesting deeper than 128 levels at offset 128)\n");
}

// A run whose child wrote a deep results line and deep side files: the run
// finishes, the table names the line, the identity leaves the files out.
TEST(DeepJson, ARunReadsDeepChildFilesWithoutCrashing) {
  TempDir tmp;
  const fs::path python = tmp / "python";
  zltest::spit(python,
               "#!/bin/sh\n"
               "# preflight asks for a version, the executable and pytest; anything else is the pytest child\n"
               "if [ \"$1\" = -c ]; then echo 3.11.0; echo \"$0\"; echo missing:; exit 0; fi\n"
               "echo '{\"op\": \"abs\", \"dtype\": \"float32\", \"shape\": \"[1]\", \"latency_ms\": 1.0}' "
               ">>\"$ZL_RESULTS_FILE\"\n"
               "/usr/bin/python3 -c \"print('[' * 300000)\" >>\"$ZL_RESULTS_FILE\"\n"
               "/usr/bin/python3 -c \"print('[' * 300000)\" >\"$ZL_CHILD_DIR/autotune.json\"\n"
               "/usr/bin/python3 -c \"print('[' * 300000)\" >\"$ZL_CHILD_DIR/device_setup.json\"\n"
               "exit 0\n");
  ::chmod(python.c_str(), 0755);
  zltest::Ran r =
      zltest::zlcore({"--backend-dir", ZL_BUILD_PLUGIN_DIR, "run", "--backend", "host", "--flaggems-dir",
                      ZL_EXAMPLE_SUITE, "--op", "abs", "--python", python.string(), "--out", (tmp / "R").string()},
                     tmp.path(), {{"HOME", (tmp / "home").string()}}, 120);
  EXPECT_EQ(r.term_signal, 0) << zltest::describe(r);
  EXPECT_NE(r.out.find("1 unreadable line(s) skipped, the first: " + (tmp / "R").string() +
                       "/results.jsonl:2: nesting deeper than 128 levels at offset 128"),
            std::string::npos)
      << zltest::describe(r);
  rapidjson::Document id;
  ASSERT_EQ(zl::json::parse(id, zltest::slurp(tmp / "R" / "run_identity.json")), "");
  EXPECT_FALSE(id.HasMember("plugins") && id["plugins"].HasMember("autotune"));
  // The identity that comes out is one compare can read back.
  zltest::Ran c = zltest::zlcore({"compare", (tmp / "R").string(), (tmp / "R").string()}, tmp.path());
  EXPECT_EQ(c.exit_code, 0) << zltest::describe(c);
}

}  // namespace
