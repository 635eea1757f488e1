// The verdict rule (docs/compare.md, "Verdicts"). Spread is the whole
// min-to-max range of a side's repeats relative to its median, so requiring
// the gap between medians to exceed the noisier side's range is a
// conservative "the two clouds of samples do not overlap" test that needs
// only what results.jsonl records.
#include <algorithm>
#include <cmath>

#include "zlcore/compare.hpp"

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

Verdict decide(const VerdictInputs& in) {
  if (!std::isfinite(in.speedup) || in.speedup <= 0) return Verdict::Error;
  // One measurement per side has no spread to judge noise by.
  if (in.repeats_a < 2 || in.repeats_b < 2) return Verdict::Unconfirmed;
  const double diff = std::fabs(in.speedup - 1.0);
  const double noise = std::max(in.spread_a, in.spread_b) / 100.0;
  // Ties go to the cautious side: 1.02 - 1 is 0.0200000000000000018 in
  // binary, and a 2 % change must not pass a 2 % threshold on rounding.
  constexpr double kUlps = 1e-12;
  if (diff > in.threshold + kUlps && diff > noise + kUlps) return in.speedup > 1.0 ? Verdict::Faster : Verdict::Slower;
  if (diff <= in.threshold + kUlps && noise <= in.threshold + kUlps) return Verdict::Same;
  return Verdict::Noisy;
}

}  // namespace zl::compare
