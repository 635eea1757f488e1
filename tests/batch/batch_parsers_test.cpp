// The batch's parsers: device lists, op files (text and YAML), the status
// CSV round trip (quoting, a torn last line) and exit-code mapping.
#include <gtest/gtest.h>

#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>

#include "batch/outcome.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/batch.hpp"
#include "zlcore/errors.hpp"
#include "zltest/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace zl::batch;

namespace {

const std::vector<int> kFour = {0, 1, 2, 3};

std::string usage_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const zl::UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(DeviceList, AllIndicesAndRanges) {
  EXPECT_EQ(parse_device_list("all", kFour, "--devices"), kFour);
  EXPECT_EQ(parse_device_list("2", kFour, "--devices"), std::vector<int>({2}));
  EXPECT_EQ(parse_device_list("0-1,3", kFour, "--devices"), std::vector<int>({0, 1, 3}));
  EXPECT_EQ(parse_device_list(" 3 , 1 ", kFour, "--devices"), std::vector<int>({3, 1}));
  EXPECT_EQ(parse_device_list("1-1", kFour, "--devices"), std::vector<int>({1}));
}

TEST(DeviceList, RejectsWithTheValidOnesListed) {
  std::string m = usage_message([] { parse_device_list("0,4", kFour, "--gpus"); });
  EXPECT_NE(m.find("--gpus"), std::string::npos) << m;
  EXPECT_NE(m.find("device 4 does not exist"), std::string::npos) << m;
  EXPECT_NE(m.find("valid: 0-3"), std::string::npos) << m;

  m = usage_message([] { parse_device_list("0,0", kFour, "--devices"); });
  EXPECT_NE(m.find("listed twice"), std::string::npos) << m;
  m = usage_message([] { parse_device_list("0-2,2", kFour, "--devices"); });
  EXPECT_NE(m.find("listed twice"), std::string::npos) << m;
  for (const char* bad : {"", "x", "3-1", "-1", "1-", "0,,1", "1.5"}) {
    EXPECT_FALSE(usage_message([&] { parse_device_list(bad, kFour, "--devices"); }).empty()) << bad;
  }
  m = usage_message([] { parse_device_list("1", {0, 2, 3, 5}, "--devices"); });
  EXPECT_NE(m.find("valid: 0,2-3,5"), std::string::npos) << m;
}

TEST(OpList, FlagAndText) {
  auto ops = parse_ops_flag("abs, mm,,benchmark/test_mm.py::test_mm");
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].op, "abs");
  EXPECT_EQ(ops[1].name, "mm");
  EXPECT_EQ(ops[2].op, "");
  EXPECT_EQ(ops[2].test_node, "benchmark/test_mm.py::test_mm");

  ops = parse_ops_text("# a comment\nabs\n\n  add   # trailing comment\r\nmm\n");
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[1].op, "add");
  EXPECT_EQ(ops[2].op, "mm");
}

TEST(OpList, YamlWithPerOpSettings) {
  const std::string yaml =
      "ops:\n"
      "  - abs\n"
      "  - name: mm\n"
      "    node: benchmark/test_mm.py::test_mm\n"
      "    dtypes: [float16, bfloat16]\n"
      "    shape_file: shapes/mm.yaml\n"
      "  - node: benchmark/test_sum.py::test_sum\n"
      "    dtypes: float32,int32\n";
  auto ops = parse_ops_yaml(yaml, "/base");
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].op, "abs");
  EXPECT_EQ(ops[1].name, "mm");
  EXPECT_EQ(ops[1].test_node, "benchmark/test_mm.py::test_mm");
  EXPECT_EQ(ops[1].dtypes, std::vector<std::string>({"float16", "bfloat16"}));
  EXPECT_EQ(ops[1].shape_file, "/base/shapes/mm.yaml");
  EXPECT_EQ(ops[2].name, "benchmark/test_sum.py::test_sum");
  EXPECT_EQ(ops[2].dtypes, std::vector<std::string>({"float32", "int32"}));

  // A bare list works too; unknown keys and empty entries do not.
  EXPECT_EQ(parse_ops_yaml("- a\n- b\n", "/").size(), 2u);
  EXPECT_NE(usage_message([] { parse_ops_yaml("ops:\n  - name: a\n    dtype: x\n", "/"); }).find("unknown key 'dtype'"),
            std::string::npos);
  EXPECT_FALSE(usage_message([] { parse_ops_yaml("ops:\n  - dtypes: [a]\n", "/"); }).empty());
  EXPECT_FALSE(usage_message([] { parse_ops_yaml("ops: 3\n", "/"); }).empty());
  EXPECT_FALSE(usage_message([] { parse_ops_yaml("ops: [a\n", "/"); }).empty());
}

