// The statistics of compare_stats.hpp against what they must equal: known
// p-values, a brute-force enumeration of every split (the exact test with
// ties), a permutation estimate (the normal approximation), the duality of
// the interval and the test, and the noise-floor factor's closed form.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "zlcore/compare_stats.hpp"

namespace st = zl::compare::stats;

namespace {

double u_stat(const std::vector<double>& a, const std::vector<double>& b) {
  double u = 0;
  for (double x : a) {
    for (double y : b) u += x > y ? 1 : (x == y ? 0.5 : 0);
  }
  return u;
}

// The exact two-sided p-value by visiting every way to split the pooled
// values into groups of the original sizes.
double brute_force_p(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> pooled(a);
  pooled.insert(pooled.end(), b.begin(), b.end());
  const double m = static_cast<double>(a.size() * b.size());
  const double observed = std::fabs(u_stat(a, b) - m / 2);
  std::vector<bool> pick(pooled.size(), false);
  std::fill(pick.begin(), pick.begin() + static_cast<long>(a.size()), true);
  double total = 0, extreme = 0;
  std::sort(pick.begin(), pick.end());
  do {
    std::vector<double> x, y;
    for (size_t i = 0; i < pooled.size(); ++i) (pick[i] ? x : y).push_back(pooled[i]);
    ++total;
    if (std::fabs(u_stat(x, y) - m / 2) >= observed - 1e-9) ++extreme;
  } while (std::next_permutation(pick.begin(), pick.end()));
  return extreme / total;
}

std::vector<double> draw(st::Rng& rng, size_t n, double scale, int rounding) {
  std::vector<double> v(n);
  for (double& x : v) {
    x = scale * (1 + 0.01 * rng.normal());
    if (rounding > 0) x = std::round(x * rounding) / rounding;  // coarse values tie
  }
  return v;
}

}  // namespace

TEST(Rng, SameSeedSameDrawsAndUnbiasedBelow) {
  st::Rng a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.next(), b.next());
  EXPECT_NE(st::Rng(42).next(), c.next());
  // below(7): each value near 1/7 of 70,000 draws (5 sd of a binomial is ~450).
  st::Rng r(7);
  std::vector<int> hits(7);
  for (int i = 0; i < 70000; ++i) ++hits[r.below(7)];
  for (int h : hits) EXPECT_NEAR(h, 10000, 450);
  double sum = 0, sq = 0;
  for (int i = 0; i < 100000; ++i) {
    const double z = r.normal();
    sum += z;
    sq += z * z;
  }
  EXPECT_NEAR(sum / 1e5, 0, 0.02);
  EXPECT_NEAR(sq / 1e5, 1, 0.02);
  EXPECT_NEAR(st::normal_quantile(0.995), 2.5758293, 1e-6);
  EXPECT_NEAR(st::normal_cdf(st::normal_quantile(0.01)), 0.01, 1e-12);
}

