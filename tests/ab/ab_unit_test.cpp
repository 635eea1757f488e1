// The pure parts of `zlcore ab`: the order of a round's sides, rounds.csv
// written and read back, and how a side's rounds become a row's test values.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <vector>

#include "../../core/src/ab/runner_parts.hpp"
#include "../../core/src/run/identity.hpp"
#include "zlcore/ab.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/run.hpp"
#include "zltest/files.hpp"
#include "zltest/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace zl;
using zltest::spit;

TEST(AbOrder, ConsecutiveRoundsReadABBA) {
  std::string seq;
  for (int r = 1; r <= 4; ++r) {
    for (const std::string& s : ab::round_order(r, false)) seq += s;
  }
  EXPECT_EQ(seq, "ABBAABBA");
}

TEST(AbOrder, CalibrateKeepsAAndA2SymmetricAroundB) {
  EXPECT_EQ(ab::round_order(1, true), (std::vector<std::string>{"A", "B", "A2"}));
  EXPECT_EQ(ab::round_order(2, true), (std::vector<std::string>{"A2", "B", "A"}));
}

class AbDir : public ::testing::Test {
 protected:
  zltest::TempDir tmp_{"zl-ab-unit"};
  const fs::path dir_ = tmp_.path();
};

TEST_F(AbDir, RoundsCsvRoundTripsAndDropsATornLastRecord) {
  ab::RoundLine l{"abs", 3, 2, "B", "crashed", 1, 1.5, "runs/abs/r3-t2/B", "worker died, \"signal 11\"\nagain"};
  const fs::path csv = dir_ / "rounds.csv";
  spit(csv, ab::rounds_csv_header() + ab::rounds_csv_record(l) + "abs,4,1,A,pas");
  const auto lines = ab::read_rounds_csv(csv.string());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].op, "abs");
  EXPECT_EQ(lines[0].round, 3);
  EXPECT_EQ(lines[0].attempt, 2);
  EXPECT_EQ(lines[0].side, "B");
  EXPECT_EQ(lines[0].device, 1);
  EXPECT_EQ(lines[0].reason, "worker died, \"signal 11\" again");  // one line
}

// Without the repair, the next line a resumed A/B appends ran on behind the
// torn one as one record of the wrong width, and that round was lost; with a
// quoted reason torn open, every line after it.
TEST_F(AbDir, ATornLastRecordIsCutOffBeforeAResumeAppendsAndTheFileKeptAside) {
  ab::RoundLine l{"abs", 1, 1, "A", "passed", 0, 1.5, "runs/abs/r1-t1/A", ""};
  const fs::path csv = dir_ / "rounds.csv";
  const std::string torn = ab::rounds_csv_header() + ab::rounds_csv_record(l) + "abs,1,1,B,failed,0,0.5,x,\"No sp";
  spit(csv, torn);
  const std::string note = ab::repair_rounds_csv(csv.string());
  EXPECT_NE(note.find("torn last line"), std::string::npos) << note;
  EXPECT_EQ(zl::read_file(csv.string()), ab::rounds_csv_header() + ab::rounds_csv_record(l));
  std::vector<fs::path> kept;
  for (const auto& e : fs::directory_iterator(dir_)) {
    if (e.path().filename().string().rfind("rounds.csv.bak-", 0) == 0) kept.push_back(e.path());
  }
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(zl::read_file(kept[0].string()), torn);
  EXPECT_NE(note.find(kept[0].filename().string()), std::string::npos) << note;

  l.side = "B";
  zl::append_record(csv.string(), ab::rounds_csv_record(l));
  const auto lines = ab::read_rounds_csv(csv.string());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].side, "B");
  EXPECT_EQ(ab::repair_rounds_csv(csv.string()), "");  // a whole file is left alone
}

// An empty rounds.csv (a crash before the header reached the disk, a
// truncation) was refused as "not the rounds.csv of a zlcore ab directory";
// as with ops_status.csv it is repaired: the header back, the file kept.
TEST_F(AbDir, AnEmptyRoundsCsvIsRepairedWithItsHeaderAndKeptAside) {
  const fs::path csv = dir_ / "rounds.csv";
  spit(csv, "");
  const std::string note = ab::repair_rounds_csv(csv.string());
  EXPECT_NE(note.find("it was empty"), std::string::npos) << note;
  EXPECT_EQ(zl::read_file(csv.string()), ab::rounds_csv_header());
  EXPECT_TRUE(ab::read_rounds_csv(csv.string()).empty());
  size_t kept = 0;
  for (const auto& e : fs::directory_iterator(dir_)) {
    if (e.path().filename().string().rfind("rounds.csv.bak-", 0) == 0) ++kept;
  }
  EXPECT_EQ(kept, 1u);
  EXPECT_EQ(ab::repair_rounds_csv(csv.string()), "");
}