TEST(OpList, FilesByExtensionAndChecks) {
  const zltest::TempDir tmp("zl-batch-ops");
  const fs::path d = tmp.path();
  std::ofstream(d / "ops.txt") << "abs\nadd\n";
  std::ofstream(d / "ops.yaml") << "ops: [abs, {name: mm, shape_file: s.yaml}]\n";
  std::ofstream(d / "dup.txt") << "abs\nabs\n";
  std::ofstream(d / "empty.txt") << "# nothing\n";
  EXPECT_EQ(load_ops_file((d / "ops.txt").string()).size(), 2u);
  auto y = load_ops_file((d / "ops.yaml").string());
  ASSERT_EQ(y.size(), 2u);
  EXPECT_EQ(y[1].shape_file, (d / "s.yaml").string());
  EXPECT_NE(usage_message([&] { load_ops_file((d / "dup.txt").string()); }).find("listed twice"), std::string::npos);
  EXPECT_NE(usage_message([&] { load_ops_file((d / "empty.txt").string()); }).find("no operators"), std::string::npos);
  EXPECT_NE(usage_message([&] { load_ops_file((d / "missing.txt").string()); }).find("cannot read"), std::string::npos);
  // Two names that would share one run directory.
  EXPECT_NE(usage_message([] {
              check_ops(parse_ops_flag("benchmark/test_a.py::t[a b],benchmark/test_a.py::t[a_b]"), "--ops");
            }).find("collides"),
            std::string::npos);
  EXPECT_EQ(op_dir_name("benchmark/test_mm.py::test_mm"), "benchmark_test_mm.py__test_mm");
  EXPECT_EQ(op_dir_name(".."), "_..");
}

TEST(OpList, ANulByteInAnOpsFileIsNamedByLineAndByte) {
  const zltest::TempDir tmp("zl-batch-ops_nul");
  const fs::path d = tmp.path();
  const std::string text = std::string("abs\nsoft") + '\0' + "max\nmm\n";
  std::ofstream(d / "ops.txt", std::ios::binary) << text;
  std::ofstream(d / "ops.yaml", std::ios::binary) << "ops: [abs, " << text.substr(4) << "]\n";
  const std::string message = usage_message([&] { load_ops_file((d / "ops.txt").string()); });
  // The whole line reaches the user: nothing of it is cut at the NUL.
  EXPECT_EQ(message, "--ops-file " + (d / "ops.txt").string() +
                         ": line 2 holds a NUL byte (byte 9): an ops file is text, one op entry a line, or YAML");
  EXPECT_EQ(message.find('\0'), std::string::npos);
  EXPECT_NE(
      usage_message([&] { load_ops_file((d / "ops.yaml").string()); }).find(": line 1 holds a NUL byte (byte 16)"),
      std::string::npos);
}

TEST(OpList, AnEntryWithControlBytesIsQuotedEscaped) {
  const std::string message = usage_message([] { check_ops(parse_ops_flag("ab\x1b[2Jc"), "--ops"); });
  EXPECT_NE(message.find("'ab\\x1b[2Jc' is not an op entry"), std::string::npos) << message;
}

TEST(StatusCsv, RoundTripWithQuoting) {
  const zltest::TempDir tmp("zl-batch-csv");
  const fs::path d = tmp.path();
  const std::string path = (d / "ops_status.csv").string();
  prepare_status_csv(path, nullptr);
  EXPECT_EQ(zl::read_file(path), csv_header());

  OpRow a;
  a.op = "mm";
  a.test_node = "benchmark/test_mm.py::test_mm";
  a.status = Status::crashed;
  a.exit_code = 139;
  a.signal = 11;
  a.backend = "fakegpu";
  a.device_index = 3;
  a.device_id = "FAKE-0003";
  a.timer = "graph";
  a.bench_level = "core";
  a.started = "2026-12-02T10:30:00Z";
  a.seconds = 12.25;
  a.warmed_on = "FAKE-0000";
  a.attempt = 2;
  a.run_dir = "runs/mm";
  a.reason = "said \"no\", then\nleft, with a comma ";
  OpRow b = a;
  b.op = "abs";
  b.status = Status::passed;
  b.reason = "";
  append_status_row(path, a);
  append_status_row(path, b);

  StatusFile f = read_status_csv(path);
  EXPECT_FALSE(f.dropped_tail);
  ASSERT_EQ(f.rows.size(), 2u);
  const OpRow& r = f.rows[0];
  EXPECT_EQ(r.op, a.op);
  EXPECT_EQ(r.test_node, a.test_node);
  EXPECT_EQ(r.status, Status::crashed);
  EXPECT_EQ(r.exit_code, 139);
  EXPECT_EQ(r.signal, 11);
  EXPECT_EQ(r.device_index, 3);
  EXPECT_EQ(r.device_id, "FAKE-0003");
  EXPECT_DOUBLE_EQ(r.seconds, 12.25);
  EXPECT_EQ(r.warmed_on, "FAKE-0000");
  EXPECT_EQ(r.attempt, 2);
  EXPECT_EQ(r.reason, a.reason);
  EXPECT_EQ(f.rows[1].status, Status::passed);
}

