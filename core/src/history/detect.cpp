// Step detection in one series: a piecewise-constant fit by binary
// segmentation, each point weighted by the inverse of its variance (its own
// interval plus the run-to-run noise learned from the series), a split kept
// only when its z clears a level corrected for the split positions tried and
// the change clears the threshold. docs/history.md, "The method".
#include <algorithm>
#include <cmath>

#include "zlcore/history.hpp"

namespace zl::history {
namespace {

constexpr double kZ95 = 1.96;
// Below this a series is taken as noiseless only by accident of rounding.
constexpr double kMinNoise = 0.002;

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
  double z = 0, mean_l = 0, mean_r = 0;
};

Split best_split(const Weighted& s, size_t a, size_t b, bool tail_open, double threshold, size_t& tried) {
  Split best;
  tried = 0;
  for (size_t k = a + 2; k <= b - 1; ++k) {
    // The right part needs two points, except at the series' end: a change
    // in the latest run alone is what a nightly gate must see.
    if (b - k < 2 && !(tail_open && k == b - 1)) continue;
    ++tried;
    double wl = 0, sl = 0, wr = 0, sr = 0;
    for (size_t i = a; i < k; ++i) wl += s.w[i], sl += s.w[i] * s.y[i];
    for (size_t i = k; i < b; ++i) wr += s.w[i], sr += s.w[i] * s.y[i];
    const double ml = sl / wl, mr = sr / wr;
    const double z = std::fabs(mr - ml) / std::sqrt(1 / wl + 1 / wr);
    if (std::fabs(std::exp(mr - ml) - 1) < threshold) continue;
    if (z > best.z) best = {k, z, ml, mr};
  }
  return best;
}

void segment_steps(const Weighted& s, size_t a, size_t b, bool tail_open, const DetectOptions& opt,
                   std::vector<Step>& out) {
  if (b - a < 3) return;
  size_t tried = 0;
  const Split sp = best_split(s, a, b, tail_open, opt.threshold, tried);
  if (tried == 0 || sp.z == 0) return;
  if (sp.z < z_for_tail(opt.alpha / static_cast<double>(tried))) return;
  segment_steps(s, a, sp.at, false, opt, out);
  Step st;
  st.last_good = s.run[sp.at - 1];
  st.first_bad = s.run[sp.at];
  st.before_ms = std::exp(sp.mean_l);
  st.after_ms = std::exp(sp.mean_r);
  st.change = std::exp(sp.mean_r - sp.mean_l) - 1;
  st.z = sp.z;
  st.confirmed = b - sp.at >= 2;
  out.push_back(st);
  segment_steps(s, sp.at, b, tail_open, opt, out);
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
    segment_steps(s, 0, s.y.size(), end == points.size(), opt, res.steps);
    start = end;
  }
  res.noise = noise_n ? noise_sum / static_cast<double>(noise_n) : 0;
  return res;
}

}  // namespace zl::history
