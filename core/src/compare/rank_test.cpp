// The Mann-Whitney U test and the interval that inverts it (compare_stats.hpp).
// Ranks are kept doubled (a value tied over 1-based positions i..j gets
// i + j), so midranks stay integers and the exact null distribution of a rank
// sum is a table of counts over integer sums, ties included.
#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <numeric>
#include <utility>

#include "zlcore/compare_stats.hpp"

namespace zl::compare::stats {
namespace {

struct Pooled {
  std::vector<long> rank2;  // doubled midrank of each value, a's first, then b's
  bool ties = false;
  double tie_term = 0;  // sum of t^3 - t over groups of t tied values
};

Pooled rank_pooled(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> values(a);
  values.insert(values.end(), b.begin(), b.end());
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return values[x] < values[y]; });
  Pooled p;
  p.rank2.resize(values.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    const long r2 = static_cast<long>(i + 1) + static_cast<long>(j + 1);
    for (size_t k = i; k <= j; ++k) p.rank2[order[k]] = r2;
    const double t = static_cast<double>(j - i + 1);
    if (t > 1) {
      p.ties = true;
      p.tie_term += t * t * t - t;
    }
    i = j + 1;
  }
  return p;
}

// counts[s]: the number of ways to pick n of the items whose doubled ranks
// sum to s. Counts fit a double exactly up to 2^53: C(50, 25) is 1.3e14.
std::vector<double> sum_counts(const std::vector<long>& rank2, size_t n) {
  const long total = std::accumulate(rank2.begin(), rank2.end(), 0L);
  std::vector<std::vector<double>> ways(n + 1, std::vector<double>(static_cast<size_t>(total) + 1, 0.0));
  ways[0][0] = 1;
  long reach = 0;
  size_t seen = 0;
  for (long r : rank2) {
    reach += r;
    ++seen;
    for (size_t j = std::min(n, seen); j >= 1; --j) {
      for (long s = reach; s >= r; --s) ways[j][s] += ways[j - 1][s - r];
    }
  }
  return ways[n];
}

// Without ties the table depends on the sizes alone: K placements a side
// gives the same few tables for every row, so they are computed once.
const std::vector<double>& untied_counts(size_t n, size_t pooled) {
  static std::mutex mutex;
  static std::map<std::pair<size_t, size_t>, std::vector<double>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find({n, pooled});
  if (it != cache.end()) return it->second;
  std::vector<long> rank2(pooled);
  for (size_t i = 0; i < pooled; ++i) rank2[i] = 2 * static_cast<long>(i + 1);
  return cache.emplace(std::make_pair(n, pooled), sum_counts(rank2, n)).first->second;
}

// The largest c with P(U <= c) <= alpha / 2 under the null, -1 when even
// U = 0 is likelier than that. The test rejects iff U <= c or U >= m - c.
long critical_u(size_t n_a, size_t n_b, double alpha) {
  const size_t pooled = n_a + n_b, small = std::min(n_a, n_b);
  const double m = static_cast<double>(n_a * n_b);
  if (pooled <= kExactMaxPooled) {
    const std::vector<double>& counts = untied_counts(small, pooled);
    const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
    const long offset = static_cast<long>(small * (small + 1));  // doubled rank sum at U = 0
    double cum = 0;
    long c = -1;
    // Doubled sums are even without ties: U = (s - offset) / 2.
    for (long s = offset; s < static_cast<long>(counts.size()); s += 2) {
      cum += counts[s];
      if (cum / total > alpha / 2 * (1 + 1e-12)) break;
      c = (s - offset) / 2;
    }
    return c;
  }
  const double sigma = std::sqrt(m * static_cast<double>(pooled + 1) / 12.0);
  return static_cast<long>(std::floor(m / 2 - 0.5 - normal_quantile(1 - alpha / 2) * sigma));
}

}  // namespace

RankTest mann_whitney(const std::vector<double>& a, const std::vector<double>& b) {
  RankTest t;
  t.n_a = a.size();
  t.n_b = b.size();
  if (a.empty() || b.empty()) return t;
  const Pooled p = rank_pooled(a, b);
  const size_t pooled = a.size() + b.size();
  long sum2_a = 0;
  for (size_t i = 0; i < a.size(); ++i) sum2_a += p.rank2[i];
  const long own2_a = static_cast<long>(a.size() * (a.size() + 1));  // doubled n(n+1)/2
  t.u_a = static_cast<double>(sum2_a - own2_a) / 2.0;

  if (pooled <= kExactMaxPooled) {
    // The smaller side's rank sum: the smaller table, and the same two-sided
    // p-value (the two sums add up to a constant).
    const bool a_small = a.size() <= b.size();
    const size_t small = a_small ? a.size() : b.size();
    long sum2 = a_small ? sum2_a : static_cast<long>(pooled * (pooled + 1)) - sum2_a;
    const std::vector<double> tied = p.ties ? sum_counts(p.rank2, small) : std::vector<double>{};
    const std::vector<double>& counts = p.ties ? tied : untied_counts(small, pooled);
    const long mean2 = static_cast<long>(small * (pooled + 1));
    const long dev = std::labs(sum2 - mean2);
    double total = 0, extreme = 0;
    for (long s = 0; s < static_cast<long>(counts.size()); ++s) {
      total += counts[s];
      if (std::labs(s - mean2) >= dev) extreme += counts[s];
    }
    t.p_value = std::min(1.0, extreme / total);
    t.exact = true;
    return t;
  }
  const double n = static_cast<double>(pooled);
  const double m = static_cast<double>(t.n_a * t.n_b);
  const double var = m / 12.0 * ((n + 1) - p.tie_term / (n * (n - 1)));
  if (var <= 0) return t;  // every value tied: nothing to tell apart
  const double z = std::max(0.0, std::fabs(t.u_a - m / 2) - 0.5) / std::sqrt(var);
  t.p_value = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return t;
}

std::optional<Interval> ratio_interval(const std::vector<double>& a, const std::vector<double>& b, double alpha) {
  if (a.empty() || b.empty()) return std::nullopt;
  const long c = critical_u(a.size(), b.size(), alpha);
  if (c < 0) return std::nullopt;
  // U(r) = #{ a_i / r > b_j } = #{ log a_i - log b_j > log r }: the test at
  // ratio r accepts iff c < U(r) < m - c, i.e. the (c+1)-th smallest
  // difference <= log r <= the (c+1)-th largest.
  std::vector<double> log_b(b.size());
  for (size_t j = 0; j < b.size(); ++j) log_b[j] = std::log(b[j]);
  std::vector<double> diffs;
  diffs.reserve(a.size() * b.size());
  for (double x : a) {
    const double log_x = std::log(x);
    for (double lb : log_b) diffs.push_back(log_x - lb);
  }
  const size_t lo = static_cast<size_t>(c), hi = diffs.size() - 1 - static_cast<size_t>(c);
  std::nth_element(diffs.begin(), diffs.begin() + lo, diffs.end());
  const double low = diffs[lo];
  std::nth_element(diffs.begin() + lo, diffs.begin() + hi, diffs.end());
  return Interval{std::exp(low), std::exp(diffs[hi])};
}

}  // namespace zl::compare::stats