TEST(StatusCsv, TimeColumnsRoundTripAndAnUnknownTimeStaysEmpty) {
  const zltest::TempDir tmp("zl-batch-time");
  const fs::path d = tmp.path();
  const std::string path = (d / "ops_status.csv").string();
  prepare_status_csv(path, nullptr);
  OpRow timed;
  timed.op = "mm";
  timed.status = Status::passed;
  timed.time.known = true;
  timed.time.imports = 11.5;
  timed.time.compiling = 3.25;
  timed.time.measuring_gems = 0.875;
  OpRow untimed = timed;
  untimed.op = "abs";
  untimed.time = zl::TimeBreakdown{};
  append_status_row(path, timed);
  append_status_row(path, untimed);
  const StatusFile f = read_status_csv(path);
  ASSERT_EQ(f.rows.size(), 2u);
  EXPECT_FALSE(f.needs_repair());
  EXPECT_TRUE(f.rows[0].time.known);
  EXPECT_DOUBLE_EQ(f.rows[0].time.imports, 11.5);
  EXPECT_DOUBLE_EQ(f.rows[0].time.compiling, 3.25);
  EXPECT_DOUBLE_EQ(f.rows[0].time.measuring_gems, 0.875);
  EXPECT_DOUBLE_EQ(f.rows[0].time.total(), 15.625);
  EXPECT_FALSE(f.rows[1].time.known);
  // The header names every part, t_ first.
  for (const zl::TimePart& p : zl::time_parts()) {
    EXPECT_NE(csv_header().find(std::string(",t_") + p.name), std::string::npos) << p.name;
  }
}

TEST(StatusCsv, AnOlderZlcoresFileIsReadAndItsHeaderUpgradedOnResume) {
  const zltest::TempDir tmp("zl-batch-older");
  const fs::path d = tmp.path();
  const std::string path = (d / "ops_status.csv").string();
  // ops_status.csv as a zlcore without the time columns wrote it.
  const std::string older =
      "op,test_node,status,exit_code,signal,backend,device_index,device_id,timer,bench_level,started,seconds,"
      "warmed_on,attempt,run_dir,reason\n"
      "abs,benchmark/test_abs.py::test_abs,passed,0,0,cuda,0,GPU-1,graph,core,2026-12-05T10:00:00Z,9.500,,1,"
      "runs/abs,\n";
  zl::write_file_atomic(path, older);
  StatusFile f = read_status_csv(path);
  ASSERT_EQ(f.rows.size(), 1u);
  EXPECT_EQ(f.rows[0].op, "abs");
  EXPECT_DOUBLE_EQ(f.rows[0].seconds, 9.5);
  EXPECT_FALSE(f.rows[0].time.known);
  EXPECT_NE(f.header_problem.find("an older zlcore's"), std::string::npos) << f.header_problem;
  std::string note;
  prepare_status_csv(path, &note);
  EXPECT_NE(note.find("rewrote the header (it was an older zlcore's"), std::string::npos) << note;
  // Rewritten with this zlcore's header; the row kept, its time unknown.
  f = read_status_csv(path);
  EXPECT_FALSE(f.needs_repair());
  ASSERT_EQ(f.rows.size(), 1u);
  EXPECT_EQ(zl::read_file(path).rfind(csv_header(), 0), 0u);
  // The same rows without any header read too.
  zl::write_file_atomic(path, older.substr(older.find('\n') + 1));
  f = read_status_csv(path);
  ASSERT_EQ(f.rows.size(), 1u);
  EXPECT_EQ(f.header_problem, "it was missing");
}

