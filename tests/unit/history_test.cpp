// The history store and its step detector on synthetic series: a host whose
// pace wanders by several percent from batch to batch, per-row noise of a
// percent, and known changes at known batches.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <regex>
#include <set>

#include "history/groups.hpp"
#include "history/html_chart.hpp"
#include "history/row_summary.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/history.hpp"
#include "zltest/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace zl::history;

namespace {

const std::vector<std::string> kOps = {"fma_loop", "sin_loop", "copy_loop", "sum_loop", "norm_loop"};

struct Scenario {
  unsigned seed = 1;
  std::set<std::string> slowed;  // ops whose FlagGems side is 30 % slower from `from`
  size_t from = 6;               // batch index (0-based): batch 7
  size_t device_change = 99;     // from this batch on, another device model, 40 % faster
  double effect = 1.3;
};

std::string segment(const std::string& device) {
  std::string out;
  for (const std::string& k : segment_keys()) out += k + "=" + (k == "device.name" ? device : "x") + "\n";
  return out;
}

Entry nightly_batch(size_t b, const Scenario& sc, std::mt19937& rng, double pace) {
  std::normal_distribution<double> noise(0, 0.01);
  Entry e;
  e.path = "/nightly/batch" + std::to_string(b);
  e.kind = "batch";
  char date[32];
  std::snprintf(date, sizeof date, "2026-11-%02dT02:00:00Z", static_cast<int>(b + 1));
  e.started = date;
  const bool moved = b >= sc.device_change;
  for (size_t o = 0; o < kOps.size(); ++o) {
    Run r;
    r.op = kOps[o];
    r.dir = "runs/" + r.op;
    r.run_id = e.path + r.op;
    r.status = "passed";
    r.started = e.started;
    r.segment = segment(moved ? "Model B" : "Model A");
    r.identity = {{"versions.flaggems_git.sha", b >= sc.from ? "bbb222" : "aaa111"},
                  {"versions.torch", "2.5.0"},
                  {"device.name", moved ? "Model B" : "Model A"}};
    for (int shape = 0; shape < 5; ++shape) {
      for (const char* dtype : {"float16", "float32"}) {
        for (const char* side : {"gems", "base"}) {
          double v = (0.1 + 0.3 * static_cast<double>(o) + 0.2 * shape) * pace * std::exp(noise(rng));
          if (moved) v *= 0.6;
          if (sc.slowed.count(r.op) && b >= sc.from && std::string(side) == "gems") v *= sc.effect;
          Row w{r.op, dtype, "[" + std::to_string(64 << shape) + "]", side, v, v * 0.985, v * 1.015, 4, "host"};
          r.rows.push_back(w);
        }
      }
    }
    e.runs.push_back(std::move(r));
  }
  return e;
}

struct TempDb {
  zltest::TempDir tmp{"zl-history"};
  const fs::path dir = tmp.path();
  std::string db() const { return (dir / "history.db").string(); }
};

// Twelve batches on a host whose pace wanders by up to +-5 % per batch.
void fill(Store& s, const Scenario& sc, size_t batches = 12) {
  std::mt19937 rng(sc.seed);
  std::uniform_real_distribution<double> wander(-0.05, 0.05);
  for (size_t b = 0; b < batches; ++b) s.add(nightly_batch(b, sc, rng, std::exp(wander(rng))));
}

std::set<std::pair<std::string, size_t>> stepped_ops(const Report& r) {
  std::set<std::pair<std::string, size_t>> out;
  for (const ReportStep& s : r.steps) out.insert({s.op, s.step.first_bad});
  return out;
}

}  // namespace

TEST(HistoryDetect, FindsExactlyTheTwoOpsThatTurnedSlowerFromBatchSeven) {
  TempDb t;
  Store s(t.db());
  Scenario sc;
  sc.slowed = {"sin_loop", "sum_loop"};
  fill(s, sc);
  const Report r = build_report(s, "", "", DetectOptions{});
  EXPECT_EQ(stepped_ops(r), (std::set<std::pair<std::string, size_t>>{{"sin_loop", 6}, {"sum_loop", 6}}));
  // Every FlagGems series of both ops, and only those: 2 ops x 10 rows.
  ASSERT_EQ(r.steps.size(), 20u);
  for (const ReportStep& st : r.steps) {
    EXPECT_EQ(st.side, "gems");
    EXPECT_EQ(st.step.last_good, 5u);
    EXPECT_NEAR(st.step.change, 0.30, 0.03);
    EXPECT_FALSE(st.is_new);
    ASSERT_EQ(st.changed.size(), 1u);
    EXPECT_EQ(st.changed[0].key, "versions.flaggems_git.sha");
    EXPECT_EQ(st.changed[0].before, "aaa111");
    EXPECT_EQ(st.changed[0].after, "bbb222");
  }
  EXPECT_EQ(r.regressions(), 20u);
  EXPECT_EQ(r.new_regressions(), 0u);
}

