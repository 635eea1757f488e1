// Repairing ops_status.csv deleted history. A stray quote in
// the first row's reason made everything after it a "torn tail" that was cut
// off; a blank line, an extra column or a malformed middle row stopped every
// later --resume with `internal error`. Now each costs only itself, the file
// is copied aside before any repair, and the batch says what it dropped.
#include <gtest/gtest.h>

#include "zltest/fault_suite_batch.hpp"

namespace {

using zl::batch::OpRow;
using zl::batch::Status;
using zltest::TempDir;
namespace fs = std::filesystem;

OpRow passed_row(const std::string& op) {
  OpRow r;
  r.op = op;
  r.test_node = "benchmark/test_" + op + ".py::test_" + op;
  r.status = Status::passed;
  r.exit_code = 0;
  r.backend = "host";
  r.device_index = 0;
  r.device_id = "host:vm";
  r.timer = "host";
  r.bench_level = "core";
  r.started = "2026-12-03T08:00:00Z";
  r.seconds = 1.5;
  r.run_dir = "runs/" + op;
  return r;
}

struct Resumed {
  zltest::Ran ran;
  std::vector<OpRow> rows;
  std::string backup;  // the copy kept before the repair
};

// A batch whose ops_status.csv is `csv`, resumed over ok1, ok2, ok3, ok4.
Resumed resume_with(const TempDir& tmp, const std::string& csv) {
  const fs::path out = tmp / "b";
  zltest::spit(out / "ops_status.csv", csv);
  Resumed r;
  r.ran = zltest::zlcore(zltest::batch_args(out, "ok1,ok2,ok3,ok4", {"--resume", "--cold"}), tmp.path(),
                         zltest::batch_env(tmp, zltest::new_tag()), 120);
  r.rows = zltest::rows_of(out);
  for (const auto& e : fs::directory_iterator(out)) {
    if (e.path().filename().string().rfind("ops_status.csv.bak-", 0) == 0) r.backup = zltest::slurp(e.path());
  }
  return r;
}

std::vector<std::string> ops_run(const Resumed& r, size_t earlier) {
  std::vector<std::string> ops;
  for (size_t i = earlier; i < r.rows.size(); ++i) ops.push_back(r.rows[i].op);
  return ops;
}

// A function, not a global: the columns are a static of the library.
std::string header() { return zl::batch::csv_header(); }

std::string rec(const std::string& op) { return zl::batch::csv_record(passed_row(op)); }

// Where the reason field of a record of passed_row() ends: before the empty
// time columns that follow it (the row records no time).
size_t reason_end(const std::string& record) {
  return record.size() - 1 - (zl::batch::csv_columns().size() - zl::batch::csv_required_columns());
}

TEST(StatusRepair, AStrayQuoteInTheFirstRowCostsThatRowOnly) {
  TempDir tmp;
  // The reason field opens a quote that never closes.
  std::string first = rec("ok1");
  first.insert(first.size() - 1, "\"stray");
  const std::string csv = header() + first + rec("ok2") + rec("ok3");
  Resumed r = resume_with(tmp, csv);
  EXPECT_EQ(r.ran.exit_code, 0) << zltest::describe(r.ran);
  EXPECT_EQ(r.backup, csv) << "the file as it was must be kept";
  // ok2 and ok3 stay passed and are not run again; ok1 runs again, ok4 runs.
  ASSERT_GE(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].op, "ok2");
  EXPECT_EQ(r.rows[1].op, "ok3");
  std::vector<std::string> ran = ops_run(r, 2);
  std::sort(ran.begin(), ran.end());
  EXPECT_EQ(ran, (std::vector<std::string>{"ok1", "ok4"}));
  EXPECT_NE(r.ran.out.find("ops_status.csv repaired: kept 2 row(s); left out 1 record(s) that could not be read "
                           "(line 2: a quoted field that never closes)"),
            std::string::npos)
      << zltest::describe(r.ran);
}

TEST(StatusRepair, AQuoteInsideAFieldIsText) {
  TempDir tmp;
  OpRow quoted = passed_row("ok1");
  std::string line = zl::batch::csv_record(quoted);
  line.insert(reason_end(line), "he said \"no\" twice");
  Resumed r = resume_with(tmp, header() + line + rec("ok2") + rec("ok3"));
  EXPECT_EQ(r.ran.exit_code, 0) << zltest::describe(r.ran);
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_EQ(r.rows[0].reason, "he said \"no\" twice");
  EXPECT_EQ(ops_run(r, 3), std::vector<std::string>{"ok4"});
  EXPECT_EQ(r.backup, "") << "nothing to repair: no copy";
}

