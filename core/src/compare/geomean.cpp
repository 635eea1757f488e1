// Geometric means of speedups and their intervals. The geometric mean is the
// one average of ratios for which A/B and B/A agree. Its interval is a
// two-stage bootstrap: draw the rows with replacement, and give each drawn
// row its own measurement noise. The first stage asks how far the mean would
// move over other shapes like these; the second carries the noise of each
// row's placements, which a single row or a handful would otherwise hide.
// Counting the rows' noise at both stages errs wide, never narrow.
//
// The second stage is drawn from a normal with the variance that resampling
// a row's values would give its log speedup (the delta method), one draw per
// replicate for the sum of the drawn rows. Resampling the values themselves
// inside every replicate cost a minute on 10,000 rows of 16 placements, for
// the same first two moments.
#include <algorithm>
#include <cmath>

#include "zlcore/compare.hpp"
#include "zlcore/compare_stats.hpp"

namespace zl::compare {
namespace {

// Variance of log(mean of a resample of v): the plug-in variance of the mean
// (divisor n, as resampling has), relative to the mean squared. That is the
// same for v scaled, so the values are divided by their largest first: sums
// of latencies near 1e308 would overflow to infinity, and the interval to NaN.
double log_mean_resample_variance(const std::vector<double>& v) {
  const double n = static_cast<double>(v.size());
  const double top = *std::max_element(v.begin(), v.end());
  if (!(top > 0) || !std::isfinite(top)) return 0;
  double mean = 0;
  for (double x : v) mean += x / top;
  mean /= n;
  double ss = 0;
  for (double x : v) ss += (x / top - mean) * (x / top - mean);
  return ss / n / n / (mean * mean);
}

}  // namespace

Geomean geomean(const std::string& group, const std::vector<const Compared*>& rows) {
  Geomean g;
  g.group = group;
  double log_sum = 0, control_log_sum = 0;
  size_t controls = 0;
  // Log speedup and its noise variance side by side: the replicate loop
  // reads both for a random row, one cache line rather than two.
  struct LogRow {
    double log, variance;
  };
  std::vector<LogRow> logs;
  std::string keys;
  for (const Compared* c : rows) {
    // A ratio of two empty graphs' replay times says nothing about kernels.
    if (!c->speedup || c->verdict == Verdict::NoWork) continue;
    // A host-paced row moves between processes far past the noise the
    // second stage draws for it: one such row set the overall answer of an
    // H100 comparison (1.033 over 123 rows; 0.999 without its 7).
    if (c->host_paced) {
      ++g.host_paced;
      continue;
    }
    ++g.rows;
    const bool noise = !c->values_a.empty() && !c->values_b.empty();
    logs.push_back({std::log(*c->speedup),
                    noise ? log_mean_resample_variance(c->values_a) + log_mean_resample_variance(c->values_b) : 0.0});
    log_sum += logs.back().log;
    keys += c->op + '\x1f' + c->dtype + '\x1f' + c->shape + '\x1e';
    if (c->control) {
      ++controls;
      control_log_sum += std::log(*c->control);
    }
  }
  if (g.rows > 0) g.speedup = std::exp(log_sum / static_cast<double>(g.rows));
  if (controls > 0) g.control = std::exp(control_log_sum / static_cast<double>(controls));
  // One row with no noise to draw has no interval to speak of.
  if (logs.empty() || (logs.size() == 1 && logs[0].variance == 0)) return g;

  // Seeded by the rows' keys: the same rows give the same interval, whichever
  // group they form ("all" and a batch's only op agree) and whatever else
  // the report holds.
  stats::Rng rng(stats::seed_of(keys.data(), keys.size()));
  std::vector<double> reps(kBootstrapReplicates);
  const double n = static_cast<double>(logs.size());
  for (double& rep : reps) {
    double sum = 0, variance = 0;
    for (size_t k = 0; k < logs.size(); ++k) {
      const LogRow& r = logs[rng.below(logs.size())];
      sum += r.log;
      variance += r.variance;
    }
    rep = (sum + std::sqrt(variance) * rng.normal()) / n;
  }
  // A replicate that is not a number would break the sort's ordering; the
  // rows' values are finite, so this is the last guard, not the rule.
  if (!std::all_of(reps.begin(), reps.end(), [](double x) { return std::isfinite(x); })) return g;
  std::sort(reps.begin(), reps.end());
  // Percentile interval: kAlpha / 2 of the replicates below it, as many above.
  const size_t tail = static_cast<size_t>(std::floor(kAlpha / 2 * kBootstrapReplicates));
  const double lo = std::exp(reps[tail]), hi = std::exp(reps[reps.size() - 1 - tail]);
  if (std::isfinite(lo) && std::isfinite(hi) && lo > 0) {
    g.lo = lo;
    g.hi = hi;
  }
  return g;
}

}  // namespace zl::compare