// A run_dir outside the A/B's runs/ (absolute, climbing out with "..") would
// have a resume pool that directory's rounds and replay its winners: such a
// line is not one of ours, and the repair keeps it aside with the file.
TEST_F(AbDir, ALineWhoseRunDirIsNotUnderRunsIsNotOneOfOurs) {
  const fs::path csv = dir_ / "rounds.csv";
  ab::RoundLine good{"abs", 1, 1, "A", "passed", 0, 1.5, "runs/abs/r1-t1/A", ""};
  ab::RoundLine shard = good;
  shard.run_dir = "shards/3/runs/abs/r1-t1/A";
  std::string text = ab::rounds_csv_header() + ab::rounds_csv_record(good) + ab::rounds_csv_record(shard);
  for (const std::string bad : {"/tmp/other/runs/abs/r1-t1/A", "runs/../../other/runs/abs", "../other/runs/abs", "runs",
                                "runs//abs", "shards/x/runs/abs", "logs/abs"}) {
    ab::RoundLine l = good;
    l.run_dir = bad;
    text += ab::rounds_csv_record(l);
  }
  spit(csv, text);
  EXPECT_NE(ab::repair_rounds_csv(csv.string()), "");
  const auto lines = ab::read_rounds_csv(csv.string());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].run_dir, "runs/abs/r1-t1/A");
  EXPECT_EQ(lines[1].run_dir, "shards/3/runs/abs/r1-t1/A");
}

TEST_F(AbDir, RoundsCsvOfAnotherToolIsRefused) {
  spit(dir_ / "rounds.csv", "op,status\nabs,passed\n");
  EXPECT_THROW(ab::read_rounds_csv((dir_ / "rounds.csv").string()), UsageError);
}

namespace {

// Round r of op abs, both sides measured and the round done, as the runner
// writes them.
std::string whole_round(int r) {
  const std::string rel = "runs/abs/r" + std::to_string(r) + "-t1";
  return ab::rounds_csv_record({"abs", r, 1, "A", "passed", 0, 1.5, rel + "/A", ""}) +
         ab::rounds_csv_record({"abs", r, 1, "B", "passed", 0, 1.5, rel + "/B", ""}) +
         ab::rounds_csv_record({"abs", r, 1, "*", "done", 0, 0, rel, ""});
}

std::vector<fs::path> kept_copies(const fs::path& dir) {
  std::vector<fs::path> kept;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind("rounds.csv.bak-", 0) == 0) kept.push_back(e.path());
  }
  return kept;
}

}  // namespace

// A round line with a status zlcore never writes settled its round without
// measuring it: the A/B reported done with no row for the op. It is left out
// alone; its round is then missing, and a resume runs it again.
TEST_F(AbDir, ALineWithAStatusZlcoreNeverWritesIsLeftOutAloneAndKeptAside) {
  const fs::path csv = dir_ / "rounds.csv";
  std::string bad = whole_round(2);
  bad.replace(bad.rfind(",done,"), 6, ",finished,");
  const std::string text = ab::rounds_csv_header() + whole_round(1) + bad + whole_round(3);
  spit(csv, text);
  const ab::RoundsFile f = ab::parse_rounds_text(text, csv.string());
  ASSERT_EQ(f.unreadable.size(), 1u);
  EXPECT_EQ(f.unreadable[0], "line 7: status 'finished' is not one zlcore writes for a round");
  EXPECT_EQ(f.lines.size(), 8u);
  std::set<int> done;
  for (const ab::RoundLine& l : f.lines) {
    if (l.side == "*") done.insert(l.round);
  }
  EXPECT_EQ(done, (std::set<int>{1, 3}));

  const std::string note = ab::repair_rounds_csv(csv.string());
  EXPECT_EQ(note.rfind("rounds.csv repaired: kept 8 line(s); left out 1 line(s) that could not be read (line 7: "
                       "status 'finished' is not one zlcore writes for a round); a round left without its round line "
                       "runs again; the file "
                       "as it was is in rounds.csv.bak-",
                       0),
            0u)
      << note;
  std::string expected = whole_round(2);
  expected.erase(expected.rfind("abs,2,1,*"));
  EXPECT_EQ(zl::read_file(csv.string()), ab::rounds_csv_header() + whole_round(1) + expected + whole_round(3));
  const auto kept = kept_copies(dir_);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(zl::read_file(kept[0].string()), text);
}