TEST(HistoryDetect, FindsNoStepInUnchangedBatchesOverManySeeds) {
  // 10 series of 12 batches x 100 series each: the host's wander alone.
  size_t steps = 0;
  for (unsigned seed = 1; seed <= 10; ++seed) {
    TempDb t;
    Store s(t.db());
    Scenario sc;
    sc.seed = seed;
    fill(s, sc);
    steps += build_report(s, "", "", DetectOptions{}).steps.size();
  }
  EXPECT_EQ(steps, 0u);
}

TEST(HistoryDetect, SeesAFivePercentStepUnderTheHostWanderOnlyWithThePace) {
  // What the run-wide pace is for: read alone, a series under the host's
  // +-5 % wander does not show a 5 % step cleanly (its shapes disagree).
  TempDb t;
  Store s(t.db());
  Scenario sc;
  sc.slowed = {"norm_loop"};
  sc.effect = 1.05;
  fill(s, sc);
  EXPECT_EQ(stepped_ops(build_report(s, "", "", DetectOptions{})),
            (std::set<std::pair<std::string, size_t>>{{"norm_loop", 6}}));
  DetectOptions raw;
  raw.pace = false;
  const Report alone = build_report(s, "", "", raw);
  size_t norm_steps = 0;
  for (const ReportStep& st : alone.steps) norm_steps += st.op == "norm_loop" && st.step.first_bad == 6;
  EXPECT_LT(norm_steps, 10u);
}

TEST(HistoryDetect, DeviceModelChangeStartsNewSegmentAndNoStep) {
  TempDb t;
  Store s(t.db());
  Scenario sc;
  sc.device_change = 4;  // batch 5
  fill(s, sc);
  const Report r = build_report(s, "", "", DetectOptions{});
  EXPECT_TRUE(r.steps.empty());
  for (const ReportSeries& series : r.series) {
    ASSERT_EQ(series.result.breaks.size(), 1u);
    EXPECT_EQ(series.result.breaks[0].first_run, 4u);
  }
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("run 5"), std::string::npos) << r.notes[0];
  EXPECT_NE(r.notes[0].find("device.name: Model A -> Model B"), std::string::npos) << r.notes[0];
}

TEST(HistoryDetect, ReportsAStepAsNewTheNightItHoldsMinRunsRuns) {
  TempDb t;
  Store s(t.db());
  Scenario sc;
  sc.slowed = {"copy_loop"};
  sc.from = 9;  // runs 10, 11 and 12 on the new level
  fill(s, sc);
  const Report r = build_report(s, "", "", DetectOptions{});
  EXPECT_EQ(stepped_ops(r), (std::set<std::pair<std::string, size_t>>{{"copy_loop", 9}}));
  for (const ReportStep& st : r.steps) EXPECT_TRUE(st.is_new);
  EXPECT_EQ(r.new_regressions(), r.steps.size());
}

TEST(HistoryDetect, ReadsTheLatestRunAloneAsNoStepUntilMinRunsAllowsIt) {
  // One run on a busy host looks like a one-run step: by default a level
  // needs three runs; --min-runs 1 reports it the night it lands.
  TempDb t;
  Store s(t.db());
  Scenario sc;
  sc.slowed = {"copy_loop"};
  sc.from = 11;
  fill(s, sc);
  EXPECT_TRUE(build_report(s, "", "", DetectOptions{}).steps.empty());
  DetectOptions eager;
  eager.min_runs = 1;
  const Report r = build_report(s, "", "", eager);
  EXPECT_EQ(stepped_ops(r), (std::set<std::pair<std::string, size_t>>{{"copy_loop", 11}}));
  EXPECT_EQ(r.new_regressions(), r.steps.size());
}

TEST(HistoryDetect, AnOutlierRunIsNoStep) {
  // One op's run caught on a busy machine: every shape of it 45 % slower, once.
  TempDb t;
  Store s(t.db());
  std::mt19937 rng(11);
  for (size_t b = 0; b < 12; ++b) {
    Entry e = nightly_batch(b, Scenario{}, rng, 1.0);
    if (b == 1 || b == 10) {
      for (Row& w : e.runs[2].rows) w.median_ms *= 1.45, w.lo_ms *= 1.45, w.hi_ms *= 1.45;
    }
    s.add(e);
  }
  EXPECT_TRUE(build_report(s, "", "", DetectOptions{}).steps.empty());
}

