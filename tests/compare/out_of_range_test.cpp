// Latencies near the ends of the double range, and noise-floor paths that are
// not files: whatever the inputs, the report's JSON parses, its CSV holds
// numbers, a statistic that is no finite number is absent with the reason in
// the row's note, and a bad --noise-floor path is named for what it is.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "../../core/src/util/json_read.hpp"
#include "zlcore/compare.hpp"
#include "zlcore/errors.hpp"
#include "zltest/temp_dir.hpp"

namespace zc = zl::compare;
namespace fs = std::filesystem;

namespace {

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// A run of two rows (abs float16, two shapes) with the recorded identity of
// data/verdicts/a: each row's latency is `ms`, its eight placements
// `placement_ms` (default `ms`) spread by 0.7 %.
fs::path run(const fs::path& dir, double ms, double placement_ms = 0) {
  if (placement_ms == 0) placement_ms = ms;
  fs::create_directories(dir);
  fs::copy_file(fs::path(ZL_COMPARE_DATA) / "verdicts" / "a" / "run_identity.json", dir / "run_identity.json");
  std::ofstream out(dir / "results.jsonl");
  for (const char* shape : {"[[64, 64]]", "[[256, 256]]"}) {
    std::string placements;
    for (int i = 0; i < 8; ++i) placements += (i ? ", " : "") + number(placement_ms * (1 + 0.001 * i));
    out << "{\"op\": \"abs\", \"dtype\": \"float16\", \"shape\": \"" << shape << "\", \"latency_ms\": " << number(ms)
        << ", \"latency_base_ms\": " << number(ms) << ", \"timer\": \"graph\", \"timer_base\": \"graph\", "
        << "\"repeats\": 8, \"spread_pct\": 1.0, \"spread_base_pct\": 1.0, \"placements_ms\": [" << placements
        << "]}\n";
  }
  return dir;
}

zc::Report compared(const fs::path& dir, double a_ms, double b_ms, double a_placement_ms = 0,
                    double b_placement_ms = 0) {
  return zc::compare(zc::load_side("A", run(dir / "A", a_ms, a_placement_ms).string()),
                     zc::load_side("B", run(dir / "B", b_ms, b_placement_ms).string()), zc::Options{});
}

void expect_valid_outputs(const zc::Report& r) {
  std::ostringstream json, csv;
  zc::write_json(json, r);
  zc::write_csv(csv, r);
  rapidjson::Document d;
  EXPECT_EQ(zl::json::parse(d, json.str()), "") << json.str();
  EXPECT_TRUE(d.IsObject() && d.HasMember("geomean") && d.HasMember("counts")) << json.str();
  for (const char* garbage : {"inf", "nan", "INF", "NAN"}) {
    EXPECT_EQ(csv.str().find(std::string(",") + garbage), std::string::npos) << csv.str();
  }
}

}  // namespace

TEST(OutOfRange, ASpeedupThatOverflowsIsAnErrorRowThatSaysWhy) {
  const zltest::TempDir tmp("zl-out-of-range-overflow");
  const fs::path dir = tmp.path();
  const zc::Report r = compared(dir, 1e308, 1e-3);
  ASSERT_EQ(r.rows.size(), 2u);
  for (const zc::Compared& c : r.rows) {
    EXPECT_FALSE(c.speedup.has_value());
    EXPECT_EQ(c.verdict, zc::Verdict::Error);
    EXPECT_NE(c.note.find("speedup out of range (1e+308 ms / 0.001 ms is no finite number)"), std::string::npos)
        << c.note;
    EXPECT_NE(c.note.find("torch ratio out of range"), std::string::npos) << c.note;
    EXPECT_FALSE(c.control.has_value());
  }
  EXPECT_EQ(r.overall.rows, 0u);
  expect_valid_outputs(r);
}

TEST(OutOfRange, HugeButEqualLatenciesKeepAFiniteGeomeanAndInterval) {
  const zltest::TempDir tmp("zl-out-of-range-huge-equal");
  const fs::path dir = tmp.path();
  const zc::Report r = compared(dir, 1e308, 1e308);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.overall.rows, 2u);
  EXPECT_DOUBLE_EQ(r.overall.speedup, 1.0);
  ASSERT_TRUE(r.overall.lo.has_value() && r.overall.hi.has_value());
  EXPECT_TRUE(std::isfinite(*r.overall.lo) && std::isfinite(*r.overall.hi));
  EXPECT_LE(*r.overall.lo, 1.0);
  EXPECT_GE(*r.overall.hi, 1.0);
  expect_valid_outputs(r);
  std::ostringstream md;
  zc::write_markdown(md, r);
  EXPECT_NE(md.str().find("| all | 1.000 |"), std::string::npos) << md.str();
}