// A quote that opens and never closes swallowed every line after it, and the
// repair then cut them all off the live file.
TEST_F(AbDir, AQuoteThatNeverClosesCostsOnlyItsOwnLine) {
  const fs::path csv = dir_ / "rounds.csv";
  const std::string text =
      ab::rounds_csv_header() + whole_round(1) + "abs,2,1,A,passed,0,1.500,\"runs/abs/r2-t1/A,\n" + whole_round(3);
  spit(csv, text);
  const ab::RoundsFile f = ab::parse_rounds_text(text, csv.string());
  ASSERT_EQ(f.unreadable.size(), 1u);
  EXPECT_EQ(f.unreadable[0], "line 5: a quoted field that never closes");
  EXPECT_FALSE(f.dropped_tail);
  EXPECT_EQ(f.lines.size(), 6u);
  EXPECT_NE(ab::repair_rounds_csv(csv.string()), "");
  EXPECT_EQ(zl::read_file(csv.string()), ab::rounds_csv_header() + whole_round(1) + whole_round(3));
  ASSERT_EQ(kept_copies(dir_).size(), 1u);
  EXPECT_EQ(zl::read_file(kept_copies(dir_)[0].string()), text);
  // The same quote on the last line is a record torn by a crash: only it goes.
  const std::string torn = ab::rounds_csv_header() + whole_round(1) + "abs,2,1,A,passed,0,1.500,\"runs/abs/r2";
  const ab::RoundsFile t = ab::parse_rounds_text(torn, csv.string());
  EXPECT_TRUE(t.dropped_tail);
  EXPECT_TRUE(t.unreadable.empty());
  EXPECT_EQ(t.lines.size(), 3u);
}

TEST_F(AbDir, EveryFieldOfALineIsChecked) {
  const std::string rec = "abs,1,1,A,passed,0,1.500,runs/abs/r1-t1/A,\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"abs,x,1,A,passed,0,1.500,d,\n", "line 2: round 'x' is not a round number"},
      {"abs,1,0,A,passed,0,1.500,d,\n", "line 2: attempt '0' is not an attempt number"},
      {"abs,1,1,C,passed,0,1.500,d,\n", "line 2: side 'C' is not A, B, A2 or *"},
      {"abs,1,1,A,done,0,1.500,d,\n", "line 2: status 'done' is not one zlcore writes"},
      {"abs,1,1,A,passed,zero,1.500,d,\n", "line 2: device 'zero' is not a whole number"},
      {"abs,1,1,A,passed,0,1.5s,d,\n", "line 2: seconds '1.5s' is not a number of seconds from 0 to a year"},
      {"abs,1,1,A,passed,0,-2.000,d,\n", "line 2: seconds '-2.000' is not a number of seconds from 0 to a year"},
      {",1,1,A,passed,0,1.500,d,\n", "line 2: no op name"},
      {"abs,1,1,A,passed,0,1.500,d\n", "line 2: 8 field(s), the header has 9"},
  };
  for (const auto& [line, why] : cases) {
    const ab::RoundsFile f = ab::parse_rounds_text(ab::rounds_csv_header() + line + rec, "rounds.csv");
    ASSERT_EQ(f.unreadable.size(), 1u) << line;
    EXPECT_EQ(f.unreadable[0], why);
    ASSERT_EQ(f.lines.size(), 1u) << line;
    EXPECT_EQ(f.lines[0].run_dir, "runs/abs/r1-t1/A");
  }
}

// The report's own guard: an op with no measured round and no round that
// gave up on it is a FAILED op, never a done A/B without it.
TEST_F(AbDir, AReportWithAnOpThatHasNoMeasuredRoundFails) {
  ab::Options o;
  batch::OpSpec abs;
  abs.name = "abs";
  o.ops = {abs};
  o.rounds = 1;
  std::ostringstream said;
  testing::internal::CaptureStderr();
  const int code = ab::write_report(o, dir_.string(), {}, said);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, kExitFailed);
  EXPECT_NE(said.str().find("FAILED op abs: no measured round in rounds.csv"), std::string::npos) << said.str();
  EXPECT_EQ(err, "AB_FAILED: 1 op(s) failed a round; the FAILED lines say why\n");
}