TEST(HistoryDetect, FlagGemsSideReadsAgainstItsTorchSide) {
  // One op's process slowed for three runs, both sides alike (a neighbour
  // on a shared host): no FlagGems step, because its control moved too.
  TempDb t;
  Store s(t.db());
  std::mt19937 rng(13);
  for (size_t b = 0; b < 12; ++b) {
    Entry e = nightly_batch(b, Scenario{}, rng, 1.0);
    if (b >= 6 && b <= 8) {
      for (Row& w : e.runs[2].rows) w.median_ms *= 1.4, w.lo_ms *= 1.4, w.hi_ms *= 1.4;
    }
    s.add(e);
  }
  for (const ReportStep& st : build_report(s, "", "", DetectOptions{}).steps) EXPECT_NE(st.side, "gems") << st.op;
  DetectOptions alone;
  alone.control = false;
  size_t gems = 0;
  for (const ReportStep& st : build_report(s, "", "", alone).steps) gems += st.side == "gems";
  EXPECT_GT(gems, 0u);
}

TEST(HistoryDetect, LearnedNoiseIgnoresOneStep) {
  std::vector<double> y = {0, 0.01, -0.01, 0, 0.01, 0.3, 0.31, 0.29, 0.3, 0.31};
  EXPECT_LT(learned_noise(y), 0.02);
}

TEST(HistoryStore, AddingADirectoryTwiceKeepsOneEntry) {
  TempDb t;
  Store s(t.db());
  std::mt19937 rng(3);
  const Entry e = nightly_batch(0, Scenario{}, rng, 1.0);
  EXPECT_EQ(s.add(e), AddOutcome::Added);
  EXPECT_EQ(s.add(e), AddOutcome::Unchanged);
  Entry resumed = e;
  resumed.runs.pop_back();
  EXPECT_EQ(s.add(resumed), AddOutcome::Updated);
  EXPECT_EQ(s.entry_count(), 1u);
  EXPECT_EQ(s.rows("", "").size(), 4u * 20u);
  EXPECT_EQ(s.rows("", "sin_loop").size(), 20u);
  EXPECT_EQ(s.rows("2026-12-01", "").size(), 0u);
}

TEST(HistoryStore, KillDuringAddLeavesNothingHalfImported) {
  TempDb t;
  std::mt19937 rng(5);
  const Entry first = nightly_batch(0, Scenario{}, rng, 1.0);
  const Entry second = nightly_batch(1, Scenario{}, rng, 1.0);
  {
    Store s(t.db());
    s.add(first);
  }
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    Store s(t.db());
    // Killed with three of the five runs written inside the transaction.
    s.add(second, [](size_t i) {
      if (i == 2) ::raise(SIGKILL);
    });
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  Store s(t.db());
  EXPECT_EQ(s.entry_count(), 1u);
  EXPECT_EQ(s.rows("", "").size(), 100u);
  EXPECT_EQ(s.add(second), AddOutcome::Added);
  EXPECT_EQ(s.rows("", "").size(), 200u);
}

TEST(HistoryStore, RefusesAnSqliteFileThatIsNotAHistory) {
  TempDb t;
  {
    SQLite::Database db(t.db(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec("CREATE TABLE other(x)");
  }
  EXPECT_THROW(Store s(t.db()), zl::UsageError);
}

TEST(HistoryStore, RefusesAnotherSchemaVersion) {
  TempDb t;
  { Store s(t.db()); }
  {
    SQLite::Database db(t.db(), SQLite::OPEN_READWRITE);
    db.exec("UPDATE meta SET value='99' WHERE key='schema_version'");
  }
  try {
    Store s(t.db());
    FAIL() << "opened a version-99 history";
  } catch (const zl::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("schema version '99'"), std::string::npos) << e.what();
  }
}

namespace {

std::string run_dir(const zltest::TempDir& tmp, const std::string& name, const std::string& timer) {
  const std::filesystem::path dir = tmp.path() / name;
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "run_identity.json")
      << "{\"run_id\": \"" << name << "\", \"op\": \"abs\", \"started\": \"2026-12-01T00:00:00.000Z\", "
      << "\"timer\": " << timer << "}\n";
  std::ofstream(dir / "results.jsonl")
      << "{\"op\": \"abs\", \"dtype\": \"float16\", \"shape\": \"[1]\", \"latency_ms\": 1.0}\n";
  return dir.string();
}

}  // namespace

// A cold run starts its own segment; a warm one shares the segment of runs
// imported before the L2 policy existed, so their series go on.
TEST(HistoryImport, AColdRunIsItsOwnSegmentAWarmOneGoesOnFromOlderRuns) {
  const zltest::TempDir tmp("zl-history-l2");
  const Entry old = read_entry(run_dir(tmp, "old", R"({"name": "graph"})"));
  const Entry warm = read_entry(run_dir(tmp, "warm", R"({"name": "graph", "l2": "warm"})"));
  const Entry cold = read_entry(run_dir(tmp, "cold", R"({"name": "graph", "l2": "cold"})"));
  ASSERT_EQ(old.runs.size(), 1u);
  EXPECT_EQ(warm.runs[0].segment, old.runs[0].segment);
  EXPECT_NE(cold.runs[0].segment, warm.runs[0].segment);
  EXPECT_NE(cold.runs[0].segment.find("timer.l2=cold\n"), std::string::npos);
}

