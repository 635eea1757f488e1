// `compare --calibrate A1 A2 [A3 ...]`: runs (or batches) of the same code
// compared pairwise, so every FASTER or SLOWER is a false verdict. Reports
// the false-verdict rate overall and per op and the noise floor of every
// (op, dtype, shape), and writes the noise-floor file that a later
// `compare --noise-floor F` widens each row's bar with (docs/compare.md,
// "Calibration").
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "zlcore/compare.hpp"

namespace zl::compare {

// The noise-floor file: JSON, the calibration report itself.
inline constexpr const char* kNoiseFloorKind = "zlcore-noise-floor";
inline constexpr int kNoiseFloorVersion = 1;

// One pair of calibration runs compared like an A/B.
struct CalibrationPair {
  size_t a = 0, b = 0;  // indices into Calibration::sides
  std::map<Verdict, size_t> counts;
  std::string caliber;  // the pair's caliber summary line
  size_t caliber_unexpected = 0;
  bool caliber_compared = true;  // false when no run pair could be compared
};

// False verdicts among the rows the test could judge (FASTER, SLOWER, SAME,
// NOISY), for one op or overall ("all").
struct CalibrationRate {
  std::string group;
  size_t tested = 0;          // row comparisons with a tested verdict, over all pairs
  size_t false_verdicts = 0;  // of those, FASTER or SLOWER
  size_t noisy = 0;
  size_t untested = 0;  // UNCONFIRMED or ERROR
  double rate() const { return tested == 0 ? 0 : static_cast<double>(false_verdicts) / static_cast<double>(tested); }
  double noisy_rate() const { return tested == 0 ? 0 : static_cast<double>(noisy) / static_cast<double>(tested); }
};

// The noise floor of one (op, dtype, shape) across the calibration runs.
struct CalibrationRow {
  std::string op, dtype, shape;
  int runs = 0;                           // runs with a usable latency for it
  double mean_ms = 0;                     // over those runs
  double max_log_ratio = 0;               // largest |log(latency_i / latency_j)|: the noise floor
  double spread_pct = 0;                  // largest spread across placements (in-run spread in older runs) of one run
  size_t tested = 0, false_verdicts = 0;  // over the pairs
  double factor = 0;                      // stats::floor_factor(runs, kAlpha)
  double bar = 0;                         // what a compare with the file applies: noise_bar(), fraction
};

struct Calibration {
  std::vector<Side> sides;  // A1, A2, ...
  Options options;          // threshold, --expect-diff, and a noise floor when one was applied
  std::vector<CalibrationPair> pairs;
  CalibrationRate overall;
  std::vector<CalibrationRate> by_op;
  std::vector<CalibrationRow> rows;  // rows seen in at least two runs, by op, dtype, then as measured
  size_t rows_on_repeats = 0;        // row comparisons tested on in-run repeats (older runs)
  std::vector<std::string> notes;
  size_t caliber_unexpected() const;  // over the pairs
};

// Compares every pair (i < j) of `sides`. Throws UsageError on fewer than two.
Calibration calibrate(std::vector<Side> sides, const Options& options);

// The report; write_calibration_json is also the noise-floor file's text.
void write_calibration_table(std::ostream& out, const Calibration& c);
void write_calibration_markdown(std::ostream& out, const Calibration& c);
void write_calibration_csv(std::ostream& out, const Calibration& c);
void write_calibration_json(std::ostream& out, const Calibration& c);

}  // namespace zl::compare
