// Names and values. An op name over 255 bytes aborted a
// batch for good (`internal error: File name too long`), `--devices ''` meant
// every device, `--timeout -1`, `nan` and `inf` were taken, and an op name
// could steer `run`'s default directory. Names and values are now checked
// once, up front: exit 2, one line, nothing written.
#include <gtest/gtest.h>

#include "zltest/fault_suite_batch.hpp"

namespace {

using zltest::TempDir;
namespace fs = std::filesystem;

void expect_one_line_refusal(const zltest::Ran& r, const std::string& says) {
  EXPECT_EQ(r.exit_code, 2) << zltest::describe(r);
  EXPECT_EQ(zltest::count_lines(r.err), 1u) << zltest::describe(r);
  EXPECT_NE(r.err.find(says), std::string::npos) << zltest::describe(r);
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << "an escape reached the terminal raw";
}

zltest::Ran batch(const TempDir& tmp, const std::string& ops, const std::vector<std::string>& extra = {}) {
  return zltest::zlcore(zltest::batch_args(tmp / "b", ops, extra), tmp.path(),
                        zltest::batch_env(tmp, zltest::new_tag()), 60);
}

TEST(NamesValues, BatchOpNamesAreCheckedBeforeAnythingIsWritten) {
  TempDir tmp;
  const std::string not_an_op = "is not an op entry: ";
  expect_one_line_refusal(batch(tmp, std::string(300, 'x')),
                          not_an_op + "an op (a mark of the suite) is letters, digits");
  expect_one_line_refusal(batch(tmp, "ok1,ab\x1b[31mc"), "'ab\\x1b[31mc' " + not_an_op);
  expect_one_line_refusal(batch(tmp, "ok1,a b"), "'a b' " + not_an_op);
  expect_one_line_refusal(batch(tmp, "benchmark/test_ok1.py::" + std::string(1100, 't')),
                          "a node id is at most 1024 bytes");
  expect_one_line_refusal(batch(tmp, "benchmark/test_ok1.py::test_\x07ok1"),
                          "a node id's test part is printable ASCII");
  expect_one_line_refusal(batch(tmp, "bench mark/test_ok1.py"), "a benchmark file path is letters, digits");
  zltest::spit(tmp / "ops.yaml", "ops:\n  - name: \"ok\\u001b]0;pwned\\u0007\"\n");
  expect_one_line_refusal(
      zltest::zlcore({"--backend-dir", ZL_BUILD_PLUGIN_DIR, "batch", "--backend", "host", "--flaggems-dir",
                      ZL_FAULT_SUITE, "--ops-file", (tmp / "ops.yaml").string(), "--out", (tmp / "b").string()},
                     tmp.path()),
      not_an_op);
  EXPECT_FALSE(fs::exists(tmp / "b")) << "a refused batch created its directory";
}

TEST(NamesValues, AnEmptyDeviceListIsNotAll) {
  TempDir tmp;
  expect_one_line_refusal(batch(tmp, "ok1", {"--devices", ""}), "--devices: empty device list");
  expect_one_line_refusal(batch(tmp, "ok1", {"--gpus", " "}), "--gpus: empty device list");
  EXPECT_FALSE(fs::exists(tmp / "b"));
}

TEST(NamesValues, TimeoutsMustBeFiniteAndNotNegative) {
  TempDir tmp;
  for (const std::string bad : {"-1", "nan", "inf", "-inf", "1e9", "ten"}) {
    SCOPED_TRACE(bad);
    expect_one_line_refusal(batch(tmp, "ok1", {"--timeout", bad}), "--timeout: '" + bad + "' is not allowed");
    zltest::Ran r = zltest::zlcore(
        {"--backend-dir", ZL_BUILD_PLUGIN_DIR, "run", "--backend", "host", "--flaggems-dir", ZL_FAULT_SUITE, "--op",
         "ok1", "--python", "/usr/bin/python3", "--timeout", bad, "--out", (tmp / "r").string()},
        tmp.path());
    expect_one_line_refusal(r, "--timeout: '" + bad + "' is not allowed");
  }
  EXPECT_FALSE(fs::exists(tmp / "b"));
  EXPECT_FALSE(fs::exists(tmp / "r"));
}

TEST(NamesValues, AnOpNameNeverMovesRunsDefaultDirectory) {
  TempDir tmp;
  const std::string escape_to = "zl-escaped-" + zltest::new_tag();
  zltest::Ran r = zltest::zlcore({"--backend-dir", ZL_BUILD_PLUGIN_DIR, "run", "--backend", "host", "--flaggems-dir",
                                  ZL_EXAMPLE_SUITE, "--op", "/../../../" + escape_to, "--python", "/usr/bin/python3"},
                                 tmp.path(), {}, 60, tmp.path());
  EXPECT_EQ(r.exit_code, 2) << zltest::describe(r);
  EXPECT_FALSE(fs::exists(fs::path("/") / escape_to));
  EXPECT_FALSE(fs::exists(tmp / "runs"));

  // A node whose file name is long and holds an escape: the op named after
  // it gives the default directory one safe name inside runs/.
  const fs::path suite = tmp / "suite";
  fs::copy(ZL_EXAMPLE_SUITE, suite, fs::copy_options::recursive);
  // ESC c resets a terminal; a '[' would make pytest read the path as a parameter.
  const std::string stem =
      "test_\x1b"
      "cred_" +
      std::string(200, 'x');
  fs::copy_file(suite / "benchmark" / "test_abs.py", suite / "benchmark" / (stem + ".py"));
  r = zltest::zlcore(
      {"--backend-dir", ZL_BUILD_PLUGIN_DIR, "run", "--backend", "host", "--flaggems-dir", suite.string(),
       "--test-node", "benchmark/" + stem + ".py::test_abs", "--python", "/usr/bin/python3", "--dtypes", "float32"},
      tmp.path(), {{"HOME", (tmp / "home").string()}}, 120, tmp.path());
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << "an escape reached the terminal raw";
  std::vector<fs::path> made;
  for (const auto& e : fs::directory_iterator(tmp / "runs")) made.push_back(e.path());
  ASSERT_EQ(made.size(), 1u);
  const std::string name = made[0].filename().string();
  EXPECT_LE(name.size(), 160u) << name;
  EXPECT_EQ(name.find('\x1b'), std::string::npos) << name;
  EXPECT_TRUE(fs::exists(made[0] / "run_identity.json"));
}

}  // namespace