// A variable only side B sets (--b-env MY_SWITCH=1) was in no run's identity,
// so the caliber check never saw the sides differ. Every side now names every
// variable either side sets, and each run records them: B its value, A none.
TEST(AbCaliber, EverySideNamesEveryVariableEitherSideSets) {
  ab::Options o;
  o.b.env = {{"MY_SWITCH", "1"}};
  o.a.env = {{"OTHER", "x"}};
  for (const char* label : {"A", "B", "A2"}) {
    const auto env = ab::side_env(o, label, "/tmp/ab");
    ASSERT_TRUE(env.count(kCaliberEnv)) << label;
    EXPECT_EQ(env.at(kCaliberEnv), "MY_SWITCH,OTHER") << label;
  }
  EXPECT_EQ(ab::side_env(o, "B", "/tmp/ab").at("MY_SWITCH"), "1");
  EXPECT_FALSE(ab::side_env(o, "A", "/tmp/ab").count("MY_SWITCH"));
  EXPECT_FALSE(ab::side_env(ab::Options{}, "A", "/tmp/ab").count(kCaliberEnv));
}

TEST(AbCaliber, ARunRecordsTheVariablesItIsToldToAndNotTheList) {
  ::setenv(kCaliberEnv, "MY_SWITCH,OTHER", 1);
  ::unsetenv("MY_SWITCH");
  ::unsetenv("OTHER");
  const auto b = number_knobs({{"MY_SWITCH", "1"}, {"UNNAMED", "2"}});
  EXPECT_EQ(b.count("MY_SWITCH") ? b.at("MY_SWITCH") : "(absent)", "1");
  EXPECT_FALSE(b.count("UNNAMED"));
  EXPECT_FALSE(b.count(kCaliberEnv));
  const auto a = number_knobs({});
  EXPECT_FALSE(a.count("MY_SWITCH"));  // unset on side A: compare shows "(unset)"
  ::unsetenv(kCaliberEnv);
  EXPECT_FALSE(number_knobs({{"MY_SWITCH", "1"}}).count("MY_SWITCH"));
}

// Two rounds of one side, one row each, five placements a round.
TEST_F(AbDir, RoundsGiveOneValueEachAndPlacementsPool) {
  std::vector<std::string> dirs;
  const std::vector<std::vector<double>> rounds = {{1, 2, 3, 4, 100}, {5, 6, 7, 8, 9}};
  for (size_t r = 0; r < rounds.size(); ++r) {
    const fs::path run = dir_ / ("r" + std::to_string(r + 1)) / "A";
    spit(run / "run_identity.json", R"({"op": "abs", "status": "passed"})");
    std::string placements;
    double sum = 0;
    for (double v : rounds[r]) {
      placements += (placements.empty() ? "" : ", ") + std::to_string(v);
      sum += v;
    }
    spit(run / "results.jsonl",
         R"({"op": "abs", "dtype": "float32", "shape": "[64]", "timer": "host", "latency_ms": )" +
             std::to_string(sum / 5) + R"(, "placements_ms": [)" + placements + "]" +
             (r == 0 ? R"(, "sustained": "device reports sw_power_cap under load")" : "") + "}\n");
    dirs.push_back(run.string());
  }
  const compare::Side by_round = ab::pool_side("A", "x", {{"abs", dirs}}, ab::Samples::rounds);
  ASSERT_EQ(by_round.runs.size(), 1u);
  ASSERT_EQ(by_round.runs[0].rows.size(), 1u);
  const compare::ResultRow& r = by_round.runs[0].rows[0];
  // A round's value is the mean of its placements, the run's own latency:
  // the slow placement of round 1 moves it by its share.
  EXPECT_EQ(r.placements_ms, (std::vector<double>{22, 7}));
  EXPECT_DOUBLE_EQ(*r.latency_ms, 14.5);
  EXPECT_TRUE(r.sustained);  // round 1 was read sustained
  EXPECT_EQ(r.remark, "1 of 2 rounds read at the sustained (power-limited) pace, the others at the pace held");

  const compare::Side pooled = ab::pool_side("A", "x", {{"abs", dirs}}, ab::Samples::placements);
  const compare::ResultRow& p = pooled.runs[0].rows[0];
  EXPECT_EQ(p.placements_ms.size(), 10u);
  EXPECT_DOUBLE_EQ(*p.latency_ms, 145.0 / 10);
  EXPECT_EQ(p.repeats, 10);
  EXPECT_TRUE(p.sustained);  // pooled placements include a sustained round's
}