TEST(StatusCsv, TornLastLineIsDroppedAndCut) {
  const zltest::TempDir tmp("zl-batch-torn");
  const fs::path d = tmp.path();
  const std::string path = (d / "ops_status.csv").string();
  prepare_status_csv(path, nullptr);
  OpRow a;
  a.op = "abs";
  a.status = Status::passed;
  append_status_row(path, a);
  const std::string whole = zl::read_file(path);
  // A record cut mid-field, once inside quotes and once outside.
  for (const std::string& tail : {std::string("add,bench,fai"), std::string("add,\"half a quoted\nfield")}) {
    zl::write_file_atomic(path, whole + tail);
    StatusFile f = read_status_csv(path);
    EXPECT_TRUE(f.dropped_tail);
    ASSERT_EQ(f.rows.size(), 1u);
    EXPECT_EQ(f.valid_bytes, whole.size());
    std::string note;
    prepare_status_csv(path, &note);
    EXPECT_NE(note.find("torn"), std::string::npos);
    EXPECT_EQ(zl::read_file(path), whole);
  }
  // A torn header alone: rewritten whole.
  zl::write_file_atomic(path, "op,test_no");
  prepare_status_csv(path, nullptr);
  EXPECT_EQ(zl::read_file(path), csv_header());
  // Somebody else's CSV is refused rather than appended to.
  zl::write_file_atomic(path, "a,b\n1,2\n");
  EXPECT_THROW(read_status_csv(path), std::runtime_error);
}

TEST(StatusCsv, ParseCsvFields) {
  bool torn = true;
  auto recs = parse_csv("a,\"b,\"\"c\"\"\",\n\"x\ny\",z\r\n", &torn);
  EXPECT_FALSE(torn);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0], std::vector<std::string>({"a", "b,\"c\"", ""}));
  EXPECT_EQ(recs[1], std::vector<std::string>({"x\ny", "z"}));
}

TEST(Outcome, ExitCodes) {
  int sig = -1;
  EXPECT_EQ(status_from_exit(0, &sig), Status::passed);
  EXPECT_EQ(status_from_exit(1, &sig), Status::failed);
  EXPECT_EQ(status_from_exit(2, &sig), Status::failed);
  EXPECT_EQ(status_from_exit(4, &sig), Status::failed);
  EXPECT_EQ(status_from_exit(5, &sig), Status::no_tests);
  EXPECT_EQ(status_from_exit(6, &sig), Status::unsupported);
  EXPECT_EQ(status_from_exit(7, &sig), Status::empty);
  EXPECT_EQ(status_from_exit(8, &sig), Status::harness_error);
  EXPECT_EQ(status_from_exit(3, &sig), Status::preflight_failed);
  EXPECT_EQ(status_from_exit(124, &sig), Status::timeout);
  EXPECT_EQ(status_from_exit(130, &sig), Status::interrupted);
  EXPECT_EQ(status_from_exit(139, &sig), Status::crashed);
  EXPECT_EQ(sig, 11);
}

