// The verdict rule (docs/compare.md, "Verdicts"). FASTER/SLOWER needs two
// things at once: a difference past the bar (the threshold, or the row's
// noise-floor bar), which keeps real but irrelevant differences out, and a two-sided
// Mann-Whitney U test over the per-placement times that rejects "one
// distribution" at kAlpha in the same direction, which keeps noise out. The
// in-run spread never decides: on the H200 it could not see the variation
// across input placements, and three A/A batches read FASTER/SLOWER on
// 16-21 % of rows under a rule built on it: a row's spread is only shown
// (Compared::noise_pct). SAME is two one-sided tests at kEquivalenceAlpha:
// the difference and its (1 - 2 kEquivalenceAlpha) interval both within the
// threshold. Everything else with enough placements is NOISY; fewer than
// kMinSamples per side is UNCONFIRMED.
#include <cmath>

#include "zlcore/compare.hpp"
#include "zlcore/compare_stats.hpp"

namespace zl::compare {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Faster: return "FASTER";
    case Verdict::Slower: return "SLOWER";
    case Verdict::Same: return "SAME";
    case Verdict::Noisy: return "NOISY";
    case Verdict::Unconfirmed: return "UNCONFIRMED";
    case Verdict::Error: return "ERROR";
  }
  return "?";
}

const char* sample_kind_name(SampleKind k) {
  switch (k) {
    case SampleKind::Placements: return "placements";
    case SampleKind::Repeats: return "repeats";
    case SampleKind::None: return "none";
  }
  return "?";
}

SampleKind sample_kind(const ResultRow& r) {
  if (!r.placements_ms.empty()) return SampleKind::Placements;
  return r.samples_ms.empty() ? SampleKind::None : SampleKind::Repeats;
}

const std::vector<double>& test_values(const ResultRow& r) {
  return r.placements_ms.empty() ? r.samples_ms : r.placements_ms;
}

namespace {

bool within(const std::optional<stats::Interval>& ci, double threshold, double ulps) {
  return ci && ci->lo >= 1 - threshold - ulps && ci->hi <= 1 + threshold + ulps;
}

}  // namespace

Decision decide(const VerdictInputs& in) {
  Decision d;
  if (!std::isfinite(in.speedup) || in.speedup <= 0) {
    d.verdict = Verdict::Error;
    return d;
  }
  if (in.a.size() < kMinSamples || in.b.size() < kMinSamples) return d;  // UNCONFIRMED
  const stats::RankTest test = stats::mann_whitney(in.a, in.b);
  d.p_value = test.p_value;
  if (auto ci = stats::ratio_interval(in.a, in.b, kAlpha)) {
    d.ci_lo = ci->lo;
    d.ci_hi = ci->hi;
  }
  // Ties go to the cautious side: 1.02 - 1 is 0.0200000000000000018 in
  // binary, and a 2 % change must not pass a 2 % bar on rounding.
  constexpr double kUlps = 1e-12;
  const double diff = in.speedup - 1.0;
  const bool significant = test.p_value <= kAlpha * (1 + kUlps);
  // The direction must agree too: a mean moved by one outlier placement
  // while the ranks point the other way is no finding.
  if (significant && diff > in.bar + kUlps && test.a_larger()) {
    d.verdict = Verdict::Faster;
  } else if (significant && -diff > in.bar + kUlps && !test.a_larger()) {
    d.verdict = Verdict::Slower;
  } else if (std::fabs(diff) <= in.threshold + kUlps &&
             within(stats::ratio_interval(in.a, in.b, kEquivalenceAlpha), in.threshold, kUlps)) {
    // Against the threshold, never the widened bar: a noise floor raises the
    // evidence a change needs, it does not make a change of 8 % "the same".
    d.verdict = Verdict::Same;
  } else {
    d.verdict = Verdict::Noisy;
  }
  return d;
}

}  // namespace zl::compare
