// The compare library on the recorded run directories in data/ (written by
// data/make_data.py): loading, matching, the verdict rule, geomeans and their
// intervals, every caliber field, the autotune pairings, calibration and the
// noise floor.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../../core/src/compare/text.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/compare.hpp"
#include "zlcore/compare_calibrate.hpp"
#include "zlcore/compare_stats.hpp"
#include "zlcore/errors.hpp"
#include "zltest/temp_dir.hpp"

namespace zc = zl::compare;

namespace {

std::string data(const std::string& rel) { return std::string(ZL_COMPARE_DATA) + "/" + rel; }

zc::Report report(const std::string& a, const std::string& b, zc::Options opt = {}) {
  return zc::compare(zc::load_side("A", data(a)), zc::load_side("B", data(b)), opt);
}

const zc::Compared& row(const zc::Report& r, const std::string& dtype, const std::string& shape) {
  for (const zc::Compared& c : r.rows) {
    if (c.dtype == dtype && c.shape == shape) return c;
  }
  throw std::runtime_error("no row " + dtype + " " + shape);
}

std::vector<std::string> keys(const zc::Caliber& c) {
  std::vector<std::string> out;
  for (const zc::Difference& d : c.differences) out.push_back(d.key);
  return out;
}

// k placement medians around ms, evenly spread over `spread` percent.
std::vector<double> spaced(double ms, double spread, size_t k = 8) {
  std::vector<double> v;
  for (size_t i = 0; i < k; ++i) {
    v.push_back(ms * (1 + (static_cast<double>(i) - (k - 1) / 2.0) / (k - 1) * spread / 100));
  }
  return v;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

// The verdict of A against B, speedup the ratio of their means.
zc::Verdict verdict(const std::vector<double>& a, const std::vector<double>& b, double threshold = 0.02,
                    double bar = 0.02) {
  return zc::decide({mean(a) / mean(b), a, b, threshold, bar}).verdict;
}

// One side of one run holding one row, measured like the other side.
zc::Side one_row_side(const std::string& label, const zc::ResultRow& row) {
  zc::RunInfo run;
  run.dir = label;
  run.op = row.op;
  run.status = "passed";
  run.rows = {row};
  for (const std::string& key : zc::caliber_keys()) run.caliber[key] = "";  // measured alike
  zc::Side s;
  s.label = label;
  s.runs = {run};
  return s;
}

zc::ResultRow placed_row(const std::string& op, const std::string& shape, double ms) {
  zc::ResultRow row;
  row.op = op;
  row.dtype = "float16";
  row.shape = shape;
  row.placements_ms = spaced(ms, 1);
  row.latency_ms = mean(row.placements_ms);
  return row;
}

}  // namespace

TEST(Verdict, RuleAtItsEdges) {
  using V = zc::Verdict;
  const std::vector<double> b = spaced(1.0, 1);  // 8 placements within 1 %
  EXPECT_EQ(verdict(spaced(1.05, 1), b), V::Faster);
  EXPECT_EQ(verdict(spaced(0.95, 1), b), V::Slower);
  EXPECT_EQ(verdict(spaced(1.01, 0.5), spaced(1.0, 0.5)), V::Same);  // real, but within 2 %, interval too
  // Exactly at the threshold: not past it, and the interval reaches over it.
  EXPECT_EQ(verdict(spaced(1.02, 1), b), V::Noisy);
  // 5 % apart on the means, but each side in two clusters 8 % apart that
  // interleave: the test cannot reject.
  const std::vector<double> a_clusters{1.01, 1.09, 1.011, 1.091, 1.012, 1.092, 1.013, 1.093};
  const std::vector<double> b_clusters{0.96, 1.04, 0.961, 1.041, 0.962, 1.042, 0.963, 1.043};
  EXPECT_EQ(verdict(a_clusters, b_clusters), V::Noisy);
  // No change, and placements 6 % apart: the 90 % interval (two one-sided
  // tests) still shows "within 2 %"; at 10 % apart it cannot.
  EXPECT_EQ(verdict(spaced(1.0, 6), spaced(1.0, 6)), V::Same);
  EXPECT_EQ(verdict(spaced(1.0, 10), spaced(1.0, 10)), V::Noisy);
  // The mean says 10 % slower on A (one outlier placement), the ranks say A
  // is faster: no verdict either way.
  const std::vector<double> outlier{0.97, 0.971, 0.972, 0.973, 0.974, 0.975, 0.976, 1.8};
  EXPECT_GT(mean(outlier) / mean(b), 1.02);
  EXPECT_EQ(verdict(outlier, b), V::Noisy);
  // Sizes: 5 a side is the least that can reject at 1 %.
  EXPECT_EQ(verdict(spaced(1.05, 1, 5), spaced(1.0, 1, 5)), V::Faster);
  EXPECT_EQ(verdict(spaced(1.05, 1, 4), spaced(1.0, 1, 8)), V::Unconfirmed);
  EXPECT_EQ(zc::decide({1.05, spaced(1.05, 1), {}, 0.02, 0.02}).verdict, V::Unconfirmed);
  // A wider bar (a noise floor): 5 % no longer passes, and it is not SAME either.
  EXPECT_EQ(verdict(spaced(1.05, 1), b, 0.02, 0.10), V::Noisy);
  EXPECT_EQ(verdict(spaced(1.15, 1), b, 0.02, 0.10), V::Faster);
  EXPECT_EQ(verdict(spaced(1.05, 1), b, 0.10, 0.10), V::Same);  // a looser threshold
  EXPECT_EQ(zc::decide({NAN, b, b, 0.02, 0.02}).verdict, V::Error);
}

// The guards turn a supported difference into NOISY, never the other way.
TEST(Verdict, GuardsOnlyStopFindings) {
  using V = zc::Verdict;
  const std::vector<double> a = spaced(1.05, 1), b = spaced(1.0, 1);
  const zc::VerdictInputs in{mean(a) / mean(b), a, b, 0.02, 0.02};
  auto with = [&](double spread, std::optional<double> control) {
    zc::Guards g;
    g.spread = spread;
    g.control = control;
    return zc::decide(in, g);
  };
  EXPECT_EQ(with(0, std::nullopt).verdict, V::Faster);
  // One run's placements range over 6 %: a 5 % move is one more draw of that.
  const zc::Decision spread = with(0.06, std::nullopt);
  EXPECT_EQ(spread.verdict, V::Noisy);
  EXPECT_NE(spread.why.find("in-run spread (6.0%)"), std::string::npos) << spread.why;
  EXPECT_EQ(with(0.04, std::nullopt).verdict, V::Faster);
  // torch's side of the row moved 4.5 % the same way: the environment's.
  const zc::Decision moved = with(0, 1.045);
  EXPECT_EQ(moved.verdict, V::Noisy);
  EXPECT_NE(moved.why.find("torch's side moved with it (1.045)"), std::string::npos) << moved.why;
  // torch moved 3 % (within the bar): what is left of the kernel's 5 % is 1.9 %.
  EXPECT_EQ(with(0, 1.03).verdict, V::Noisy);
  EXPECT_EQ(with(0, 1.01).verdict, V::Faster);                    // torch moved less than half as far: the kernel moved
  EXPECT_EQ(with(0, 0.95).verdict, V::Faster);                    // torch moved the other way
  EXPECT_EQ(with(0, 1.30).verdict, V::Faster);                    // torch moved far more: 5 % is not its move
  EXPECT_EQ(with(0.06, std::nullopt).p_value.has_value(), true);  // still tested, interval and all
  // One run read the side at its power-limited pace, the other at the pace
  // it held (on the H200, 1G-element bernoulli: 1.553 ms held, 1.587 ms
  // sustained, same code): two quantities, no finding.
  zc::Guards paces;
  paces.sustained_b = true;
  const zc::Decision pace = zc::decide(in, paces);
  EXPECT_EQ(pace.verdict, V::Noisy);
  EXPECT_NE(pace.why.find("B was read at its sustained (power-limited) pace, A at the pace it held"), std::string::npos)
      << pace.why;
  paces.sustained_a = true;  // both sustained: like for like
  EXPECT_EQ(zc::decide(in, paces).verdict, V::Faster);
  // A side timed call by call after its capture failed (an H100's fused
  // attention with a host copy: 0.206 ms in one batch, 0.122 ms in the next,
  // in-run spread 20 %): one run cannot see how far the host's pace moves it.
  zc::Guards host;
  host.call_by_call_a = true;
  const zc::Decision hosted = zc::decide(in, host);
  EXPECT_EQ(hosted.verdict, V::Noisy);
  EXPECT_NE(hosted.why.find("A's FlagGems side was timed call by call"), std::string::npos) << hosted.why;
  host.floor_known = true;  // an A/A measured this row's move between processes
  EXPECT_EQ(zc::decide(in, host).verdict, V::Faster);
  // A kernel of launch scale timed cold (on an H100, view_copy at 64x64 read
  // 4.28, 4.26 and 3.94 us in three batches, each batch's placements within
  // 1 %): the same, until an A/A measured it.
  zc::Guards cold;
  cold.cold_launch_scale = true;
  const zc::Decision cleared = zc::decide(in, cold);
  EXPECT_EQ(cleared.verdict, V::Noisy);
  EXPECT_NE(cleared.why.find("timed with the L2 cleared before each call at launch scale (under 10 us)"),
            std::string::npos)
      << cleared.why;
  cold.floor_known = true;
  EXPECT_EQ(zc::decide(in, cold).verdict, V::Faster);
  // The guards never make a verdict out of nothing.
  zc::Guards all;
  all.spread = 0.5;
  all.control = 1.0;
  all.sustained_a = true;
  EXPECT_EQ(zc::decide({1.0, b, b, 0.02, 0.02}, all).verdict, V::Same);
}

// A launch path that got faster adds the same microseconds to every launch:
// on the H200, unfold_copy's ~1 us kernel read 1.067 us in one batch and
// 0.887 us in the next, torch's side 1.926 and 1.733 us. As ratios the two
// moves differ (1.20 against 1.11); in time they are the same 0.19 us.
TEST(Verdict, TheControlReadInTime) {
  using V = zc::Verdict;
  auto decide = [](double a_ms, double b_ms, double a_base, double b_base) {
    const std::vector<double> a = spaced(a_ms, 1), b = spaced(b_ms, 1);
    zc::Guards g;
    g.control = a_base / b_base;
    g.a_ms = a_ms;
    g.b_ms = b_ms;
    g.a_base_ms = a_base;
    g.b_base_ms = b_base;
    return zc::decide({mean(a) / mean(b), a, b, 0.02, 0.02}, g);
  };
  const zc::Decision launch = decide(1.067e-3, 0.887e-3, 1.926e-3, 1.733e-3);
  EXPECT_EQ(launch.verdict, V::Noisy);
  EXPECT_NE(launch.why.find("torch's side moved by the same time (-0.193 us): the launch path changed"),
            std::string::npos)
      << launch.why;
  // torch's ordinary jitter on a larger kernel (0.3 % of 1 ms) is the same
  // 3 us as a real 3 % change of a 100 us kernel: the control must itself
  // have moved past the bar before it explains anything.
  EXPECT_EQ(decide(0.100, 0.103, 1.000, 1.003).verdict, V::Slower);
  // Past launch scale (10 us) the same reading in time is never taken: a 2 us
  // launch path does not exist, a 2 us move of a 20 us torch kernel is its own.
  EXPECT_EQ(decide(0.010, 0.008, 0.020, 0.018).verdict, V::Faster);
  EXPECT_EQ(decide(0.0099, 0.0079, 0.020, 0.018).verdict, V::Faster);  // torch's side is past it
  EXPECT_EQ(decide(0.005, 0.008, 0.146, 0.149).verdict, V::Slower);    // 2 % of 146 us explains nothing
  EXPECT_EQ(decide(0.0049, 0.0039, 0.0099, 0.0089).verdict, V::Noisy);
  EXPECT_EQ(decide(1.067e-3, 0.887e-3, 1.733e-3, 1.926e-3).verdict, V::Faster);  // torch moved the other way
  EXPECT_EQ(decide(1.067e-3, 0.887e-3, 1.926e-3, 1.826e-3).verdict, V::Faster);  // 0.1 us of the kernel's 0.18
  EXPECT_EQ(decide(1.067e-3, 0.887e-3, 0, 0).verdict, V::Faster);                // no torch side
}

TEST(Verdict, NoWorkOnEitherSideIsNotCompared) {
  zc::Guards g;
  g.no_work = true;
  const zc::Decision d = zc::decide({3.1, spaced(3.1e-6, 40), spaced(1e-6, 40), 0.02, 0.02}, g);
  EXPECT_EQ(d.verdict, zc::Verdict::NoWork);
  EXPECT_STREQ(zc::verdict_name(d.verdict), "NO_WORK");
  EXPECT_NE(d.why.find("under 100 ns per call"), std::string::npos) << d.why;

  // In a report: the row says so, and the geomean leaves it out.
  zc::Compared empty, kernel;
  empty.speedup = 3.1;
  empty.verdict = zc::Verdict::NoWork;
  kernel.speedup = 1.1;
  kernel.verdict = zc::Verdict::Faster;
  const zc::Geomean g2 = zc::geomean("all", {&empty, &kernel});
  EXPECT_EQ(g2.rows, 1u);
  EXPECT_NEAR(g2.speedup, 1.1, 1e-12);
}

TEST(Verdict, TestedRowsCarryTheIntervalAndPValue) {
  const zc::Decision d = zc::decide({1.05, spaced(1.05, 1), spaced(1.0, 1), 0.02, 0.02});
  ASSERT_TRUE(d.ci_lo && d.ci_hi && d.p_value);
  EXPECT_GT(*d.ci_lo, 1.0);
  EXPECT_LT(*d.ci_lo, 1.05);
  EXPECT_GT(*d.ci_hi, 1.05);
  EXPECT_NEAR(*d.p_value, 2.0 / 12870, 1e-12);  // no overlap, 8 against 8
  const zc::Decision few = zc::decide({1.05, spaced(1.05, 1, 3), spaced(1.0, 1, 3), 0.02, 0.02});
  EXPECT_FALSE(few.ci_lo);
  EXPECT_FALSE(few.p_value);
}

TEST(Match, EveryVerdictOnTheRecordedPair) {
  zc::Report r = report("verdicts/a", "verdicts/b");
  ASSERT_EQ(r.rows.size(), 8u);
  EXPECT_EQ(row(r, "float16", "[[64, 64]]").verdict, zc::Verdict::Faster);
  EXPECT_NEAR(*row(r, "float16", "[[64, 64]]").speedup, 0.0100 / 0.0090, 1e-12);
  EXPECT_EQ(row(r, "float16", "[[256, 256]]").verdict, zc::Verdict::Slower);
  EXPECT_EQ(row(r, "float16", "[[1024, 1024]]").verdict, zc::Verdict::Same);
  EXPECT_EQ(row(r, "float16", "[[4096, 4096]]").verdict, zc::Verdict::Noisy);
  EXPECT_EQ(row(r, "float32", "[[64, 64]]").verdict, zc::Verdict::Noisy);
  EXPECT_EQ(row(r, "float32", "[[256, 256]]").verdict, zc::Verdict::Unconfirmed);
  const zc::Compared& err = row(r, "float32", "[[1024, 1024]]");
  EXPECT_EQ(err.verdict, zc::Verdict::Error);
  EXPECT_FALSE(err.speedup);
  EXPECT_EQ(err.note, "B: replay_miss: no record for this key");
  // B timed this shape call by call after its capture failed: no verdict
  // from one run of each, whatever the test says.
  EXPECT_EQ(row(r, "float32", "[[4096, 4096]]").verdict, zc::Verdict::Noisy);
  EXPECT_EQ(row(r, "float32", "[[4096, 4096]]")
                .note.rfind("timer graph->direct; B's FlagGems side was timed call by call", 0),
            0u);
  EXPECT_NEAR(*row(r, "float16", "[[64, 64]]").control, 1.0, 1e-12);
  EXPECT_TRUE(r.regression());
  EXPECT_EQ(r.counts[zc::Verdict::Noisy], 3u);
  EXPECT_EQ(row(r, "float32", "[[256, 256]]").note, "3 vs 3 samples: the test needs 5 a side");
  for (const zc::Compared& c : r.rows) {
    EXPECT_EQ(c.bar, 0.02);
    if (c.verdict == zc::Verdict::Faster) {
      EXPECT_GT(*c.ci_lo, 1.0);
    }
    if (c.verdict == zc::Verdict::Slower) {
      EXPECT_LT(*c.ci_hi, 1.0);
    }
    if (c.verdict == zc::Verdict::Same) {
      EXPECT_TRUE(*c.ci_lo >= 0.98 && *c.ci_hi <= 1.02);
    }
    if (c.verdict == zc::Verdict::Faster || c.verdict == zc::Verdict::Same || c.verdict == zc::Verdict::Noisy) {
      EXPECT_EQ(c.kind_a, zc::SampleKind::Placements);
      EXPECT_EQ(c.values_a.size(), 8u);
    }
  }
}

TEST(Match, RowsOfOlderRunsAreTestedOnRepeatsAndSaySo) {
  zc::Report r = report("legacy/a", "legacy/b");
  const zc::Compared& repeats = row(r, "float16", "[[64, 64]]");
  EXPECT_EQ(repeats.kind_a, zc::SampleKind::Repeats);
  EXPECT_EQ(repeats.verdict, zc::Verdict::Slower);  // 3 % apart, in-run repeats 0.2 % wide
  EXPECT_EQ(repeats.note, "no placement samples on A, B: tested on in-run repeats, blind to placement variance");
  const zc::Compared& none = row(r, "float16", "[[256, 256]]");
  EXPECT_EQ(none.verdict, zc::Verdict::Unconfirmed);
  EXPECT_EQ(none.note, "no samples on A, B: the test needs 5 a side");
  const zc::Compared& mixed = row(r, "float16", "[[1024, 1024]]");
  EXPECT_EQ(mixed.kind_a, zc::SampleKind::Repeats);
  EXPECT_EQ(mixed.kind_b, zc::SampleKind::Placements);
  EXPECT_EQ(r.rows_on_repeats, 2u);
}

TEST(Load, PlacementsAreReadAndUnusableValuesCounted) {
  const zltest::TempDir tmp("zl-compare-load");
  const std::string dir = tmp.path().string();
  zl::write_file_atomic(dir + "/run_identity.json", "{\"run_id\": \"r\", \"op\": \"abs\"}\n");
  zl::write_file_atomic(dir + "/results.jsonl",
                        "{\"op\": \"abs\", \"dtype\": \"float16\", \"shape\": \"[1]\", \"latency_ms\": 1.0, "
                        "\"placements_ms\": [1.0, 0, -1, null, \"x\", 1.1], \"samples_ms\": [2, 3]}\n"
                        "{\"op\": \"abs\", \"dtype\": \"float16\", \"shape\": \"[2]\", \"latency_ms\": 1.0, "
                        "\"samples_ms\": [2, 3, 0], \"sustained\": \"device reports sw_power_cap under load\", "
                        "\"timer\": \"direct\", \"fallback_reason\": \"graph capture of 4 calls failed\"}\n");
  const zc::Side s = zc::load_side("A", dir);
  ASSERT_EQ(s.runs[0].rows.size(), 2u);
  const zc::ResultRow& placed = s.runs[0].rows[0];
  EXPECT_EQ(placed.placements_ms, (std::vector<double>{1.0, 1.1}));
  EXPECT_EQ(placed.unusable_samples, 4u);
  EXPECT_EQ(zc::sample_kind(placed), zc::SampleKind::Placements);
  const zc::ResultRow& old = s.runs[0].rows[1];
  EXPECT_EQ(zc::sample_kind(old), zc::SampleKind::Repeats);
  EXPECT_EQ(zc::test_values(old), (std::vector<double>{2, 3}));
  EXPECT_EQ(old.unusable_samples, 1u);
  EXPECT_FALSE(placed.sustained);  // no field: the pace held (older runs too)
  EXPECT_TRUE(old.sustained);
  EXPECT_FALSE(placed.timed_call_by_call);
  EXPECT_TRUE(old.timed_call_by_call);  // the direct timer because a capture failed
}

// A run the suite declined measured nothing by design: only a run that
// says it measured is warned about for having no results.
TEST(Load, OnlyARunThatMeasuredIsMissingItsResults) {
  const zltest::TempDir tmp("zl-compare-noresults");
  for (const std::string status : {"unsupported", "no_tests", "skipped", "passed"}) {
    const std::string dir = (tmp.path() / status).string();
    std::filesystem::create_directories(dir);
    zl::write_file_atomic(dir + "/run_identity.json",
                          "{\"run_id\": \"r\", \"op\": \"abs\", \"status\": \"" + status + "\"}\n");
    const zc::Side s = zc::load_side("A", dir);
    if (status == "passed") {
      ASSERT_EQ(s.warnings.size(), 1u);
      EXPECT_NE(s.warnings[0].find("no results.jsonl"), std::string::npos) << s.warnings[0];
    } else {
      EXPECT_TRUE(s.warnings.empty()) << status << ": " << s.warnings.front();
    }
  }
}

// A batch's op whose run directory lost its identity is said, not dropped
// in silence; one that failed preflight never had a directory.
TEST(Load, ARunDirectoryWithoutItsIdentityIsNamed) {
  const zltest::TempDir tmp("zl-compare-noidentity");
  const std::string dir = tmp.path().string();
  std::filesystem::create_directories(dir + "/runs/abs");
  zl::write_file_atomic(dir + "/ops_status.csv",
                        "op,status,run_dir\nabs,passed,runs/abs\nexp,preflight_failed,runs/exp\n");
  const zc::Side s = zc::load_side("A", dir);
  EXPECT_TRUE(s.runs.empty());
  ASSERT_EQ(s.warnings.size(), 2u);
  EXPECT_EQ(s.warnings[0], dir + "/runs/abs: no run_identity.json; op abs's rows are left out");
  EXPECT_EQ(s.warnings[1], dir + ": batch directory holds no run directories yet");
}

TEST(Match, RowsOnOneSideAreListedNotDropped) {
  zc::Report r = report("verdicts/a", "verdicts/b");
  ASSERT_EQ(r.one_sided.size(), 2u);
  EXPECT_EQ(r.one_sided[0].side, "B");
  EXPECT_EQ(r.one_sided[0].dtype, "bfloat16");
  EXPECT_EQ(r.one_sided[1].side, "A");
  EXPECT_EQ(r.one_sided[1].shape, "[[8192, 8192]]");
}

TEST(Match, ARepeatedShapeMatchesByOccurrence) {
  zc::Report r = report("repeated/a", "repeated/b");
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_TRUE(r.one_sided.empty());
  const zc::Compared& first = row(r, "float16", "[[4096, 4096], [4096, 4096]]");
  const zc::Compared& second = row(r, "float16", "[[4096, 4096], [4096, 4096]] #2");
  EXPECT_NEAR(*first.speedup, 1.0, 1e-12);
  EXPECT_NEAR(*second.speedup, 1.0, 1e-12);
  EXPECT_NEAR(*first.a_ms, 0.2054, 1e-12);
  EXPECT_NEAR(*second.a_ms, 0.2364, 1e-12);
}

// A kernel of launch scale read cold moves between processes past its
// placements' spread (docs/compare.md, "The guards"): between two runs it is
// no finding; a larger one, or one read warm, is judged as usual, and over
// rounds (zlcore ab) the test sees the processes.
TEST(Match, ColdRowsOfLaunchScaleAreJudgedOnlyByAnAA) {
  auto side = [](const std::string& label, double ms, const std::string& l2) {
    zc::ResultRow row = placed_row("view_copy", "[[64, 64]]", ms);
    row.l2 = l2;
    return one_row_side(label, row);
  };
  const zc::Report cold = zc::compare(side("A", 4.28e-3, "cold"), side("B", 3.94e-3, "cold"), {});
  ASSERT_EQ(cold.rows.size(), 1u);
  EXPECT_EQ(cold.rows[0].verdict, zc::Verdict::Noisy);
  EXPECT_NE(cold.rows[0].note.find("L2 cleared before each call at launch scale"), std::string::npos)
      << cold.rows[0].note;
  EXPECT_EQ(zc::compare(side("A", 4.28e-3, "warm"), side("B", 3.94e-3, "warm"), {}).rows[0].verdict,
            zc::Verdict::Faster);
  EXPECT_EQ(zc::compare(side("A", 42.8e-3, "cold"), side("B", 39.4e-3, "cold"), {}).rows[0].verdict,
            zc::Verdict::Faster);
  zc::Options rounds;
  rounds.process_guards = false;
  EXPECT_EQ(zc::compare(side("A", 4.28e-3, "cold"), side("B", 3.94e-3, "cold"), rounds).rows[0].verdict,
            zc::Verdict::Faster);
}

// A side read sustained in one run and held in the other: no finding
// between two runs; with rounds as the test values (zlcore ab) the test
// over them decides, and the method line says which guards applied.
TEST(Match, ThePaceGuardIsOneOfTheProcessGuards) {
  auto side = [](const std::string& label, double ms, bool sustained) {
    zc::ResultRow row = placed_row("abs", "[[64]]", ms);
    row.sustained = sustained;
    return one_row_side(label, row);
  };
  const zc::Report two_runs = zc::compare(side("A", 1.00, false), side("B", 1.05, true), {});
  ASSERT_EQ(two_runs.rows.size(), 1u);
  EXPECT_EQ(two_runs.rows[0].verdict, zc::Verdict::Noisy);
  EXPECT_NE(two_runs.rows[0].note.find("B was read at its sustained"), std::string::npos) << two_runs.rows[0].note;
  std::ostringstream md;
  zc::write_markdown(md, two_runs);
  EXPECT_NE(md.str().find("held or sustained"), std::string::npos);

  zc::Options rounds;
  rounds.process_guards = false;
  const zc::Report by_rounds = zc::compare(side("A", 1.00, false), side("B", 1.05, true), rounds);
  EXPECT_EQ(by_rounds.rows[0].verdict, zc::Verdict::Slower);
  std::ostringstream md_rounds;
  zc::write_markdown(md_rounds, by_rounds);
  EXPECT_EQ(md_rounds.str().find("held or sustained"), std::string::npos);

  // ab's pooled side says where such rounds' noise is from; the note shows it
  // and the verdict stays the test's.
  zc::Side remarked = side("B", 1.05, true);
  remarked.runs[0].rows[0].remark = "2 of 5 rounds read at the sustained (power-limited) pace";
  const zc::Report noted = zc::compare(side("A", 1.00, false), remarked, rounds);
  EXPECT_EQ(noted.rows[0].verdict, zc::Verdict::Slower);
  EXPECT_EQ(noted.rows[0].note, "B: 2 of 5 rounds read at the sustained (power-limited) pace");
}

TEST(Match, TornLastLineIsSkippedWithAWarning) {
  zc::Side b = zc::load_side("B", data("verdicts/b"));
  ASSERT_EQ(b.warnings.size(), 1u);
  EXPECT_NE(b.warnings[0].find("results.jsonl:10: unreadable line skipped"), std::string::npos) << b.warnings[0];
}

TEST(Geomean, OverallPerOpPerDtype) {
  zc::Report r = report("verdicts/a", "verdicts/b");
  // Seven rows have a speedup (the ERROR row has none); UNCONFIRMED ones
  // count. One of them, float32 4096^2, B timed call by call after its
  // capture failed: it stays out, and the overall says so.
  double log_sum = 0;
  for (const zc::Compared& c : r.rows) {
    if (c.speedup && !c.host_paced) log_sum += std::log(*c.speedup);
  }
  EXPECT_TRUE(row(r, "float32", "[[4096, 4096]]").host_paced);
  EXPECT_EQ(r.overall.rows, 6u);
  EXPECT_EQ(r.overall.host_paced, 1u);
  EXPECT_NEAR(r.overall.speedup, std::exp(log_sum / 6), 1e-12);
  EXPECT_NE(zc::text::headline(r).find("; 1 row timed call by call left out"), std::string::npos)
      << zc::text::headline(r);
  ASSERT_EQ(r.by_dtype.size(), 2u);
  EXPECT_EQ(r.by_dtype[0].group, "float16");
  EXPECT_NEAR(r.by_dtype[0].speedup, std::pow(1.0 / 0.9 * (0.02 / 0.022) * (0.05 / 0.0501) * (0.4 / 0.38), 0.25),
              1e-12);

  zc::Report batch = report("batch_a", "batch_b");
  ASSERT_EQ(batch.by_op.size(), 2u);
  EXPECT_EQ(batch.by_op[0].group, "abs");
  EXPECT_NEAR(batch.by_op[0].speedup, 1.25, 1e-12);
  EXPECT_NEAR(batch.by_op[1].speedup, 1 / 1.1, 1e-12);
  EXPECT_NEAR(batch.overall.speedup, std::sqrt(1.25 / 1.1), 1e-12);
  EXPECT_NEAR(*batch.overall.control, 0.020 / 0.018, 1e-12);
}

TEST(Geomean, IntervalIsSeededByTheRowsAndHoldsThePoint) {
  zc::Report r = report("verdicts/a", "verdicts/b");
  zc::Report again = report("verdicts/a", "verdicts/b");
  ASSERT_TRUE(r.overall.lo && r.overall.hi);
  EXPECT_EQ(*r.overall.lo, *again.overall.lo);  // seeded: the same every run
  EXPECT_EQ(*r.overall.hi, *again.overall.hi);
  EXPECT_LT(*r.overall.lo, r.overall.speedup);
  EXPECT_GT(*r.overall.hi, r.overall.speedup);
  // The batch's only op holds the same rows as "all": the same interval.
  ASSERT_EQ(r.by_op.size(), 1u);
  EXPECT_EQ(*r.by_op[0].lo, *r.overall.lo);
  EXPECT_EQ(*r.by_op[0].hi, *r.overall.hi);
  // One row without values has nothing to resample.
  zc::Compared lone;
  lone.speedup = 1.1;
  EXPECT_FALSE(zc::geomean("x", {&lone}).lo);
  // One row with placements: an interval from its placements alone.
  lone.values_a = spaced(1.1, 2);
  lone.values_b = spaced(1.0, 2);
  const zc::Geomean g = zc::geomean("x", {&lone});
  ASSERT_TRUE(g.lo);
  EXPECT_LT(*g.lo, 1.1);
  EXPECT_GT(*g.hi, 1.1);
}

TEST(Load, BatchDirectoryPairsRunsByOp) {
  zc::Report r = report("batch_a", "batch_b");
  EXPECT_TRUE(r.a.batch);
  EXPECT_EQ(r.a.runs.size(), 3u);
  EXPECT_EQ(r.caliber.pairs, 2u);
  EXPECT_EQ(r.caliber.autotune_pairing, "record/replay (fair)");
  ASSERT_EQ(keys(r.caliber), std::vector<std::string>{"timer.fallback_shapes"});
  EXPECT_EQ(r.caliber.differences[0].ops, std::vector<std::string>{"add"});
  EXPECT_EQ(r.caliber.notes, (std::vector<std::string>{"op mul ran on A only", "op softmax ran on B only"}));
  EXPECT_EQ(r.one_sided.size(), 2u);
}

TEST(Load, NeitherRunNorBatchIsAUsageError) {
  EXPECT_THROW(zc::load_side("A", data("no_such_dir")), zl::UsageError);
  EXPECT_THROW(zc::load_side("A", data("caliber")), zl::UsageError);
}

TEST(Caliber, EachFieldIsCompared) {
  const zc::Side base = zc::load_side("A", data("caliber/base"));
  for (const std::string& key : zc::caliber_keys()) {
    zc::Side other = base;
    other.label = "B";
    other.runs[0].caliber[key] += "-changed";
    // Fallback shapes are compared as a set of entries, not as text.
    if (key == "timer.fallback_shapes") other.runs[0].fallback_shapes.insert({"float16", "[[1]]", "gems", "x"});
    other.runs[0].autotune_mode = "replay";  // the fair pairing, so only `key` differs
    other.runs[0].autotune_source = base.runs[0].run_id;
    zc::Caliber c = zc::check_caliber(base, other, {});
    ASSERT_EQ(keys(c), std::vector<std::string>{key});
    EXPECT_EQ(c.unexpected(), 1u);
    EXPECT_EQ(zc::check_caliber(base, other, {key}).unexpected(), 0u) << key;
  }
}

TEST(Caliber, AnotherDeviceOfTheSameModelIsNotADifference) {
  // Two runs on two H200s: the device's id reaches the identity's env through
  // the state server's variables, which once made every such A/A read "NOT
  // measured the same way", twice.
  zc::Side a = zc::load_side("A", data("caliber/base"));
  zc::Side b = a;
  b.label = "B";
  a.runs[0].env["ZL_DEVICE_STATE_ID"] = "GPU-c99362fd";
  a.runs[0].env["ZL_DEVICE_STATE_ARGV"] = R"(["zlcore","devices","--serve-state","GPU-c99362fd"])";
  b.runs[0].env["ZL_DEVICE_STATE_ID"] = "GPU-25fc3e73";
  b.runs[0].env["ZL_DEVICE_STATE_ARGV"] = R"(["zlcore","devices","--serve-state","GPU-25fc3e73"])";
  b.runs[0].autotune_mode = "replay";
  b.runs[0].autotune_source = a.runs[0].run_id;
  EXPECT_EQ(keys(zc::check_caliber(a, b, {})), std::vector<std::string>{});
  b.runs[0].env["ZL_DIRECT_REPEAT"] = "9";  // a knob beside them still is one
  EXPECT_EQ(keys(zc::check_caliber(a, b, {})), std::vector<std::string>{"env.ZL_DIRECT_REPEAT"});
}

TEST(Caliber, EveryDifferenceOfTheRecordedRunIsFound) {
  zc::Caliber c = report("caliber/base", "caliber/all_differ").caliber;
  std::vector<std::string> want = zc::caliber_keys();
  for (const char* k : {"autotune", "env.TRITON_SWITCH", "env.ZL_DIRECT_REPEAT", "env.ZL_ENABLE_CUDAGRAPH"})
    want.push_back(k);
  EXPECT_EQ(keys(c), want);
  EXPECT_EQ(c.differences[4].a, "(none)");                                      // an empty fallback_shapes list
  EXPECT_EQ(c.differences[4].b, "1 shape fell back: reason not recorded (1)");  // an older identity: bare shapes
  EXPECT_EQ(c.differences[4].detail, "1 only on B: [[4096]]");
  EXPECT_EQ(c.differences.back().b, "0");
  EXPECT_EQ(c.differences[5].b, "{direct_repeat: 10, graph: {budget_ms: 50, min_windows: 2}}");  // a default moved
  EXPECT_EQ(c.differences[20].a, "1.0");    // device.attributes.driver_version
  EXPECT_EQ(c.differences[24].b, "false");  // device.attributes.ecc_enabled
  EXPECT_EQ(c.differences[25].a, "warm");   // timer.l2: A's identity predates the policy
  EXPECT_EQ(c.differences[25].b, "cold");
  EXPECT_EQ(c.differences[27].a, "(unset)");  // env.TRITON_SWITCH absent on A
}

TEST(Caliber, ExpectDiffPatterns) {
  EXPECT_TRUE(zc::expected_by("env.TRITON_SWITCH", {"TRITON_SWITCH"}));
  EXPECT_TRUE(zc::expected_by("env.TRITON_SWITCH", {"env.TRITON_SWITCH"}));
  EXPECT_TRUE(zc::expected_by("versions.triton", {"versions.*"}));
  EXPECT_FALSE(zc::expected_by("versions", {"versions.*"}));
  EXPECT_FALSE(zc::expected_by("timer.name", {"timer"}));

  zc::Caliber only_env = report("caliber/base", "caliber/env_only", {0.02, {"TRITON_SWITCH"}, nullptr}).caliber;
  ASSERT_EQ(only_env.differences.size(), 1u);
  EXPECT_TRUE(only_env.differences[0].expected);
  EXPECT_EQ(only_env.unexpected(), 0u);

  zc::Caliber unused = report("caliber/base", "caliber/env_only", {0.02, {"NOT_A_KNOB"}, nullptr}).caliber;
  EXPECT_EQ(unused.notes, std::vector<std::string>{"--expect-diff NOT_A_KNOB: the sides do not differ there"});
  EXPECT_EQ(unused.unexpected(), 1u);
}

TEST(Caliber, AutotunePairings) {
  auto pairing = [](const char* a, const char* b) { return report(a, b).caliber; };
  zc::Caliber fair = pairing("autotune/record", "autotune/replay_of_record");
  EXPECT_TRUE(fair.autotune_fair);
  EXPECT_EQ(fair.autotune_pairing, "record/replay (fair)");
  EXPECT_TRUE(fair.differences.empty());

  zc::Side rec = zc::load_side("A", data("autotune/record"));
  zc::Side rep = zc::load_side("B", data("autotune/replay_of_record"));
  rec.runs[0].autotune_records_hash = "sha256:aaaa";
  rep.runs[0].autotune_records_hash = "sha256:bbbb";
  zc::Caliber edited = zc::check_caliber(rec, rep, {});
  EXPECT_FALSE(edited.autotune_fair);
  EXPECT_EQ(edited.autotune_pairing, "record/replay of changed records: B's records hash differs from A's");
  rep.runs[0].autotune_records_hash = "sha256:aaaa";
  EXPECT_TRUE(zc::check_caliber(rec, rep, {}).autotune_fair);

  zc::Caliber other = pairing("autotune/record", "autotune/replay_of_other");
  EXPECT_FALSE(other.autotune_fair);
  EXPECT_EQ(other.autotune_pairing, "record/replay of another run: B's winners are not A's");
  ASSERT_EQ(keys(other), std::vector<std::string>{"autotune"});
  EXPECT_EQ(other.differences[0].b, "replay of another run");

  zc::Caliber tuned = pairing("autotune/tune1", "autotune/tune2");
  EXPECT_EQ(tuned.autotune_pairing, "tune/tune: each side tuned itself, winners may differ");
  EXPECT_EQ(keys(tuned), std::vector<std::string>{"autotune"});

  EXPECT_EQ(pairing("autotune/record", "autotune/tune1").autotune_pairing,
            "record/tune: B tuned itself instead of replaying A");
  EXPECT_EQ(pairing("autotune/replay_of_record", "autotune/record").autotune_pairing,
            "replay/record: only A's winners are pinned");
}

TEST(Formats, EveryFormatNamesTheDirectionOfSpeedup) {
  zc::Report r = report("verdicts/a", "verdicts/b");
  std::ostringstream table, md, json, html, csv;
  zc::write_table(table, r);
  zc::write_markdown(md, r);
  zc::write_json(json, r);
  zc::write_html(html, r);
  zc::write_csv(csv, r);
  for (const std::string& s : {table.str(), md.str()}) {
    EXPECT_NE(s.find("FASTER means B is faster than A (speedup > 1)"), std::string::npos);
  }
  EXPECT_NE(html.str().find("FASTER means B is faster than A (speedup &gt; 1)"), std::string::npos);
  EXPECT_NE(json.str().find("\"speedup_definition\": \"A ms / B ms, FlagGems side; > 1: B faster\""),
            std::string::npos);
  EXPECT_NE(csv.str().find("ONLY_A"), std::string::npos);
  EXPECT_NE(html.str().find("<svg"), std::string::npos);
  EXPECT_EQ(html.str().find("<script"), std::string::npos);
  EXPECT_EQ(html.str().find("http://www.w3.org/2000/svg\""),
            html.str().find("http"));  // the SVG namespace is the only URL
}

// ---- calibration and the noise floor --------------------------------------

namespace {

zc::Calibration calibrate_aa(const std::vector<std::string>& names, zc::Options opt = {}) {
  std::vector<zc::Side> sides;
  for (size_t i = 0; i < names.size(); ++i)
    sides.push_back(zc::load_side("A" + std::to_string(i + 1), data("aa/" + names[i])));
  return zc::calibrate(std::move(sides), opt);
}

const zc::CalibrationRow& floor_row(const zc::Calibration& c, const std::string& op, const std::string& shape) {
  for (const zc::CalibrationRow& r : c.rows) {
    if (r.op == op && r.shape == shape) return r;
  }
  throw std::runtime_error("no floor row " + op + " " + shape);
}

std::string write_noise_file(const zc::Calibration& c, const zltest::TempDir& dir) {
  std::ostringstream text;
  zc::write_calibration_json(text, c);
  const std::string path = (dir / "noise.json").string();
  zl::write_file_atomic(path, text.str());
  return path;
}

}  // namespace

TEST(Calibrate, EveryPairItsFalseVerdictsAndEachRowsFloor) {
  const zc::Calibration c = calibrate_aa({"b1", "b2", "b3"});
  ASSERT_EQ(c.pairs.size(), 3u);
  EXPECT_EQ(c.caliber_unexpected(), 0u);
  // 7 rows, 3 pairs; softmax's process in b3 sat 3 % slow: false verdicts
  // against b3 that a test over one run's placements cannot see.
  EXPECT_EQ(c.overall.tested, 21u);
  ASSERT_EQ(c.by_op.size(), 3u);
  EXPECT_EQ(c.by_op[0].group, "abs");
  EXPECT_EQ(c.by_op[0].false_verdicts, 0u);
  EXPECT_EQ(c.by_op[2].group, "softmax");
  EXPECT_EQ(c.by_op[2].false_verdicts, 4u);
  EXPECT_EQ(c.overall.false_verdicts, 4u);
  ASSERT_EQ(c.rows.size(), 7u);
  const zc::CalibrationRow& soft = floor_row(c, "softmax", "[[1024, 1024]]");
  EXPECT_EQ(soft.runs, 3);
  EXPECT_EQ(soft.false_verdicts, 2u);
  EXPECT_GT(soft.max_log_ratio, std::log(1.02));
  EXPECT_NEAR(soft.factor, zl::compare::stats::floor_factor(3, zc::kAlpha), 1e-12);
  EXPECT_NEAR(soft.bar, std::expm1(soft.factor * soft.max_log_ratio), 1e-12);
  const zc::CalibrationRow& steady = floor_row(c, "abs", "[[1024, 1024]]");
  EXPECT_EQ(steady.bar, 0.02);  // a quiet row keeps the threshold
  EXPECT_TRUE(c.notes.empty());
  EXPECT_THROW(calibrate_aa({"b1"}), zl::UsageError);
  // Two runs: the factor is 63.7, and the report says so.
  const zc::Calibration two = calibrate_aa({"b1", "b2"});
  ASSERT_EQ(two.notes.size(), 1u);
  EXPECT_NE(two.notes[0].find("two runs"), std::string::npos);
}

TEST(Calibrate, AHugeBarIsPrintedAsAPercentage) {
  // Two runs of a row 2.6x apart (the H200's allclose, one placement a side):
  // the bar is exp(63.7 * log 2.6) - 1, about 2.7e26; in fixed notation it
  // filled the cell's buffer and lost its '%'.
  zc::Calibration c = calibrate_aa({"b1", "b2", "b3"});
  c.rows[0].bar = 2.7e26;
  std::ostringstream md;
  zc::write_calibration_markdown(md, c);
  EXPECT_NE(md.str().find("| 2.7e+28% |"), std::string::npos) << md.str();
}

TEST(NoiseFloor, WidensTheBarOfKnownRowsOnly) {
  const zltest::TempDir tmp("zl-compare-floor");
  const std::string path = write_noise_file(calibrate_aa({"b1", "b2", "b3"}), tmp);
  zc::Options opt;
  opt.noise_floor = std::make_shared<const zc::NoiseFloor>(zc::load_noise_floor(path));
  EXPECT_EQ(opt.noise_floor->rows.size(), 7u);
  EXPECT_EQ(opt.noise_floor->calibration_runs, 3u);
  EXPECT_EQ(opt.noise_floor->sha256.size(), 64u);

  // Without the floor, softmax's process offset reads as FASTER in a batch
  // that changed nothing there; with it, NOISY. abs, 10 % slower for real,
  // stays SLOWER: its floor is small.
  zc::Report plain = report("aa/b1", "aa/slow");
  zc::Report floored = report("aa/b1", "aa/slow", opt);
  EXPECT_EQ(row(plain, "float16", "[[1024, 1024]]").op, "abs");
  for (const zc::Compared& c : floored.rows) {
    EXPECT_TRUE(c.floor);
    EXPECT_GE(c.bar, 0.02);
    if (c.op == "abs") {
      EXPECT_EQ(c.verdict, zc::Verdict::Slower) << c.shape;
    }
    if (c.op == "softmax") {
      EXPECT_EQ(c.verdict, zc::Verdict::Noisy) << c.shape;
    }
  }
  size_t plain_softmax_faster = 0;
  for (const zc::Compared& c : plain.rows)
    plain_softmax_faster += c.op == "softmax" && c.verdict == zc::Verdict::Faster;
  EXPECT_EQ(plain_softmax_faster, 2u);
  EXPECT_EQ(floored.rows_with_floor, 7u);
  EXPECT_EQ(floored.rows_widened, 5u);

  // Rows the file does not know (op mul) keep the plain threshold.
  zc::Report other = report("caliber/base", "caliber/env_only", opt);
  EXPECT_EQ(other.rows_with_floor, 0u);
  for (const zc::Compared& c : other.rows) EXPECT_EQ(c.bar, 0.02);
}

TEST(NoiseFloor, AFileThatIsNotOneIsAUsageError) {
  const zltest::TempDir tmp("zl-compare-bad-floor");
  const std::string dir = tmp.path().string();
  auto refused = [&](const std::string& text, const std::string& says) {
    zl::write_file_atomic(dir + "/f.json", text);
    try {
      zc::load_noise_floor(dir + "/f.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const zl::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused("not json", "not JSON");
  refused("{\"kind\": \"something\", \"version\": 1, \"rows\": []}", "not a noise-floor file");
  refused("{\"kind\": \"zlcore-noise-floor\", \"version\": 2, \"rows\": []}", "reads version 1");
  refused("{\"kind\": \"zlcore-noise-floor\", \"version\": 1}", "no \"rows\"");
  refused(
      "{\"kind\": \"zlcore-noise-floor\", \"version\": 1, \"rows\": [{\"op\": \"a\", \"dtype\": \"b\", "
      "\"shape\": \"c\", \"runs\": 1, \"max_log_ratio\": 0.1}]}",
      "rows[0]");
  EXPECT_THROW(zc::load_noise_floor(dir + "/missing.json"), zl::UsageError);
}

// Fallback reasons differ run to run in counts and addresses only.
TEST(Caliber, FallbackReasonsAreComparedWithTheirNumbersNormalized) {
  EXPECT_EQ(zc::normalized_reason("graph capture of 12 calls failed at 0x7f3a9c: code 700 after 1.5 ms"),
            "graph capture of N calls failed at N: code N after N ms");
  std::set<zc::FallbackShape> s{{"float16", "[[64]]", "gems", "capture of N calls failed"},
                                {"float16", "[[64]]", "torch", "capture of N calls failed"},
                                {"float16", "[[128]]", "gems", "replay failed"}};
  EXPECT_EQ(zc::fallback_summary(s), "2 shapes fell back: capture of N calls failed (2); replay failed (1)");
  EXPECT_EQ(zc::fallback_summary({}), "(none)");
  const zc::Report same = report("fallback/a", "fallback/b");
  EXPECT_TRUE(same.caliber.differences.empty());
  const zc::Report more = report("fallback/a", "fallback/c");
  ASSERT_EQ(keys(more.caliber), std::vector<std::string>{"timer.fallback_shapes"});
  EXPECT_EQ(more.caliber.differences[0].ops, std::vector<std::string>{"softmax"});
}

// An A/A of tuned runs is judged by the winners each used.
TEST(Caliber, TheWinnersUsedDecideNotTheAutotuneMode) {
  const zc::Report same = report("winners/tune1", "winners/tune2");
  EXPECT_TRUE(same.caliber.differences.empty()) << same.caliber.differences[0].key;
  EXPECT_TRUE(same.caliber.autotune_fair);
  EXPECT_EQ(same.caliber.autotune_pairing, "tune/tune: same winners (2 kernels)");
  const zc::Report other = report("winners/tune1", "winners/tune_other");
  ASSERT_EQ(keys(other.caliber), std::vector<std::string>{"autotune"});
  EXPECT_EQ(other.caliber.differences[0].detail, "tune/tune: different winners in mm_kernel, softmax_kernel (B only)");
  // A run that does not say which winners it used: the mode decides, as before.
  const zc::Report unknown = report("winners/tune1", "winners/tune_unknown");
  EXPECT_FALSE(unknown.caliber.autotune_fair);
}

namespace {

zc::Report one_sided(std::vector<zc::OneSided> rows) {
  zc::Report r;
  r.a.path = "runs/A";
  r.b.path = "runs/B";
  r.one_sided = std::move(rows);
  return r;
}

}  // namespace

TEST(NothingInCommon, NamesTheOpsThatDiffer) {
  const std::string why = zc::nothing_in_common(
      one_sided({{"A", "abs", "float16", "[1024]", 1.0}, {"B", "mm", "float16", "[64, 64, 64]", 1.0}}));
  EXPECT_EQ(why,
            "runs/A (A) and runs/B (B) have no row in common: different ops (A: abs; B: mm); compare runs of the same "
            "ops");
}

TEST(NothingInCommon, NamesTheDtypesWhereTheOpsAgree) {
  const std::string why = zc::nothing_in_common(
      one_sided({{"A", "abs", "float16", "[1024]", 1.0}, {"B", "abs", "float32", "[1024]", 1.0}}));
  EXPECT_NE(why.find("different dtypes of abs (A: float16; B: float32)"), std::string::npos) << why;
}

TEST(NothingInCommon, NamesTheShapesWhereOpsAndDtypesAgree) {
  const std::string why = zc::nothing_in_common(
      one_sided({{"A", "abs", "float16", "[1024]", 1.0}, {"B", "abs", "float16", "[2048]", 1.0}}));
  EXPECT_NE(why.find("different shapes of abs (A: [1024]; B: [2048])"), std::string::npos) << why;
}

TEST(NothingInCommon, ASideWithoutRowsIsSaid) {
  const std::string why = zc::nothing_in_common(one_sided({{"A", "abs", "float16", "[1024]", 1.0}}));
  EXPECT_NE(why.find("B has no result rows"), std::string::npos) << why;
}

TEST(NothingInCommon, AReportWithARowInCommonHasNothingToSay) {
  zc::Report r = one_sided({});
  r.rows.emplace_back();
  EXPECT_EQ(zc::nothing_in_common(r), "");
}

// The answer line must not read "no difference" when no row could be judged
// at all (every row too short of samples): it says it cannot tell, and why.
TEST(Headline, NoRowTestedIsCannotTellNotNoDifference) {
  zl::compare::Report r;
  r.overall.rows = 4;
  r.overall.speedup = 0.93;
  r.overall.lo = 0.85;
  r.overall.hi = 1.01;
  r.counts[zl::compare::Verdict::Unconfirmed] = 4;
  EXPECT_EQ(zl::compare::text::headline(r).rfind("answer: cannot tell from these runs: none of the 4 rows could be "
                                                 "tested (UNCONFIRMED 4, NO_WORK 0, ERROR 0); geomean speedup ",
                                                 0),
            0U)
      << zl::compare::text::headline(r);
  r.counts[zl::compare::Verdict::Same] = 1;  // one judged row: the interval speaks again
  EXPECT_EQ(zl::compare::text::headline(r).rfind("answer: no overall difference shown between B and A: ", 0), 0U);
}

namespace {

// A run directory whose identity's timer block is `timer` (JSON), one row.
std::string run_with_timer(const zltest::TempDir& tmp, const std::string& name, const std::string& timer,
                           const std::string& row_extra = "") {
  const std::string dir = (tmp.path() / name).string();
  std::filesystem::create_directories(dir);
  zl::write_file_atomic(dir + "/run_identity.json",
                        "{\"run_id\": \"" + name +
                            "\", \"op\": \"abs\", \"autotune\": {\"mode\": \"tune\", \"winners_hash\": \"h\"}, " +
                            "\"timer\": " + timer + "}\n");
  zl::write_file_atomic(
      dir + "/results.jsonl",
      "{\"op\": \"abs\", \"dtype\": \"float16\", \"shape\": \"[1]\", \"latency_ms\": 1.0" + row_extra + "}\n");
  return dir;
}

}  // namespace

// The L2 policy is caliber: a cold run against a warm one is named, and an
// identity older than the policy (no timer.l2) is the warm run it was.
TEST(Caliber, AColdRunAgainstAWarmOneIsFlaggedAndAnOlderIdentityReadsWarm) {
  const zltest::TempDir tmp("zl-compare-l2");
  const std::string old = run_with_timer(tmp, "old", R"({"name": "graph"})");
  const std::string warm = run_with_timer(tmp, "warm", R"({"name": "graph", "l2": "warm"})");
  const std::string cold = run_with_timer(tmp, "cold", R"({"name": "graph", "l2": "cold", "l2_bytes": 62914560})");
  auto caliber = [](const std::string& a, const std::string& b) {
    return zc::check_caliber(zc::load_side("A", a), zc::load_side("B", b), {});
  };
  EXPECT_EQ(keys(caliber(old, warm)), std::vector<std::string>{});
  const zc::Caliber c = caliber(warm, cold);
  ASSERT_EQ(keys(c), std::vector<std::string>{"timer.l2"});
  EXPECT_EQ(c.differences[0].a, "warm");
  EXPECT_EQ(c.differences[0].b, "cold");
  EXPECT_EQ(keys(caliber(old, cold)), std::vector<std::string>{"timer.l2"});
  EXPECT_EQ(zc::check_caliber(zc::load_side("A", warm), zc::load_side("B", cold), {"timer.l2"}).unexpected(), 0u);
}

// Like a timer that changed, a row read cold on one side and warm on the
// other says so in its note, in every format that shows the note.
TEST(Match, ARowReadColdAgainstWarmSaysSo) {
  const zltest::TempDir tmp("zl-compare-l2-row");
  const std::string warm = run_with_timer(tmp, "warm", R"({"name": "graph", "l2": "warm"})");
  const std::string cold = run_with_timer(tmp, "cold", R"({"name": "graph", "l2": "cold"})", R"(, "l2": "cold")");
  const zc::Report r = zc::compare(zc::load_side("A", warm), zc::load_side("B", cold), {});
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_NE(r.rows[0].note.find("L2 warm->cold"), std::string::npos) << r.rows[0].note;
  const zc::Report same = zc::compare(zc::load_side("A", cold), zc::load_side("B", cold), {});
  EXPECT_EQ(same.rows[0].note.find("L2"), std::string::npos) << same.rows[0].note;
}

// A run directory's op names and notes are someone else's text: in Markdown,
// which renderers read as HTML too, they stay text (a pipe stays in its cell).
TEST(Formats, MarkdownCellsCarryNoMarkupFromTheRuns) {
  zc::Report r = report("verdicts/a", "verdicts/b");
  ASSERT_FALSE(r.rows.empty());
  r.rows[0].op = "<img src=x onerror=alert(1)>";
  r.rows[0].note = "a & b | c";
  std::ostringstream md;
  zc::write_markdown(md, r);
  EXPECT_EQ(md.str().find("<img"), std::string::npos);
  EXPECT_NE(md.str().find("| &lt;img src=x onerror=alert(1)> |"), std::string::npos);
  EXPECT_NE(md.str().find("a &amp; b \\| c"), std::string::npos);
}
