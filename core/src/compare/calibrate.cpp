// Calibration from A/A runs (compare_calibrate.hpp): every pair of runs of
// the same code compared with the A/B rule, so any FASTER or SLOWER is a
// false verdict, and each row's noise floor taken as the largest ratio
// between any two runs' latencies (the range of the log latencies).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "text.hpp"
#include "zlcore/compare_calibrate.hpp"
#include "zlcore/compare_stats.hpp"
#include "zlcore/errors.hpp"

namespace zl::compare {
namespace {

using Key = std::tuple<std::string, std::string, std::string>;

bool false_verdict(Verdict v) { return v == Verdict::Faster || v == Verdict::Slower; }

void count(CalibrationRate& rate, Verdict v) {
  if (!tested(v)) {
    ++rate.untested;
    return;
  }
  ++rate.tested;
  rate.false_verdicts += false_verdict(v);
  rate.noisy += v == Verdict::Noisy;
}

struct Seen {
  std::vector<double> log_ms;
  double sum_ms = 0;
  double spread_pct = 0;
};

}  // namespace

size_t Calibration::caliber_unexpected() const {
  size_t n = 0;
  for (const CalibrationPair& p : pairs) n += p.caliber_unexpected;
  return n;
}

Calibration calibrate(std::vector<Side> sides, const Options& options) {
  if (sides.size() < 2) {
    throw UsageError("compare --calibrate: needs at least two runs or batches of the same code, got " +
                     std::to_string(sides.size()));
  }
  Calibration cal;
  cal.options = options;
  cal.overall.group = "all";
  std::map<std::string, CalibrationRate> by_op;
  std::map<Key, std::pair<size_t, size_t>> row_verdicts;  // tested, false

  for (size_t i = 0; i < sides.size(); ++i) {
    for (size_t j = i + 1; j < sides.size(); ++j) {
      const Report r = compare(sides[i], sides[j], options);
      CalibrationPair pair;
      pair.a = i;
      pair.b = j;
      pair.counts = r.counts;
      pair.caliber = text::caliber_summary(r);
      pair.caliber_unexpected = r.caliber.unexpected();
      pair.caliber_compared = r.caliber.pairs > 0;
      cal.pairs.push_back(pair);
      cal.rows_on_repeats += r.rows_on_repeats;
      for (const Compared& c : r.rows) {
        count(cal.overall, c.verdict);
        CalibrationRate& op = by_op[c.op];
        op.group = c.op;
        count(op, c.verdict);
        auto& rv = row_verdicts[{c.op, c.dtype, c.shape}];
        rv.first += tested(c.verdict);
        rv.second += false_verdict(c.verdict);
      }
    }
  }
  for (auto& [name, rate] : by_op) cal.by_op.push_back(rate);

  // Every run's latency of every row: the floor is their range in logs.
  std::vector<Key> order;
  std::map<Key, Seen> seen;
  for (const Side& s : sides) {
    for (const RunInfo& run : s.runs) {
      for (const ResultRow& row : run.rows) {
        if (!row.error.empty() || !row.latency_ms || !std::isfinite(*row.latency_ms) || *row.latency_ms <= 0) continue;
        const Key k{row.op, row.dtype, row.shape};
        auto [it, fresh] = seen.try_emplace(k);
        if (fresh) order.push_back(k);
        it->second.log_ms.push_back(std::log(*row.latency_ms));
        it->second.sum_ms += *row.latency_ms;
        it->second.spread_pct = std::max(it->second.spread_pct, row.spread_pct);
      }
    }
  }
  for (const Key& k : order) {
    const Seen& s = seen[k];
    if (s.log_ms.size() < 2) continue;  // one run bounds nothing
    CalibrationRow row;
    std::tie(row.op, row.dtype, row.shape) = k;
    row.runs = static_cast<int>(s.log_ms.size());
    row.mean_ms = s.sum_ms / static_cast<double>(s.log_ms.size());
    const auto [lo, hi] = std::minmax_element(s.log_ms.begin(), s.log_ms.end());
    row.max_log_ratio = *hi - *lo;
    row.spread_pct = s.spread_pct;
    if (auto it = row_verdicts.find(k); it != row_verdicts.end()) std::tie(row.tested, row.false_verdicts) = it->second;
    row.factor = stats::floor_factor(row.runs, kAlpha);
    row.bar = noise_bar({row.op, row.dtype, row.shape, row.runs, row.max_log_ratio}, options.threshold);
    cal.rows.push_back(row);
  }
  // Groups by op and dtype; shapes as measured within a group, as compare does.
  std::stable_sort(cal.rows.begin(), cal.rows.end(), [](const CalibrationRow& x, const CalibrationRow& y) {
    return std::tie(x.op, x.dtype) < std::tie(y.op, y.dtype);
  });

  if (sides.size() == 2) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "two runs: a bar that a new A/A difference passes %g %% of the time is %.1f times their ratio; "
                  "five runs bring that to %.1f",
                  kAlpha * 100, stats::floor_factor(2, kAlpha), stats::floor_factor(5, kAlpha));
    cal.notes.push_back(buf);
  }
  if (cal.rows_on_repeats > 0) {
    cal.notes.push_back(std::to_string(cal.rows_on_repeats) +
                        " row comparisons had no placement samples and were tested on in-run repeats, "
                        "which cannot see placement variance: expect false verdicts there");
  }
  for (const Side& s : sides) {
    for (const std::string& w : s.warnings) cal.notes.push_back(s.label + ": " + w);
  }
  cal.sides = std::move(sides);
  return cal;
}

}  // namespace zl::compare