TEST(OutOfRange, AnIntervalWhoseRatiosOverflowIsLeftOutWithAReason) {
  const zltest::TempDir tmp("zl-out-of-range-interval");
  const fs::path dir = tmp.path();
  // The rows' latencies are equal; their placements' ratios (1e308 / 1e-3) are no finite number.
  const zc::Report r = compared(dir, 1.0, 1.0, 1e308, 1e-3);
  ASSERT_EQ(r.rows.size(), 2u);
  for (const zc::Compared& c : r.rows) {
    ASSERT_TRUE(c.speedup.has_value());
    EXPECT_FALSE(c.ci_lo.has_value());
    EXPECT_FALSE(c.ci_hi.has_value());
    EXPECT_NE(c.note.find("no finite interval: the values' ratios leave the range of a double"), std::string::npos)
        << c.note;
  }
  expect_valid_outputs(r);
}

TEST(OutOfRange, ANoiseFloorWhoseBarOverflowsIsRefusedNamingTheRow) {
  const zltest::TempDir tmp("zl-out-of-range-floor-bar");
  const fs::path dir = tmp.path();
  std::ofstream(dir / "f.json") << "{\"kind\": \"zlcore-noise-floor\", \"version\": 1, \"rows\": [{\"op\": \"abs\", "
                                   "\"dtype\": \"float16\", \"shape\": \"[[64, 64]]\", \"runs\": 2, "
                                   "\"max_log_ratio\": 1e300}]}";
  try {
    zc::load_noise_floor((dir / "f.json").string());
    ADD_FAILURE() << "accepted";
  } catch (const zl::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("rows[0] needs"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("whose bar is a finite number"), std::string::npos) << e.what();
  }
}

// ---- what a --noise-floor path names ----------------------------------------