TEST(MannWhitney, KnownExactValues) {
  // R: wilcox.test(1:5, 6:10) gives p = 0.007937 = 2 / C(10, 5).
  st::RankTest t = st::mann_whitney({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
  EXPECT_TRUE(t.exact);
  EXPECT_EQ(t.u_a, 0);
  EXPECT_NEAR(t.p_value, 2.0 / 252, 1e-15);
  EXPECT_FALSE(t.a_larger());
  // 4 against 4 cannot go below 2 / C(8, 4) = 0.029: why a side needs 5.
  EXPECT_NEAR(st::mann_whitney({5, 6, 7, 8}, {1, 2, 3, 4}).p_value, 2.0 / 70, 1e-15);
  EXPECT_TRUE(st::mann_whitney({5, 6, 7, 8}, {1, 2, 3, 4}).a_larger());
  // Identical samples: nothing to tell apart.
  EXPECT_EQ(st::mann_whitney({1, 1, 1, 1, 1}, {1, 1, 1, 1, 1}).p_value, 1.0);
  EXPECT_EQ(st::mann_whitney({}, {1, 2}).p_value, 1.0);
}

TEST(MannWhitney, ExactWithTiesEqualsEnumeratingEverySplit) {
  st::Rng rng(11);
  for (int trial = 0; trial < 60; ++trial) {
    const size_t na = 3 + rng.below(5), nb = 3 + rng.below(5);
    // Rounded to a 1 % grid: many ties, as rows recorded to few digits have.
    const std::vector<double> a = draw(rng, na, 1.0, 100), b = draw(rng, nb, 1.0 + 0.01 * (trial % 3), 100);
    const st::RankTest t = st::mann_whitney(a, b);
    ASSERT_TRUE(t.exact);
    EXPECT_NEAR(t.u_a, u_stat(a, b), 1e-12);
    EXPECT_NEAR(t.p_value, brute_force_p(a, b), 1e-12) << "trial " << trial;
    EXPECT_NEAR(st::mann_whitney(b, a).p_value, t.p_value, 1e-12);  // symmetric
  }
}

TEST(MannWhitney, NormalApproximationAgreesWithPermutations) {
  // Above kExactMaxPooled values: the tie- and continuity-corrected normal
  // approximation against 20,000 seeded random splits.
  st::Rng rng(5);
  for (int trial = 0; trial < 4; ++trial) {
    const std::vector<double> a = draw(rng, 30, 1.0, trial % 2 ? 200 : 0);
    const std::vector<double> b = draw(rng, 31, 1.004, trial % 2 ? 200 : 0);
    const st::RankTest t = st::mann_whitney(a, b);
    ASSERT_FALSE(t.exact);
    std::vector<double> pooled(a);
    pooled.insert(pooled.end(), b.begin(), b.end());
    const double m = 30.0 * 31.0, observed = std::fabs(u_stat(a, b) - m / 2);
    int extreme = 0;
    constexpr int kPerms = 20000;
    for (int k = 0; k < kPerms; ++k) {
      for (size_t i = pooled.size() - 1; i > 0; --i) std::swap(pooled[i], pooled[rng.below(i + 1)]);
      const std::vector<double> x(pooled.begin(), pooled.begin() + 30), y(pooled.begin() + 30, pooled.end());
      extreme += std::fabs(u_stat(x, y) - m / 2) >= observed - 1e-9;
    }
    EXPECT_NEAR(t.p_value, extreme / static_cast<double>(kPerms), 0.015) << "trial " << trial;
  }
}

TEST(RatioInterval, SmallestSamplesAndTheShiftItCovers) {
  // 5 against 5 at 0.01: the critical count is 0, so the interval runs from
  // the smallest to the largest pairwise ratio.
  auto ci = st::ratio_interval({10, 11, 12, 13, 14}, {5, 6, 7, 8, 9}, 0.01);
  ASSERT_TRUE(ci);
  EXPECT_NEAR(ci->lo, 10.0 / 9, 1e-12);
  EXPECT_NEAR(ci->hi, 14.0 / 5, 1e-12);
  EXPECT_FALSE(st::ratio_interval({1, 2, 3, 4}, {1, 2, 3, 4}, 0.01));  // 4 a side: no interval at 1 %
  EXPECT_TRUE(st::ratio_interval({1, 2, 3, 4}, {1, 2, 3, 4}, 0.05));
  // A side exactly scaled by 1.03: the interval holds 1.03.
  const std::vector<double> b{1.0, 1.01, 0.99, 1.02, 0.98, 1.005, 0.995, 1.015};
  std::vector<double> a;
  for (double x : b) a.push_back(1.03 * x);
  ci = st::ratio_interval(a, b, 0.01);
  ASSERT_TRUE(ci);
  EXPECT_LE(ci->lo, 1.03);
  EXPECT_GE(ci->hi, 1.03);
}

TEST(RatioInterval, ExcludesOneExactlyWhenTheTestRejects) {
  // The interval is the set of ratios the test accepts, so "1 outside the
  // interval" and "p <= alpha" must agree, exact and approximate alike.
  st::Rng rng(3);
  int rejected = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const size_t na = 5 + rng.below(trial % 2 ? 40 : 12), nb = 5 + rng.below(trial % 2 ? 40 : 12);
    const double shift = 1 + 0.004 * static_cast<double>(rng.below(4));
    const std::vector<double> a = draw(rng, na, shift, 0), b = draw(rng, nb, 1.0, 0);
    for (double alpha : {0.01, 0.05}) {
      const auto ci = st::ratio_interval(a, b, alpha);
      ASSERT_TRUE(ci);
      const bool excludes = ci->lo > 1 || ci->hi < 1;
      const st::RankTest t = st::mann_whitney(a, b);
      EXPECT_EQ(excludes, t.p_value <= alpha * (1 + 1e-12))
          << "n " << na << "/" << nb << " p " << t.p_value << " ci " << ci->lo << ".." << ci->hi;
      rejected += excludes;
    }
  }
  EXPECT_GT(rejected, 500);  // the check saw both outcomes
}

TEST(FloorFactor, ClosedFormForTwoRunsAndRangeMeans) {
  // Two runs: D / R is a ratio of independent normals, Cauchy: f = tan(pi/2 (1 - alpha)).
  EXPECT_NEAR(st::floor_factor(2, 0.01), std::tan(M_PI / 2 * 0.99), 0.05);
  EXPECT_NEAR(st::floor_factor(2, 0.05), std::tan(M_PI / 2 * 0.95), 0.01);
  // d2 of control charts.
  EXPECT_NEAR(st::expected_normal_range(2), 1.128, 1e-3);
  EXPECT_NEAR(st::expected_normal_range(3), 1.693, 1e-3);
  EXPECT_NEAR(st::expected_normal_range(5), 2.326, 1e-3);
  EXPECT_NEAR(st::expected_normal_range(10), 3.078, 1e-3);
  double previous = INFINITY;
  for (int n = 2; n <= 12; ++n) {
    const double f = st::floor_factor(n, 0.01);
    EXPECT_LT(f, previous);  // more runs, a tighter bar
    previous = f;
  }
  EXPECT_TRUE(std::isinf(st::floor_factor(1, 0.01)));
}

TEST(FloorFactor, ANewAADifferencePassesTheBarAtRateAlpha) {
  // Simulated: n runs give a range R, a new pair a difference D; D passes
  // f * R with probability alpha.
  st::Rng rng(99);
  for (int n : {3, 5, 8}) {
    const double f = st::floor_factor(n, 0.01);
    constexpr int kTrials = 200000;
    int passes = 0;
    for (int t = 0; t < kTrials; ++t) {
      double lo = INFINITY, hi = -INFINITY;
      for (int i = 0; i < n; ++i) {
        const double x = rng.normal();
        lo = std::min(lo, x);
        hi = std::max(hi, x);
      }
      passes += std::fabs(rng.normal() - rng.normal()) > f * (hi - lo);
    }
    // 0.01 +- 4 sd of a binomial over 200,000 trials (0.00089).
    EXPECT_NEAR(passes / static_cast<double>(kTrials), 0.01, 0.0009) << "n = " << n << ", f = " << f;
  }
}
