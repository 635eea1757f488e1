// The verdict rule (docs/compare.md, "Verdicts"). Spread is the whole
// min-to-max range of a side's repeats relative to its median, so requiring
// the gap between the medians to exceed each side's range, each measured in
// that side's own units, is a conservative "the two clouds of samples do not
// overlap" test that needs only what results.jsonl records.
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
  // |a - b| relative to each median: to B's it is |s - 1|, to A's |1 - 1/s|.
  // Measuring both against |s - 1| let a gain whose A samples spanned B's
  // median pass as FASTER (H200, a GEMM whose clocks dropped mid-run: A 0.0532
  // to 0.0586 ms, B 0.0533 ms, s = 1.093 against a 9.3 % spread).
  const double gap_a = std::fabs(1.0 - 1.0 / in.speedup);
  const double gap_b = diff;
  // Ties go to the cautious side: 1.02 - 1 is 0.0200000000000000018 in
  // binary, and a 2 % change must not pass a 2 % threshold on rounding.
  constexpr double kUlps = 1e-12;
  if (diff > in.threshold + kUlps && gap_a > in.spread_a / 100.0 + kUlps && gap_b > in.spread_b / 100.0 + kUlps) {
    return in.speedup > 1.0 ? Verdict::Faster : Verdict::Slower;
  }
  if (diff <= in.threshold + kUlps && noise <= in.threshold + kUlps) return Verdict::Same;
  return Verdict::Noisy;
}

}  // namespace zl::compare