std::string refusal(const std::string& path) {
  try {
    zc::load_noise_floor(path);
  } catch (const zl::UsageError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(NoiseFloorPath, AFifoIsNamedAsOneAndNotOpened) {
  const zltest::TempDir tmp("zl-out-of-range-fifo");
  const fs::path dir = tmp.path();
  const std::string fifo = (dir / "floor.json").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  // No writer ever opens it: a reader that opened it blocking would hang here.
  EXPECT_EQ(refusal(fifo), "compare: --noise-floor " + fifo +
                               ": a FIFO (named pipe); expected a regular file written by 'zlcore compare "
                               "--calibrate A1 A2 ... --out FILE'");
}

TEST(NoiseFloorPath, ADirectoryIsNamedAsOne) {
  const zltest::TempDir tmp("zl-out-of-range-dir");
  const fs::path dir = tmp.path();
  EXPECT_EQ(refusal(dir.string()), "compare: --noise-floor " + dir.string() +
                                       ": a directory; expected a regular file written by 'zlcore compare "
                                       "--calibrate A1 A2 ... --out FILE'");
}

TEST(NoiseFloorPath, ALinkToADeviceNamesTheDevice) {
  const zltest::TempDir tmp("zl-out-of-range-link");
  const fs::path dir = tmp.path();
  fs::create_symlink("/dev/zero", dir / "floor.json");
  EXPECT_EQ(refusal((dir / "floor.json").string()),
            "compare: --noise-floor " + (dir / "floor.json").string() +
                ": a link to a character device (/dev/zero); expected a regular file written by 'zlcore compare "
                "--calibrate A1 A2 ... --out FILE'");
}

TEST(NoiseFloorPath, AMissingFileIsSaidToBeMissing) {
  const zltest::TempDir tmp("zl-out-of-range-missing");
  const fs::path dir = tmp.path();
  EXPECT_EQ(refusal((dir / "none.json").string()),
            "compare: --noise-floor " + (dir / "none.json").string() +
                ": no such file; expected a regular file written by 'zlcore compare --calibrate A1 A2 ... --out "
                "FILE'");
}

TEST(NoiseFloorPath, DeepNestingIsRefusedWithoutRecursing) {
  const zltest::TempDir tmp("zl-out-of-range-deep");
  const fs::path dir = tmp.path();
  std::ofstream(dir / "f.json") << std::string(300000, '[');
  EXPECT_EQ(refusal((dir / "f.json").string()),
            "compare: --noise-floor " + (dir / "f.json").string() +
                ": not JSON (nesting deeper than 128 levels at offset 128); expected a regular file written by "
                "'zlcore compare --calibrate A1 A2 ... --out FILE'");
}

TEST(OutOfRange, ARepeatsCountOutsideIntsRangeIsNoCount) {
  const zltest::TempDir tmp("zl-out-of-range-repeats");
  const fs::path dir = tmp.path();
  const fs::path a = run(dir / "A", 1.0);
  {
    std::ofstream out(a / "results.jsonl");
    out << "{\"op\": \"abs\", \"dtype\": \"float16\", \"shape\": \"[[64, 64]]\", \"latency_ms\": 1.0, "
           "\"repeats\": 1e300}\n"
        << "{\"op\": \"abs\", \"dtype\": \"float16\", \"shape\": \"[[256, 256]]\", \"latency_ms\": 1.0, "
           "\"repeats\": -5}\n";
  }
  const zc::Side side = zc::load_side("A", a.string());
  ASSERT_EQ(side.runs.size(), 1u);
  ASSERT_EQ(side.runs[0].rows.size(), 2u);
  // Not INT_MIN from an out-of-range conversion: the default of a row that says none.
  for (const zc::ResultRow& r : side.runs[0].rows) EXPECT_EQ(r.repeats, 1) << r.shape;
}

// torch's time on side A next to nothing (1e-320 ms, a real double) makes
// a torch A/B control of about 1e-317: a ratio, but one whose percentage is
// no finite number. No format prints inf or nan for it, nor 0.000.
TEST(OutOfRange, AControlPastAnyPercentageIsSaidSoInEveryFormat) {
  const zltest::TempDir tmp("zl-out-of-range-control");
  const fs::path dir = tmp.path();
  run(dir / "A", 1e-3);
  run(dir / "B", 1e-3);
  {
    // A's torch side only.
    std::ifstream in(dir / "A" / "results.jsonl");
    std::stringstream text;
    text << in.rdbuf();
    std::string s = text.str();
    for (size_t at = 0; (at = s.find("\"latency_base_ms\": 0.001", at)) != std::string::npos;) {
      s.replace(at, 24, "\"latency_base_ms\": 1e-320");
    }
    std::ofstream(dir / "A" / "results.jsonl") << s;
  }
  const zc::Report r =
      zc::compare(zc::load_side("A", (dir / "A").string()), zc::load_side("B", (dir / "B").string()), zc::Options{});
  ASSERT_TRUE(r.overall.control.has_value());
  std::ostringstream table, md, csv, json, html;
  zc::write_table(table, r);
  zc::write_markdown(md, r);
  zc::write_csv(csv, r);
  zc::write_json(json, r);
  zc::write_html(html, r);
  const std::string said = "torch's own latency moved by more than any percentage between A and B (geomean A/B 1e-317)";
  for (const auto& [format, out] : std::vector<std::pair<std::string, std::string>>{
           {"table", table.str()}, {"md", md.str()}, {"json", json.str()}, {"html", html.str()}}) {
    EXPECT_NE(out.find(said), std::string::npos) << format << ":\n" << out;
  }
  for (const auto& [format, out] : std::vector<std::pair<std::string, std::string>>{
           {"table", table.str()}, {"md", md.str()}, {"csv", csv.str()}, {"json", json.str()}, {"html", html.str()}}) {
    for (const char* garbage : {"inf", "nan", "INF", "NAN"}) {
      EXPECT_FALSE(std::regex_search(out, std::regex(std::string("\\b") + garbage + "\\b")))
          << format << " says '" << garbage << "':\n"
          << out;
    }
    // 1e-317 is no 0: the control's cells say 1e-317, not 0.000.
    EXPECT_EQ(out.find("0.000"), std::string::npos) << format << ":\n" << out;
  }
  expect_valid_outputs(r);
}
