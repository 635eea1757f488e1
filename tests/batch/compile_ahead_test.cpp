// The compile-ahead pass's decisions that need no device: when it may run,
// what a marker vouches for, and where markers live.
#include "batch/compile_ahead.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <thread>

#include "zltest/temp_dir.hpp"

namespace zl::batch {
namespace {

BatchOptions with_flag(const std::string& flag, const std::string& value) {
  BatchOptions o;
  o.run.flags.emplace_back(flag, value);
  return o;
}

TEST(CompileAhead, RefusedWhereEachRunHasATunerCacheOfItsOwn) {
  EXPECT_EQ(compile_ahead_refusal(BatchOptions{}), "");
  EXPECT_EQ(compile_ahead_refusal(with_flag("--isolate-tuner-cache", "0")), "");
  EXPECT_EQ(compile_ahead_refusal(with_flag("--autotune", "tune")), "");
  EXPECT_NE(compile_ahead_refusal(with_flag("--isolate-tuner-cache", "1")), "");
  // Every spelling a run accepts.
  EXPECT_NE(compile_ahead_refusal(with_flag("--isolate-tuner-cache", "True")), "");
  EXPECT_EQ(compile_ahead_refusal(with_flag("--isolate-tuner-cache", "OFF")), "");
  EXPECT_NE(compile_ahead_refusal(with_flag("--autotune", "record")), "");
  BatchOptions replay;
  replay.run.replay_from = "/runs/a";
  EXPECT_NE(compile_ahead_refusal(replay), "");
}

TEST(CompileAhead, AMarkerVouchesForTheOpItsTestsAndTheSuiteAsTheyWere) {
  OpSpec abs{"abs", "abs", "", "", {}, "", OpSpec::Expand::none};
  OpRunFlags run;
  run.flags = {{"--level", "core"}, {"--l2", "warm"}};
  run.dtypes = {"float16"};
  const std::string key = ready_key(abs, run, "suite-1");
  EXPECT_EQ(key, ready_key(abs, run, "suite-1"));
  EXPECT_NE(key, ready_key(abs, run, "suite-2"));  // the suite's files changed
  OpSpec other = abs;
  other.name = other.op = "neg";
  EXPECT_NE(key, ready_key(other, run, "suite-1"));
  OpRunFlags level = run;
  level.flags[0].second = "comprehensive";
  EXPECT_NE(key, ready_key(abs, level, "suite-1"));
  OpRunFlags dtypes = run;
  dtypes.dtypes = {"bfloat16"};
  EXPECT_NE(key, ready_key(abs, dtypes, "suite-1"));
  // How a run measures compiles no other kernel.
  OpRunFlags cold = run;
  cold.flags[1].second = "cold";
  EXPECT_EQ(key, ready_key(abs, cold, "suite-1"));
}

// SHAPE_FILE names the shapes when --shape-file is absent: what it holds
// is part of the key, not only its path.
TEST(CompileAhead, AShapeFileFromTheEnvironmentIsKeyedByWhatItHolds) {
  zltest::TempDir tmp("zl-shapes");
  const std::string file = (tmp / "shapes.yaml").string();
  std::ofstream(file) << "UnaryPointwiseBenchmark:\n  shapes:\n    - [64]\n";
  OpSpec abs;
  abs.name = "abs";
  ::setenv("SHAPE_FILE", file.c_str(), 1);
  const std::string before = ready_key(abs, OpRunFlags{}, "suite-1");
  std::ofstream(file) << "UnaryPointwiseBenchmark:\n  shapes:\n    - [8, 8]\n";
  const std::string after = ready_key(abs, OpRunFlags{}, "suite-1");
  ::unsetenv("SHAPE_FILE");
  EXPECT_NE(before, after);
}

TEST(CompileAhead, TheSuiteFingerprintFollowsItsFilesButNotItsCaches) {
  zltest::TempDir suite("zl-suite");
  std::ofstream(suite / "test_abs.py") << "x = 1\n";
  const std::string before = suite_fingerprint(suite.path().string());
  std::filesystem::create_directories(suite / "__pycache__");
  std::ofstream(suite / "__pycache__" / "test_abs.pyc") << "bytes";
  std::filesystem::create_directories(suite / ".git");
  std::ofstream(suite / ".git" / "HEAD") << "ref";
  EXPECT_EQ(before, suite_fingerprint(suite.path().string()));
  // What runs write inside a checkout: their directories, the caches.
  std::filesystem::create_directories(suite / "runs" / "b1" / "runs" / "abs");
  std::ofstream(suite / "runs" / "b1" / "batch_identity.json") << "{}";
  std::ofstream(suite / "runs" / "b1" / "runs" / "abs" / "run_identity.json") << "{}";
  std::filesystem::create_directories(suite / "tc" / "zlcore-compiled");
  std::ofstream(suite / "tc" / "zlcore-compiled" / "k1") << "op\tabs\n";
  std::filesystem::create_directories(suite / "out");
  std::ofstream(suite / "out" / "ops_status.csv") << "op\n";
  const std::vector<std::string> outputs = {(suite / "tc").string(), (suite / "out").string()};
  EXPECT_NE(before, suite_fingerprint(suite.path().string())) << "the caches are files under the suite too";
  EXPECT_EQ(before, suite_fingerprint(suite.path().string(), outputs));
  std::ofstream(suite / "test_abs.py") << "x = 22\n";
  EXPECT_NE(before, suite_fingerprint(suite.path().string(), outputs));
}

// A cache where no marker can be left turns the pass off before it runs.
TEST(CompileAhead, ACacheThatCannotHoldMarkersIsRefusedBeforeThePass) {
  zltest::TempDir tmp("zl-triton");
  EXPECT_EQ(markers_refusal((tmp / "fresh").string()), "");
  std::ofstream(tmp / "file") << "x";
  EXPECT_EQ(
      markers_refusal((tmp / "file").string()),
      "cannot keep compile-ahead markers in " + (tmp / "file" / "zlcore-compiled").string() + " (Not a directory)");
  std::filesystem::create_directories(tmp / "taken");
  std::ofstream(tmp / "taken" / "zlcore-compiled") << "x";
  EXPECT_NE(markers_refusal((tmp / "taken").string()), "");
}

TEST(CompileAhead, MarkersLiveInTheTritonCacheTheyVouchFor) {
  zltest::TempDir triton("zl-triton");
  EXPECT_FALSE(is_compiled(triton.path().string(), "k1"));
  std::string error;
  mark_compiled(triton.path().string(), "k1", "abs", "/runs/b", &error);
  EXPECT_EQ(error, "");
  EXPECT_TRUE(is_compiled(triton.path().string(), "k1"));
  EXPECT_FALSE(is_compiled(triton.path().string(), "k2"));
  // A cache cleared whole takes its markers with it.
  std::filesystem::remove_all(triton.path() / "zlcore-compiled");
  EXPECT_FALSE(is_compiled(triton.path().string(), "k1"));
  // A cache that cannot be written to says why, and nothing else happens.
  mark_compiled("/proc/no-such-cache", "k1", "abs", "/runs/b", &error);
  EXPECT_NE(error, "");
}

}  // namespace
}  // namespace zl::batch