// Profiled rounds: a kernel's time is its mean over the rounds that listed it.
TEST_F(AbDir, ProfiledRoundsPoolEachKernelsTimeAsTheirMean) {
  std::vector<std::string> dirs;
  const char* kernels[] = {R"([{"name": "k", "us": 10.0}, {"name": "only_here", "us": 1.0}])",
                           R"([{"name": "k", "us": 14.0}])"};
  for (int r = 0; r < 2; ++r) {
    const fs::path run = dir_ / ("r" + std::to_string(r + 1)) / "A";
    spit(run / "run_identity.json", R"({"op": "abs", "status": "passed"})");
    spit(run / "results.jsonl", std::string(R"({"op": "abs", "dtype": "float32", "shape": "[64]", "timer": "host", )") +
                                    R"("latency_ms": 1.0, "placements_ms": [1.0], "kernels": )" + kernels[r] + "}\n");
    dirs.push_back(run.string());
  }
  const compare::Side side = ab::pool_side("A", "x", {{"abs", dirs}}, ab::Samples::rounds);
  ASSERT_EQ(side.runs.size(), 1u);
  ASSERT_EQ(side.runs[0].rows.size(), 1u);
  const compare::ResultRow& p = side.runs[0].rows[0];
  ASSERT_EQ(p.kernels.size(), 2u);
  EXPECT_EQ(p.kernels[0].name, "k");
  EXPECT_DOUBLE_EQ(p.kernels[0].us, 12.0);
  EXPECT_EQ(p.kernels[1].name, "only_here");
  EXPECT_DOUBLE_EQ(p.kernels[1].us, 1.0);
}

// ---- a Slurm A/B's shards (core/src/ab/shards.cpp) ----------------------------

namespace {

ab::RoundLine round_line(const std::string& op, int round, const std::string& status) {
  return {op, round, 1, "*", status, 0, 0, "runs/" + op + "/r" + std::to_string(round) + "-t1", ""};
}

}  // namespace

TEST(AbShards, AShardIsCompleteWhenEveryOpHasEveryRoundOrWasGivenUp) {
  std::vector<ab::RoundLine> lines;
  for (int r = 0; r <= 3; ++r) lines.push_back(round_line("abs", r, "done"));
  lines.push_back(round_line("add", 0, "done"));
  lines.push_back(round_line("add", 1, "done"));
  lines.push_back(round_line("mm", 1, "failed"));
  lines.push_back(round_line("exp", 1, "unsupported"));
  lines.push_back({"neg", 1, 1, "A", "passed", 0, 1, "runs/neg/r1-t1/A", ""});  // a run, not a round
  const std::vector<std::string> ops = {"abs", "add", "mm", "exp", "neg"};
  EXPECT_EQ(ab::unfinished_ops(lines, ops, 3), (std::vector<std::string>{"add", "neg"}));
  // A resume that asks for more rounds makes a finished shard unfinished.
  EXPECT_EQ(ab::unfinished_ops(lines, {"abs"}, 3), (std::vector<std::string>{}));
  EXPECT_EQ(ab::unfinished_ops(lines, {"abs"}, 4), (std::vector<std::string>{"abs"}));
}

TEST(AbShards, AShardsRunDirsPointIntoItsDirectory) {
  const auto lines = ab::lines_of_shard({round_line("abs", 1, "done"), {"abs", 1, 1, "*", "done", 0, 0, "", ""}}, 3);
  EXPECT_EQ(lines[0].run_dir, "shards/3/runs/abs/r1-t1");
  EXPECT_EQ(lines[1].run_dir, "");
}

