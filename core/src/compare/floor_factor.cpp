// The noise-floor factor (compare_stats.hpp, floor_factor): how many times
// the range of n A/A runs a new A/A difference exceeds with probability
// alpha, if run-to-run effects are normal. Computed by integration rather
// than taken from a table so that any number of runs works and the test can
// check it against the closed form for two runs.
#include <cmath>
#include <map>
#include <mutex>
#include <vector>

#include "zlcore/compare_stats.hpp"

namespace zl::compare::stats {
namespace {

constexpr double kStep = 0.02;  // grid of x and of the range w
constexpr double kXMax = 8.0;   // normal mass beyond is 6e-16; 8 / kStep is even, so grids are odd
constexpr double kWMax = 14.0;  // a range of 14 sd: probability 1 for any n here

double phi(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI); }

// Simpson's rule over an odd number of equally spaced values.
double simpson(const std::vector<double>& f, double h) {
  double s = f.front() + f.back();
  for (size_t i = 1; i + 1 < f.size(); ++i) s += (i % 2 ? 4 : 2) * f[i];
  return s * h / 3;
}

// P(R <= w) on the grid w = i * kStep, R the range of n standard normal
// draws: n * integral of phi(x) (Phi(x + w) - Phi(x))^(n - 1) dx.
std::vector<double> range_cdf(int n) {
  const int xs = 2 * static_cast<int>(kXMax / kStep) + 1;  // odd
  const int ws = static_cast<int>(kWMax / kStep) + 1;
  // Phi on the grid x + w, which is the same grid shifted.
  std::vector<double> cdf(xs + ws);
  for (size_t i = 0; i < cdf.size(); ++i) cdf[i] = normal_cdf(-kXMax + static_cast<double>(i) * kStep);
  std::vector<double> out(ws), f(xs);
  for (int w = 0; w < ws; ++w) {
    for (int x = 0; x < xs; ++x) {
      const double inside = cdf[x + w] - cdf[x];
      f[x] = phi(-kXMax + x * kStep) * std::pow(inside, n - 1);
    }
    out[w] = std::min(1.0, n * simpson(f, kStep));
  }
  return out;
}

double interpolate(const std::vector<double>& grid, double w) {
  const double pos = w / kStep;
  if (pos >= static_cast<double>(grid.size() - 1)) return 1.0;
  const size_t i = static_cast<size_t>(pos);
  const double frac = pos - static_cast<double>(i);
  return grid[i] * (1 - frac) + grid[i + 1] * frac;
}

// P(|D| > f R) = P(R < |D| / f) with |D| = sqrt(2) |Z|:
// the integral over z >= 0 of 2 phi(z) P(R < sqrt(2) z / f).
double exceed_probability(const std::vector<double>& cdf, double f) {
  const int zs = static_cast<int>(kXMax / kStep) + 1;  // odd
  std::vector<double> g(zs);
  for (int i = 0; i < zs; ++i) {
    const double z = i * kStep;
    g[i] = 2 * phi(z) * interpolate(cdf, std::sqrt(2.0) * z / f);
  }
  return simpson(g, kStep);
}

}  // namespace

double expected_normal_range(int n) {
  if (n < 2) return 0;
  // E[R] = integral over w >= 0 of (1 - P(R <= w)).
  const std::vector<double> cdf = range_cdf(n);
  std::vector<double> tail(cdf.size() % 2 ? cdf.size() : cdf.size() - 1);
  for (size_t i = 0; i < tail.size(); ++i) tail[i] = 1 - cdf[i];
  return simpson(tail, kStep);
}

double floor_factor(int runs, double alpha) {
  if (runs < 2 || !(alpha > 0 && alpha < 1)) return INFINITY;
  static std::mutex mutex;
  static std::map<std::pair<int, double>, double> cache;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find({runs, alpha}); it != cache.end()) return it->second;
  const std::vector<double> cdf = range_cdf(runs);
  // The probability falls as f grows: bisect on log f.
  double lo = std::log(0.05), hi = std::log(1e5);
  for (int i = 0; i < 100 && hi - lo > 1e-10; ++i) {
    const double mid = 0.5 * (lo + hi);
    (exceed_probability(cdf, std::exp(mid)) > alpha ? lo : hi) = mid;
  }
  return cache[{runs, alpha}] = std::exp(0.5 * (lo + hi));
}

}  // namespace zl::compare::stats
