// Runs that measured nothing passed. `shapes: []`, an
// empty shape file and `--python /bin/true` ended `status passed` with no
// rows. Zero result rows is now status `empty` (exit 7 from run; a failing
// row in a batch, exit 1), and `passed` always has rows behind it. An empty
// shape file and an interpreter without pytest are refused before anything
// runs (preflight, exit 3), which is earlier and says more.
#include <gtest/gtest.h>

#include "host_run.hpp"
#include "zltest/fault_suite_batch.hpp"

namespace {

using zl::batch::Status;
using zltest::TempDir;
namespace fs = std::filesystem;

zltest::Ran run_abs(const TempDir& tmp, const std::string& out, std::vector<std::string> extra) {
  extra.insert(extra.begin(), {"--dtypes", "float32"});
  return bad_input::host_run(tmp, "abs", out, extra);
}

size_t rows_in(const fs::path& run) {
  std::error_code ec;
  return fs::exists(run / "results.jsonl", ec) ? zltest::count_lines(zltest::slurp(run / "results.jsonl")) : 0;
}

void expect_empty(const TempDir& tmp, const zltest::Ran& r, const std::string& out) {
  EXPECT_EQ(r.exit_code, 7) << zltest::describe(r);
  EXPECT_NE(r.out.find("status empty (exit 7)"), std::string::npos) << zltest::describe(r);
  EXPECT_NE(zltest::slurp(tmp / out / "run_identity.json").find("\"status\": \"empty\""), std::string::npos);
  EXPECT_EQ(rows_in(tmp / out), 0u);
}

TEST(EmptyRuns, NoShapesIsEmpty) {
  TempDir tmp;
  zltest::spit(tmp / "none.yaml", "abs:\n  shapes: []\n");
  expect_empty(tmp, run_abs(tmp, "r", {"--shape-mode", "file", "--shape-file", (tmp / "none.yaml").string()}), "r");
}

TEST(EmptyRuns, APythonThatRunsNothingIsRefusedFirst) {
  TempDir tmp;
  zltest::Ran r = run_abs(tmp, "r", {"--python", "/bin/true"});
  EXPECT_EQ(r.exit_code, 3) << zltest::describe(r);
  EXPECT_EQ(r.err.rfind("PREFLIGHT_FAILED check=python --python /bin/true", 0), 0u) << zltest::describe(r);
  EXPECT_EQ(rows_in(tmp / "r"), 0u);
}

TEST(EmptyRuns, AnEmptyShapeFileIsRefusedFirst) {
  TempDir tmp;
  zltest::spit(tmp / "empty.yaml", "");
  zltest::Ran r = run_abs(tmp, "r", {"--shape-mode", "file", "--shape-file", (tmp / "empty.yaml").string()});
  EXPECT_EQ(r.exit_code, 3) << zltest::describe(r);
  EXPECT_NE(r.err.find("PREFLIGHT_FAILED check=shape_file"), std::string::npos) << zltest::describe(r);
  EXPECT_NE(r.err.find("holds no shapes"), std::string::npos) << zltest::describe(r);
}

TEST(EmptyRuns, ABatchRecordsEmptyAndFails) {
  TempDir tmp;
  zltest::spit(tmp / "none.yaml", "ok1:\n  shapes: []\n");
  zltest::Ran r = zltest::zlcore(
      zltest::batch_args(tmp / "b", "ok1", {"--shape-mode", "file", "--shape-file", (tmp / "none.yaml").string()}),
      tmp.path(), zltest::batch_env(tmp, zltest::new_tag()), 120);
  EXPECT_EQ(r.exit_code, 1) << zltest::describe(r);
  auto rows = zltest::rows_of(tmp / "b");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, Status::empty);
  EXPECT_EQ(rows[0].exit_code, 7);

  // An interpreter that cannot run pytest is refused once, as run refuses
  // it, before the batch writes anything.
  r = zltest::zlcore(
      {"--backend-dir", ZL_BUILD_PLUGIN_DIR, "batch", "--backend", "host", "--flaggems-dir", ZL_FAULT_SUITE, "--ops",
       "ok1", "--python", "/bin/true", "--no-idle-check", "--out", (tmp / "c").string()},
      tmp.path(), zltest::batch_env(tmp, zltest::new_tag()), 120);
  EXPECT_EQ(r.exit_code, 3) << zltest::describe(r);
  EXPECT_EQ(r.err.rfind("PREFLIGHT_FAILED check=python --python /bin/true", 0), 0u) << zltest::describe(r);
  EXPECT_FALSE(fs::exists(tmp / "c"));
}

}  // namespace