class AbMerge : public AbDir {
 protected:
  // Shard `shard` measured `op` over `rounds` rounds: B `ratio` times A.
  void measure(int shard, const std::string& op, int rounds, double ratio, const std::string& status = "done") {
    const fs::path sd = ab::ab_shard_dir(dir_.string(), shard);
    std::string csv = fs::exists(sd / "rounds.csv") ? "" : ab::rounds_csv_header();
    for (int r = 1; r <= rounds; ++r) {
      const std::string rel = "runs/" + op + "/r" + std::to_string(r) + "-t1";
      for (const auto& [side, ms] :
           {std::pair<std::string, double>{"A", 1.0 + 0.01 * r}, {"B", (1.0 + 0.01 * r) * ratio}}) {
        spit(sd / rel / side / "run_identity.json", R"({"op": ")" + op + R"(", "status": "passed"})");
        spit(sd / rel / side / "results.jsonl", R"({"op": ")" + op +
                                                    R"(", "dtype": "float32", "shape": "[64]", "timer": "host", )"
                                                    R"("latency_ms": )" +
                                                    std::to_string(ms) + R"(, "placements_ms": [)" +
                                                    std::to_string(ms) + "]}\n");
        csv += ab::rounds_csv_record({op, r, 1, side, "passed", 0, 1, rel + "/" + side, ""});
      }
      csv += ab::rounds_csv_record({op, r, 1, "*", "done", 0, 0, rel, ""});
    }
    std::ofstream(sd / "rounds.csv", std::ios::app) << csv;
    spit(sd / "ab_identity.json", R"({"kind": "zlcore-ab", "status": ")" + status + R"(", "caliber": "fair"})");
  }
  ab::Options options() const {
    ab::Options o;
    o.rounds = 5;
    o.shards = 2;
    o.a.label = "A";
    o.b.label = "B";
    return o;
  }
};

TEST_F(AbMerge, EveryShardsRoundsMakeOneReport) {
  measure(0, "abs", 5, 1.0);
  measure(1, "add", 5, 1.5);
  const ab::ShardsMerged m = ab::merge_shards(options(), dir_.string(), {{"abs"}, {"add"}});
  EXPECT_EQ(m.exit_code, 0) << m.text;
  EXPECT_NE(m.text.find("shard 0 (abs): done"), std::string::npos) << m.text;
  EXPECT_NE(m.text.find("2 Slurm shards"), std::string::npos) << m.text;
  // The report is recomputed from the pooled rounds: one row per op, 5 values a side.
  std::ifstream f(dir_ / "report.json");
  const std::string report((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(report.find("\"abs\""), std::string::npos);
  EXPECT_NE(report.find("\"add\""), std::string::npos);
  EXPECT_NE(report.find("\"SLOWER\""), std::string::npos) << "add's B is 1.5 times A's";
  const auto merged = ab::read_rounds_csv((dir_ / "rounds.csv").string());
  ASSERT_EQ(merged.size(), 30u);
  EXPECT_EQ(merged.front().run_dir, "shards/0/runs/abs/r1-t1/A");
  EXPECT_EQ(merged.back().run_dir, "shards/1/runs/add/r5-t1");
  for (const char* f : {"report.md", "report.csv", "report.html", "ab_summary.json", "ab_identity.json"}) {
    EXPECT_TRUE(fs::is_regular_file(dir_ / f)) << f;
  }
}

TEST_F(AbMerge, AnUnfinishedShardFailsTheMergeAndARefusedOneIsACaliberMismatch) {
  measure(0, "abs", 5, 1.0);
  measure(1, "add", 2, 1.0, "interrupted");
  ab::ShardsMerged m = ab::merge_shards(options(), dir_.string(), {{"abs"}, {"add"}});
  EXPECT_EQ(m.exit_code, 1);
  EXPECT_NE(m.text.find("AB_INCOMPLETE: shard(s) 1 "), std::string::npos) << m.text;
  EXPECT_NE(m.text.find("shard 1 (add): interrupted, ops with rounds to run: add"), std::string::npos) << m.text;

  spit(fs::path(ab::ab_shard_dir(dir_.string(), 1)) / "ab_identity.json", R"({"status": "refused"})");
  m = ab::merge_shards(options(), dir_.string(), {{"abs"}, {"add"}});
  EXPECT_EQ(m.exit_code, 3);
  EXPECT_NE(m.text.find("CALIBER_MISMATCH"), std::string::npos) << m.text;
}

TEST_F(AbMerge, AResumeRerunsOnlyUnfinishedShardsAndRefusesOtherSettings) {
  measure(0, "abs", 5, 1.0);
  measure(1, "add", 3, 1.0, "interrupted");
  ab::Options o = options();
  o.settings = {{"a", "/fg"}, {"a-python", "/usr/bin/python3"}};
  for (int i : {0, 1}) {
    spit(fs::path(ab::ab_shard_dir(dir_.string(), i)) / "ab_identity.json",
         R"({"status": "done", "settings": {"a": "/fg", "a-python": "/opt/py/bin/python3"}})");
  }
  // The interpreter the shards chose on their node is theirs to check.
  EXPECT_EQ(ab::shards_to_rerun(o, dir_.string(), {{"abs"}, {"add"}}, {"a-python"}), (std::vector<int>{1}));
  o.rounds = 6;  // more rounds reopen every shard
  EXPECT_EQ(ab::shards_to_rerun(o, dir_.string(), {{"abs"}, {"add"}}, {"a-python"}), (std::vector<int>{0, 1}));
  try {
    ab::shards_to_rerun(o, dir_.string(), {{"abs"}, {"add"}});
    FAIL() << "a different interpreter, given on the command line, is refused";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("shard 0: ab --resume: a-python is '/usr/bin/python3' now", 0), 0u)
        << e.what();
  }
}

TEST_F(AbMerge, ARefusedResumeNamesTheFlagsThatMeasureLikeTheRoundsBefore) {
  // {settings now, settings in the rounds' identity, what the refusal must suggest}
  const std::vector<std::tuple<std::map<std::string, std::string>, std::string, std::string>> cases = {
      {{{"calibrate", "0"}}, R"({"calibrate": "1"})", "resume with --calibrate or start a new --out"},
      {{{"calibrate", "1"}}, R"({"calibrate": "0"})", "resume without --calibrate"},
      {{{"a", "/fg"}}, R"({"a": "/my fg"})", "resume with --a '/my fg' or"},
      // A quote in an edited value stays inside the one word it is.
      {{{"a-python", "/py"}},
       R"({"a-python": "x'; touch p; echo '"})",
       R"(resume with --a-python 'x'\''; touch p; echo '\''' or)"},
      {{{"dtypes", "float16"}}, R"({"dtypes": ""})", "resume without --dtypes"},
      {{{"sustained", "sticky"}}, R"({})", "resume with --sustained per-run"},
      {{}, R"({"sustained": "sticky"})", "resume with --sustained sticky"},
      {{}, R"({"warm": "1"})", "resume with --warm"},
      {{{"warm", "1"}}, R"({})", "resume without --warm"},
      {{{"level", "core"}}, R"({})", "resume with the settings those rounds were measured with"},
  };
  for (const auto& [now, before, hint] : cases) {
    ab::Options o = options();
    o.shards = 1;
    o.settings = now;
    spit(fs::path(ab::ab_shard_dir(dir_.string(), 0)) / "ab_identity.json",
         R"({"status": "done", "settings": )" + before + "}");
    try {
      ab::shards_to_rerun(o, dir_.string(), {{"abs"}});
      ADD_FAILURE() << before << " resumed";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(hint), std::string::npos) << e.what();
    }
  }
}