TEST(Outcome, WithoutAnIdentity) {
  const zltest::TempDir tmp("zl-batch-outcome");
  const fs::path d = tmp.path();
  ExitFacts f;
  f.started = true;
  f.exit_code = 0;
  // Exit 0 without run_identity.json is no result.
  EXPECT_EQ(make_outcome(f, d.string()).status, Status::failed);
  f.exit_code = -1;
  f.killed_for_timeout = true;
  EXPECT_EQ(make_outcome(f, d.string()).status, Status::timeout);
  f.killed_for_timeout = false;
  f.term_signal = 9;
  f.interrupted = true;
  EXPECT_EQ(make_outcome(f, d.string()).status, Status::interrupted);
  f.interrupted = false;
  OpOutcome o = make_outcome(f, d.string());
  EXPECT_EQ(o.status, Status::crashed);
  EXPECT_EQ(o.signal, 9);
  // SIGTERM the batch did not send (scancel reached the run first): stopped,
  // so --resume reruns it; never a crash.
  f.term_signal = SIGTERM;
  o = make_outcome(f, d.string());
  EXPECT_EQ(o.status, Status::interrupted);
  EXPECT_NE(o.reason.find("stopped by SIGTERM from outside the batch"), std::string::npos) << o.reason;
  f.term_signal = 9;

  // An identity still saying "running" (killed early) does not override.
  zl::write_file_atomic((d / "run_identity.json").string(),
                        R"({"status":"running","test_node":"t::n","timer":{"name":"host"},"bench_level":"core"})");
  o = make_outcome(f, d.string());
  EXPECT_EQ(o.status, Status::crashed);
  EXPECT_EQ(o.test_node, "t::n");
  EXPECT_EQ(o.timer, "host");
  // A final one does.
  zl::write_file_atomic((d / "run_identity.json").string(), R"({"status":"failed","exit_code":1})");
  f.term_signal = 0;
  f.exit_code = 1;
  EXPECT_EQ(make_outcome(f, d.string()).status, Status::failed);
  // Stopped by the batch's SIGINT: interrupted, whatever the run made of it.
  f.interrupted = true;
  o = make_outcome(f, d.string());
  EXPECT_EQ(o.status, Status::interrupted);
  EXPECT_NE(o.reason.find("the run said failed"), std::string::npos) << o.reason;
  f.interrupted = false;

  // The log's last line replaces a bare exit code, and a full disk named
  // only there still marks the outcome: ab and batch stop on it rather than
  // run the op again on the same disk.
  fs::remove(d / "run_identity.json");
  f.log_reason = "zlcore: cannot write /x/.run_identity.json.1.tmp: No space left on device";
  o = make_outcome(f, d.string());
  EXPECT_EQ(o.status, Status::failed);
  EXPECT_EQ(o.reason, f.log_reason);
  EXPECT_TRUE(o.disk_full);
  f.log_reason = "zlcore: some other fault";
  EXPECT_FALSE(make_outcome(f, d.string()).disk_full);
}

TEST(BatchReplay, SourceIsTheOpsRunInALocalOrSlurmBatch) {
  const zltest::TempDir tmp("zl-replay-src");
  const fs::path d = tmp.path();
  fs::create_directories(d / "local" / "runs" / "mm");
  fs::create_directories(d / "slurm" / "shards" / "1" / "runs" / "mm");
  fs::create_directories(d / "slurm" / "shards" / "0" / "runs" / "abs");
  EXPECT_EQ(zl::batch::replay_source_for((d / "local").string(), "mm"), (d / "local" / "runs" / "mm").string());
  EXPECT_EQ(zl::batch::replay_source_for((d / "slurm").string(), "mm"),
            (d / "slurm" / "shards" / "1" / "runs" / "mm").string());
  // Not there at all: the source as given, for run's preflight to judge.
  EXPECT_EQ(zl::batch::replay_source_for((d / "local").string(), "addmm"), (d / "local").string());
  EXPECT_EQ(zl::batch::replay_source_for("/some/run/dir", "mm"), "/some/run/dir");
}

// A duration is what zlcore writes (a plain decimal from 0 to a year): an
// edited nan, inf, negative or overflowing one would reach sums, means and
// history as such; the row is named unreadable instead, the others kept.
TEST(StatusCsv, ADurationThatIsNoPlainCountOfSecondsMakesItsRowUnreadable) {
  OpRow good;
  good.op = "abs";
  good.status = Status::passed;
  good.seconds = 2.5;
  good.time.known = true;
  good.time.compiling = 0.25;
  const std::string row = csv_record(good);
  const std::string seconds = "2.500";
  ASSERT_NE(row.find(seconds), std::string::npos);
  for (const std::string bad : {"nan", "inf", "-1.000", "1e308", "0x10"}) {
    std::string edited = row;
    edited.replace(edited.find(seconds), seconds.size(), bad);
    const StatusFile f = parse_status_text(csv_header() + row + edited, "ops_status.csv");
    ASSERT_EQ(f.rows.size(), 1u) << bad;
    ASSERT_EQ(f.unreadable.size(), 1u) << bad;
    EXPECT_NE(f.unreadable[0].find("seconds '" + bad + "' is not a number of seconds from 0 to a year"),
              std::string::npos)
        << f.unreadable[0];
  }
  std::string edited = row;
  const std::string compiling = "0.250";
  ASSERT_NE(edited.find(compiling), std::string::npos);
  edited.replace(edited.find(compiling), compiling.size(), "-inf");
  const StatusFile f = parse_status_text(csv_header() + edited, "ops_status.csv");
  ASSERT_EQ(f.unreadable.size(), 1u);
  EXPECT_NE(f.unreadable[0].find("t_compiling '-inf'"), std::string::npos) << f.unreadable[0];
}
