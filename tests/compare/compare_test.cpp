// The compare library on the recorded run directories in data/ (written by
// data/make_data.py): loading, matching, the verdict rule, geomeans, every
// caliber field and the autotune pairings.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "zlcore/compare.hpp"
#include "zlcore/errors.hpp"

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

zc::VerdictInputs in(double s, double spread_a, double spread_b, int reps = 10) {
  return {s, spread_a, spread_b, reps, reps, 0.02};
}

}  // namespace

TEST(Verdict, RuleAtItsEdges) {
  using V = zc::Verdict;
  EXPECT_EQ(zc::decide(in(1.05, 1, 1)), V::Faster);
  EXPECT_EQ(zc::decide(in(0.95, 1, 1)), V::Slower);
  EXPECT_EQ(zc::decide(in(1.01, 1, 1)), V::Same);
  EXPECT_EQ(zc::decide(in(1.02, 2, 2)), V::Same);     // both at the threshold: inclusive
  EXPECT_EQ(zc::decide(in(0.98, 2, 2)), V::Same);
  EXPECT_EQ(zc::decide(in(1.05, 8, 1)), V::Noisy);    // a 5 % gain inside 8 % noise
  EXPECT_EQ(zc::decide(in(1.05, 1, 5)), V::Noisy);    // noise of the worse side counts
  EXPECT_EQ(zc::decide(in(1.00, 3, 0)), V::Noisy);    // no change, but cannot claim SAME within 2 %
  EXPECT_EQ(zc::decide(in(1.10, 9, 9)), V::Faster);   // 10 % beats 9 % noise
  // Each side's spread against the gap in its own units. The H200 row
  // (mm_self_transpose 4096x1024): A's samples 0.05318-0.05859 ms (median
  // 0.058232, spread 9.287 %) contain B's median 0.053257 (spread 0.240 %).
  const double s = 0.05823199987411499 / 0.05325664043426514;  // 1.0934: past 9.287 % in B's units
  EXPECT_EQ(zc::decide(in(s, 9.28699161583983, 0.2403407299686057)), V::Noisy);
  EXPECT_EQ(zc::decide(in(1 / s, 0.2403407299686057, 9.28699161583983)), V::Noisy);
  EXPECT_EQ(zc::decide(in(s, 8.5, 0.24)), V::Faster);  // 1 - 1/s = 8.54 % > 8.5 %
  EXPECT_EQ(zc::decide(in(1.05, 0, 0, 1)), V::Unconfirmed);
  EXPECT_EQ(zc::decide({1.05, 0, 0, 10, 1, 0.02}), V::Unconfirmed);  // repeats needed on both sides
  EXPECT_EQ(zc::decide({1.05, 1, 1, 10, 10, 0.10}), V::Same);        // a looser threshold
  EXPECT_EQ(zc::decide(in(NAN, 1, 1)), V::Error);
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
  EXPECT_EQ(row(r, "float32", "[[4096, 4096]]").note, "timer graph->direct");
  EXPECT_NEAR(*row(r, "float16", "[[64, 64]]").control, 1.0, 1e-12);
  EXPECT_TRUE(r.regression());
  EXPECT_EQ(r.counts[zc::Verdict::Noisy], 2u);
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

TEST(Match, TornLastLineIsSkippedWithAWarning) {
  zc::Side b = zc::load_side("B", data("verdicts/b"));
  ASSERT_EQ(b.warnings.size(), 1u);
  EXPECT_NE(b.warnings[0].find("results.jsonl:10: unreadable line skipped"), std::string::npos) << b.warnings[0];
}

TEST(Geomean, OverallPerOpPerDtype) {
  zc::Report r = report("verdicts/a", "verdicts/b");
  // Seven rows have a speedup (the ERROR row has none); UNCONFIRMED ones count.
  double log_sum = 0;
  for (const zc::Compared& c : r.rows) {
    if (c.speedup) log_sum += std::log(*c.speedup);
  }
  EXPECT_EQ(r.overall.rows, 7u);
  EXPECT_NEAR(r.overall.speedup, std::exp(log_sum / 7), 1e-12);
  ASSERT_EQ(r.by_dtype.size(), 2u);
  EXPECT_EQ(r.by_dtype[0].group, "float16");
  EXPECT_NEAR(r.by_dtype[0].speedup, std::pow(1.0 / 0.9 * (0.02 / 0.022) * (0.05 / 0.0501) * (0.4 / 0.38), 0.25), 1e-12);

  zc::Report batch = report("batch_a", "batch_b");
  ASSERT_EQ(batch.by_op.size(), 2u);
  EXPECT_EQ(batch.by_op[0].group, "abs");
  EXPECT_NEAR(batch.by_op[0].speedup, 1.25, 1e-12);
  EXPECT_NEAR(batch.by_op[1].speedup, 1 / 1.1, 1e-12);
  EXPECT_NEAR(batch.overall.speedup, std::sqrt(1.25 / 1.1), 1e-12);
  EXPECT_NEAR(*batch.overall.control, 0.020 / 0.018, 1e-12);
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
    other.runs[0].autotune_mode = "replay";  // the fair pairing, so only `key` differs
    other.runs[0].autotune_source = base.runs[0].run_id;
    zc::Caliber c = zc::check_caliber(base, other, {});
    ASSERT_EQ(keys(c), std::vector<std::string>{key});
    EXPECT_EQ(c.unexpected(), 1u);
    EXPECT_EQ(zc::check_caliber(base, other, {key}).unexpected(), 0u) << key;
  }
}