// A Slurm A/B's merge reads every shard's rounds.csv: a damaged line there
// (one a person or a tool wrote) is named with its file and line, and the
// whole lines around it still count, rather than the round it hid being
// taken silently for one that never ran.
TEST_F(AbMerge, ADamagedLineOfAShardsRoundsCsvIsNamedAndTheWholeLinesKept) {
  measure(0, "abs", 5, 1.0);
  measure(1, "add", 5, 1.0);
  const fs::path csv = fs::path(ab::ab_shard_dir(dir_.string(), 1)) / "rounds.csv";
  std::string text = zl::read_file(csv.string());
  const size_t round3 = text.find("add,3,1,A,");
  text.insert(round3, "bogus\n");
  text.erase(text.rfind("add,5,1,*,done"));  // round 5's line, torn off
  text += "bogus";
  spit(csv, text);
  const ab::ShardsMerged m = ab::merge_shards(options(), dir_.string(), {{"abs"}, {"add"}});
  EXPECT_NE(m.text.find("warning: shards/1/rounds.csv line 8: 1 field(s), the header has 9; left out of the merge, "
                        "and run again by a resume of the shard\n"),
            std::string::npos)
      << m.text;
  EXPECT_NE(m.text.find("warning: shards/1/rounds.csv: a torn last line; left out"), std::string::npos) << m.text;
  EXPECT_NE(m.text.find("shard 1 (add): done, ops with rounds to run: add"), std::string::npos) << m.text;
  EXPECT_EQ(m.exit_code, 1) << m.text;
  // Every whole line of both shards is merged; only the damage is not.
  EXPECT_EQ(ab::read_rounds_csv((dir_ / "rounds.csv").string()).size(), 29u);
}
