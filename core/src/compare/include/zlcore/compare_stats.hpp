// The statistics behind compare's verdicts (docs/compare.md, "The method"):
// a seeded random number generator, so bootstrap intervals and golden files
// come out the same on every run and machine; the two-sample Mann-Whitney U
// test; the distribution-free interval of a ratio that inverts that test; and
// the factor that turns an A/A noise floor into a bar.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace zl::compare::stats {

// xoshiro256** seeded through splitmix64. The standard library's engines are
// portable but its distributions are not (libstdc++ and libc++ map the same
// bits to different numbers), so every draw is made here.
class Rng {
 public:
  explicit Rng(uint64_t seed);
  uint64_t next();
  double uniform();        // in [0, 1)
  size_t below(size_t n);  // uniform in [0, n), unbiased; n > 0
  double normal();         // standard normal (Box-Muller)

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
  bool has_spare_ = false;
  double spare_ = 0;
};

// next() and below() are here, inline: the geomean bootstrap calls below()
// 10^8 times on a 10,000-row report, and a call per draw doubled its cost.
inline uint64_t Rng::next() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

inline size_t Rng::below(size_t n) {
  // Lemire's multiply-and-reject: no modulo bias, and no division in the
  // common case.
  const uint64_t bound = n;
  unsigned __int128 m = static_cast<unsigned __int128>(next()) * bound;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < bound) {
    const uint64_t reject_below = (0 - bound) % bound;
    while (low < reject_below) {
      m = static_cast<unsigned __int128>(next()) * bound;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<size_t>(m >> 64);
}

// A stable 64-bit hash of a text (FNV-1a), to seed one Rng per purpose, so a
// group's interval does not move when rows of another group come or go.
uint64_t seed_of(const char* text, size_t size);

// Standard normal distribution function and its inverse.
double normal_cdf(double z);
double normal_quantile(double p);

struct RankTest {
  size_t n_a = 0, n_b = 0;
  double u_a = 0;      // pairs (a, b) with a > b; ties count one half
  double p_value = 1;  // two-sided
  bool exact = false;  // exact null distribution (given the ties), else normal approximation
  // u_a above its null mean n_a n_b / 2: A's values tend to be the larger.
  bool a_larger() const { return 2 * u_a > static_cast<double>(n_a * n_b); }
};

// Pooled sizes up to this get the exact null distribution; above it the
// normal approximation (tie- and continuity-corrected) is within a few
// percent of the exact p-value and the exact table gets costly.
inline constexpr size_t kExactMaxPooled = 50;

// Two-sided Mann-Whitney U test of "a and b are draws from one distribution".
// Exact (the distribution of A's rank sum over every split of the pooled
// midranks, so ties are handled exactly) up to kExactMaxPooled values.
RankTest mann_whitney(const std::vector<double>& a, const std::vector<double>& b);

struct Interval {
  double lo = 1, hi = 1;
};

// The Hodges-Lehmann (Moses) interval, at confidence 1 - alpha, of the ratio
// r in "a is distributed as r * b": the ratios the two-sided rank test at
// level alpha does not reject, read off the sorted pairwise log ratios
// log a_i - log b_j. Distribution-free: covers the true ratio with
// probability at least 1 - alpha whenever one side is the other scaled.
// Values must be positive. nullopt when the sizes are too small for the
// test to reject anything at that level.
std::optional<Interval> ratio_interval(const std::vector<double>& a, const std::vector<double>& b, double alpha);

// Mean of the range of n independent standard normal draws (the "d2" of
// control charts): 1.128 for 2, 1.693 for 3, 2.326 for 5.
double expected_normal_range(int n);

// The factor f for which a new A/A difference, drawn like the calibration
// runs, exceeds f times their range with probability alpha: the solution of
// P(|D| > f R) = alpha where D ~ N(0, 2 s^2) and R is the range of n draws of
// N(0, s^2), computed by numerical integration (so the randomness of R itself
// is paid for). 63.7 for n = 2 at alpha = 0.01, 7.5 for 3, 2.7 for 5.
double floor_factor(int runs, double alpha);

}  // namespace zl::compare::stats