TEST(StatusRepair, BlankLinesAreDroppedAndNothingElse) {
  TempDir tmp;
  const std::string csv = header() + rec("ok1") + "\n   \n" + rec("ok2") + "\r\n" + rec("ok3");
  Resumed r = resume_with(tmp, csv);
  EXPECT_EQ(r.ran.exit_code, 0) << zltest::describe(r.ran);
  EXPECT_EQ(r.backup, csv);
  EXPECT_EQ(ops_run(r, 3), std::vector<std::string>{"ok4"});
  EXPECT_NE(r.ran.out.find("ops_status.csv repaired: kept 3 row(s); dropped 3 blank line(s); the file as it was is "
                           "in ops_status.csv.bak-"),
            std::string::npos)
      << zltest::describe(r.ran);
}

TEST(StatusRepair, AnExtraColumnKeepsTheRow) {
  TempDir tmp;
  std::string second = rec("ok2");
  second.insert(second.size() - 1, ",a note someone added");
  const std::string csv = header() + rec("ok1") + second + rec("ok3");
  Resumed r = resume_with(tmp, csv);
  EXPECT_EQ(r.ran.exit_code, 0) << zltest::describe(r.ran);
  EXPECT_EQ(r.backup, csv);
  EXPECT_EQ(ops_run(r, 3), std::vector<std::string>{"ok4"});
  EXPECT_NE(r.ran.out.find("kept 3 row(s); dropped the extra fields of 1 row(s)"), std::string::npos)
      << zltest::describe(r.ran);
  // A header with a column of someone's own: rows read by column name.
  TempDir tmp2;
  std::string wider = header();
  wider.insert(wider.size() - 1, ",notes");
  std::string row = rec("ok1");
  row.insert(row.size() - 1, ",fine");
  Resumed h = resume_with(tmp2, wider + row);
  EXPECT_EQ(h.ran.exit_code, 0) << zltest::describe(h.ran);
  ASSERT_FALSE(h.rows.empty());
  EXPECT_EQ(h.rows[0].op, "ok1");
  EXPECT_EQ(h.rows[0].status, Status::passed);
  EXPECT_EQ(h.rows.size(), 4u) << "ok1 passed before and must not run again";
}

TEST(StatusRepair, AMalformedMiddleRowCostsThatRowOnly) {
  TempDir tmp;
  const std::string csv = header() + rec("ok1") + "ok2,this,is,not,a,row\n" + "ok9,x,pased,0\n" + rec("ok3");
  Resumed r = resume_with(tmp, csv);
  EXPECT_EQ(r.ran.exit_code, 0) << zltest::describe(r.ran);
  EXPECT_EQ(r.ran.err.find("internal error"), std::string::npos) << zltest::describe(r.ran);
  EXPECT_EQ(r.backup, csv);
  std::vector<std::string> ran = ops_run(r, 2);
  std::sort(ran.begin(), ran.end());
  EXPECT_EQ(ran, (std::vector<std::string>{"ok2", "ok4"}));
  EXPECT_NE(r.ran.out.find("kept 2 row(s); left out 2 record(s) that could not be read (line 3: 6 field(s), the "
                           "header has 26; line 4: 4 field(s), the header has 26)"),
            std::string::npos)
      << zltest::describe(r.ran);
}

TEST(StatusRepair, ATornLastLineIsKeptInTheCopy) {
  TempDir tmp;
  const std::string csv = header() + rec("ok1") + rec("ok2") + "ok3,benchmark/te";
  Resumed r = resume_with(tmp, csv);
  EXPECT_EQ(r.ran.exit_code, 0) << zltest::describe(r.ran);
  EXPECT_EQ(r.backup, csv);
  std::vector<std::string> ran = ops_run(r, 2);
  std::sort(ran.begin(), ran.end());
  EXPECT_EQ(ran, (std::vector<std::string>{"ok3", "ok4"}));
}

TEST(StatusRepair, SomebodyElsesCsvIsRefusedInOneLine) {
  TempDir tmp;
  const std::string csv = "name,size\nalpha,1\n";
  const fs::path out = tmp / "b";
  zltest::spit(out / "ops_status.csv", csv);
  zltest::Ran r = zltest::zlcore(zltest::batch_args(out, "ok1", {"--resume"}), tmp.path(),
                                 zltest::batch_env(tmp, zltest::new_tag()), 60);
  EXPECT_EQ(r.exit_code, 2) << zltest::describe(r);
  EXPECT_EQ(zltest::count_lines(r.err), 1u) << zltest::describe(r);
  EXPECT_NE(r.err.find("is not a zlcore batch's ops_status.csv"), std::string::npos) << zltest::describe(r);
  EXPECT_EQ(zltest::slurp(out / "ops_status.csv"), csv) << "somebody else's file must stay as it was";
}

}  // namespace