TEST(Caliber, EveryDifferenceOfTheRecordedRunIsFound) {
  zc::Caliber c = report("caliber/base", "caliber/all_differ").caliber;
  std::vector<std::string> want = zc::caliber_keys();
  for (const char* k : {"autotune", "env.TRITON_SWITCH", "env.ZL_DIRECT_REPEAT", "env.ZL_ENABLE_CUDAGRAPH"}) want.push_back(k);
  EXPECT_EQ(keys(c), want);
  EXPECT_EQ(c.differences[4].a, "(none)");  // an empty fallback_shapes list
  EXPECT_EQ(c.differences[4].b, "[[4096]]");
  EXPECT_EQ(c.differences.back().b, "0");
  EXPECT_EQ(c.differences[5].b, "{direct_repeat: 10, graph: {budget_ms: 50, min_windows: 2}}");  // a default moved
  EXPECT_EQ(c.differences[21].a, "(unset)");  // env.TRITON_SWITCH absent on A
}

TEST(Caliber, ExpectDiffPatterns) {
  EXPECT_TRUE(zc::expected_by("env.TRITON_SWITCH", {"TRITON_SWITCH"}));
  EXPECT_TRUE(zc::expected_by("env.TRITON_SWITCH", {"env.TRITON_SWITCH"}));
  EXPECT_TRUE(zc::expected_by("versions.triton", {"versions.*"}));
  EXPECT_FALSE(zc::expected_by("versions", {"versions.*"}));
  EXPECT_FALSE(zc::expected_by("timer.name", {"timer"}));

  zc::Caliber only_env = report("caliber/base", "caliber/env_only", {0.02, {"TRITON_SWITCH"}}).caliber;
  ASSERT_EQ(only_env.differences.size(), 1u);
  EXPECT_TRUE(only_env.differences[0].expected);
  EXPECT_EQ(only_env.unexpected(), 0u);

  zc::Caliber unused = report("caliber/base", "caliber/env_only", {0.02, {"NOT_A_KNOB"}}).caliber;
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
  EXPECT_NE(json.str().find("\"speedup_definition\": \"A ms / B ms, FlagGems side; > 1: B faster\""), std::string::npos);
  EXPECT_NE(csv.str().find("ONLY_A"), std::string::npos);
  EXPECT_NE(html.str().find("<svg"), std::string::npos);
  EXPECT_EQ(html.str().find("<script"), std::string::npos);
  EXPECT_EQ(html.str().find("http://www.w3.org/2000/svg\""), html.str().find("http"));  // the SVG namespace is the only URL
}
