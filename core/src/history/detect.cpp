// Step detection in one series: a piecewise-constant fit by binary
// segmentation, each side's level the weighted median of its points, each
// point weighted by the inverse of its variance (its own interval plus the
// run-to-run noise learned from the series), a split kept only when both
// sides hold --min-runs runs, its z clears a level corrected for the split
// positions tried and the change clears the threshold. docs/history.md,
// "The method".
#include <algorithm>
#include <cmath>

#include "row_summary.hpp"
#include "zlcore/history.hpp"

namespace zl::history {
namespace {

// Below this a series is taken as noiseless only by accident of rounding.
constexpr double kMinNoise = 0.002;
// The standard error of a normal sample's median against its mean's.
constexpr double kMedianSe = 1.2533;

// The z whose two-sided tail is p: bisection on erfc, exact enough here.
double z_for_tail(double p) {
  double lo = 0, hi = 40;
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    (std::erfc(mid / std::sqrt(2.0)) > p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

struct Weighted {
  std::vector<double> y, w;  // log values and inverse variances
  std::vector<size_t> run;
};

struct Split {
  size_t at = 0;  // first index of the right part
  double z = 0, level_l = 0, level_r = 0;
};

// The weighted median of y[a, b): a level that one run caught on a busy
// machine does not move, where a mean would follow it.
double weighted_median(const Weighted& s, size_t a, size_t b, double& total) {
  std::vector<std::pair<double, double>> v;
  total = 0;
  for (size_t i = a; i < b; ++i) v.push_back({s.y[i], s.w[i]}), total += s.w[i];
  std::sort(v.begin(), v.end());
  double acc = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    acc += v[i].second;
    if (acc * 2 == total && i + 1 < v.size()) return (v[i].first + v[i + 1].first) / 2;
    if (acc * 2 > total) return v[i].first;
  }
  return v.back().first;
}

// The weighted absolute deviations of y[a, b) from `level`.
double l1_cost(const Weighted& s, size_t a, size_t b, double level) {
  double c = 0;
  for (size_t i = a; i < b; ++i) c += s.w[i] * std::fabs(s.y[i] - level);
  return c;
}

// Where to split: the least weighted absolute deviation from the two
// sides' medians (a median's z is nearly as large one run off the change,
// the cost is not); whether to split: that split's z.
Split best_split(const Weighted& s, size_t a, size_t b, const DetectOptions& opt, size_t& tried) {
  Split best;
  double best_cost = 0;
  tried = 0;
  const size_t m = std::max<size_t>(opt.min_runs, 1);
  for (size_t k = a + m; k + m <= b; ++k) {
    ++tried;
    double wl = 0, wr = 0;
    const double ml = weighted_median(s, a, k, wl), mr = weighted_median(s, k, b, wr);
    if (std::fabs(std::exp(mr - ml) - 1) < opt.threshold) continue;
    const double cost = l1_cost(s, a, k, ml) + l1_cost(s, k, b, mr);
    if (best.z > 0 && cost >= best_cost) continue;
    best = {k, std::fabs(mr - ml) / (kMedianSe * std::sqrt(1 / wl + 1 / wr)), ml, mr};
    best_cost = cost;
  }
  return best;
}

void segment_steps(const Weighted& s, size_t a, size_t b, const DetectOptions& opt, std::vector<Step>& out) {
  size_t tried = 0;
  const Split sp = best_split(s, a, b, opt, tried);
  if (tried == 0 || sp.z == 0) return;
  if (sp.z < z_for_tail(opt.alpha / static_cast<double>(tried))) return;
  segment_steps(s, a, sp.at, opt, out);
  Step st;
  st.last_good = s.run[sp.at - 1];
  st.first_bad = s.run[sp.at];
  st.before_ms = std::exp(sp.level_l);
  st.after_ms = std::exp(sp.level_r);
  st.change = std::exp(sp.level_r - sp.level_l) - 1;
  st.z = sp.z;
  out.push_back(st);
  segment_steps(s, sp.at, b, opt, out);
}

}  // namespace

SeriesResult detect(const std::vector<Point>& points, const std::vector<double>& pace, double floor,
                    const DetectOptions& opt) {
  SeriesResult res;
  size_t start = 0;
  double noise_sum = 0;
  size_t noise_n = 0;
  while (start < points.size()) {
    size_t end = start + 1;
    while (end < points.size() && points[end].segment == points[start].segment) ++end;
    if (end < points.size()) res.breaks.push_back({points[end].run, points[start].segment, points[end].segment});
    Weighted s;
    for (size_t i = start; i < end; ++i) {
      const Point& p = points[i];
      const double shift = opt.pace && p.run < pace.size() ? pace[p.run] : 0;
      s.y.push_back(std::log(p.value_ms) - shift);
      s.run.push_back(p.run);
    }
    const double noise = std::max({learned_noise(s.y), floor, kMinNoise});
    noise_sum += noise;
    ++noise_n;
    for (size_t i = start; i < end; ++i) {
      const Point& p = points[i];
      const double own = (p.hi_ms - p.lo_ms) / (2 * kZ95 * p.value_ms);
      s.w.push_back(1 / (own * own + noise * noise));
    }
    segment_steps(s, 0, s.y.size(), opt, res.steps);
    start = end;
  }
  res.noise = noise_n ? noise_sum / static_cast<double>(noise_n) : 0;
  return res;
}

}  // namespace zl::history