// A copy of FlagGems without git has no commit to differ, so where the suite
// was is what a step's "what changed" can name.
TEST(HistoryImport, TheSuiteDirectoryIsAmongWhatAStepCanNameAsChanged) {
  const zltest::TempDir tmp("zl-history-dir");
  const std::filesystem::path dir = tmp.path() / "r";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "run_identity.json")
      << R"({"run_id": "r", "op": "abs", "started": "2026-12-01T00:00:00.000Z", "flaggems_dir": "/src/fg_slow"})"
      << "\n";
  std::ofstream(dir / "results.jsonl")
      << "{\"op\": \"abs\", \"dtype\": \"float16\", \"shape\": \"[1]\", \"latency_ms\": 1.0}\n";
  const Entry e = read_entry(dir.string());
  ASSERT_EQ(e.runs.size(), 1u);
  EXPECT_EQ(e.runs[0].identity.at("flaggems_dir"), "/src/fg_slow");
}

namespace {

// The y of every axis label ("+2.0 %", "0.0 %", ...) in an SVG timeline.
std::vector<double> axis_label_ys(const std::string& svg) {
  std::vector<double> ys;
  const std::regex label("<text x=\"[0-9.]+\" y=\"([-0-9.]+)\" text-anchor=\"end\">[-+0-9.]+ %</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), label); it != std::sregex_iterator(); ++it)
    ys.push_back(std::stod((*it)[1]));
  return ys;
}

}  // namespace

TEST(HistoryChart, AxisLabelsStayApartUnderAStepOfSeveralTimes) {
  zl::history::ReportSeries s;
  for (size_t r = 0; r < 7; ++r) {
    const double v = r < 4 ? 1.0 : 4.5;  // +350 %: squeezes the small ticks together
    s.points.push_back({r, v, v * 0.99, v * 1.01, ""});
  }
  const std::vector<double> ys = axis_label_ys(zl::history::timeline_svg({&s}, {}, 7, 900, 260));
  ASSERT_GE(ys.size(), 2u);
  for (size_t i = 0; i < ys.size(); ++i)
    for (size_t j = i + 1; j < ys.size(); ++j) EXPECT_GE(std::abs(ys[i] - ys[j]), 14.0) << i << " " << j;
}

TEST(HistoryChart, AFlatSeriesKeepsThreeAxisLabels) {
  zl::history::ReportSeries s;
  for (size_t r = 0; r < 5; ++r) s.points.push_back({r, 1.0, 0.99, 1.01, ""});
  EXPECT_EQ(axis_label_ys(zl::history::timeline_svg({&s}, {}, 5, 900, 260)).size(), 3u);
}

TEST(HistoryText, AChangeFromALevelOfZeroIsSaidInWords) {
  EXPECT_EQ(zl::history::percent(0.301), "+30.1 %");
  EXPECT_EQ(zl::history::percent(std::numeric_limits<double>::infinity()), "(from a level of 0)");
  EXPECT_EQ(zl::history::percent(std::nan("")), "(no level to compare)");
}

// What a results row's numbers may do to a stored row: a spread given as
// negative is no interval, and a latency past a double's range stores
// nothing; the largest doubles neither overflow the median nor its spread,
// so that every stored row reads back (the store reader skips what
// is not plausible and blames the file).
TEST(HistoryImport, RowsThatWouldNotReadBackAreNotWritten) {
  zl::compare::ResultRow r;
  r.op = "abs";
  r.dtype = "float16";
  r.shape = "[[64]]";
  r.latency_base_ms = 2.0;
  r.spread_base_pct = -50;
  r.repeats = 5;
  r.placements_ms = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  const std::vector<Row> rows = summarize(r);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].side, "base");
  EXPECT_TRUE(plausible(rows[0]));
  EXPECT_EQ(rows[0].lo_ms, 2.0);
  EXPECT_EQ(rows[0].hi_ms, 2.0);

  const double big = std::numeric_limits<double>::max();
  r.placements_ms = {big, big, big / 2, big};
  r.spread_base_pct = std::numeric_limits<double>::infinity();
  const std::vector<Row> large = summarize(r);
  ASSERT_EQ(large.size(), 2u);
  for (const Row& row : large) EXPECT_TRUE(plausible(row)) << row.side;
}
