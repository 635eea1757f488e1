// `compare` on a batch read every runs/<dir> with an
// identity, stale attempts (runs/<op>.attemptN, runs/<op>.warm) included, so
// an op rerun by --resume counted twice; and `--format csv` dropped the
// warning about a torn results line. Now a batch side is each op's current
// run (the run_dir of its last row), and csv says what it skipped.
#include <gtest/gtest.h>
#include <fstream>

#include "zlcore/batch.hpp"
#include "zltest/child.hpp"
#include "zltest/files.hpp"
#include "zltest/temp_dir.hpp"
#include "zltest/zlcore_cli.hpp"

namespace {

using zltest::TempDir;
namespace fs = std::filesystem;

std::string row(const std::string& status, const std::string& run_dir) {
  zl::batch::OpRow r;
  r.op = "abs";
  r.status = *zl::batch::parse_status(status);
  r.run_dir = run_dir;
  return zl::batch::csv_record(r);
}

TEST(CompareCurrent, ABatchSideIsEachOpsLastRunOnly) {
  TempDir tmp;
  const fs::path batch = tmp / "batch";
  // The op failed, was rerun by --resume (the failed run moved aside), and
  // an attempt in a warm worker was kept beside the rerun.
  zltest::copy_tree(ZL_COMPARE_DATA "/verdicts/a", batch / "runs" / "abs");
  zltest::copy_tree(ZL_COMPARE_DATA "/verdicts/b", batch / "runs" / "abs.attempt1");
  zltest::copy_tree(ZL_COMPARE_DATA "/verdicts/b", batch / "runs" / "abs.warm");
  zltest::spit(batch / "ops_status.csv",
               zl::batch::csv_header() + row("failed", "runs/abs") + row("passed", "runs/abs"));
  zltest::Ran r = zltest::zlcore(
      {"compare", batch.string(), (fs::path(ZL_COMPARE_DATA) / "verdicts" / "a").string(), "--format", "csv"},
      tmp.path());
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  EXPECT_EQ(r.out.find("ONLY_A"), std::string::npos) << "a stale attempt was read\n" << r.out;
  EXPECT_EQ(r.out.find(" #2"), std::string::npos) << "a stale attempt was read\n" << r.out;
  EXPECT_EQ(r.out.find(",SLOWER,"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(",FASTER,"), std::string::npos) << r.out;

  // Without ops_status.csv (killed before its first row) the stale
  // directories are still not results.
  fs::remove(batch / "ops_status.csv");
  r = zltest::zlcore(
      {"compare", batch.string(), (fs::path(ZL_COMPARE_DATA) / "verdicts" / "a").string(), "--format", "csv"},
      tmp.path());
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  EXPECT_EQ(r.out.find("ONLY_A"), std::string::npos) << r.out;
}

TEST(CompareCurrent, CsvKeepsTheTornLineWarning) {
  TempDir tmp;
  zltest::copy_tree(ZL_COMPARE_DATA "/verdicts/a", tmp / "A");
  zltest::copy_tree(ZL_COMPARE_DATA "/verdicts/a", tmp / "B");
  { std::ofstream(tmp / "B" / "results.jsonl", std::ios::app) << "{\"op\": \"abs\", \"dtype\": \"flo"; }
  const size_t line = zltest::count_lines(zltest::slurp(tmp / "B" / "results.jsonl")) + 1;
  zltest::Ran r =
      zltest::zlcore({"compare", (tmp / "A").string(), (tmp / "B").string(), "--format", "csv"}, tmp.path());
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  EXPECT_NE(r.out.find("# warning: B: " + (tmp / "B").string() + "/results.jsonl:" + std::to_string(line) +
                       ": unreadable line skipped\n"),
            std::string::npos)
      << r.out;
}

}  // namespace
