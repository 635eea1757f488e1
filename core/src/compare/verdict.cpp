// The verdict rule (docs/compare.md, "Verdicts"). FASTER/SLOWER needs two
// things at once: a difference past the bar (the threshold, or the row's
// noise-floor bar), which keeps real but irrelevant differences out, and a two-sided
// Mann-Whitney U test over the per-placement times that rejects "one
// distribution" at kAlpha in the same direction, which keeps noise out. The
// in-run spread never decides alone: it cannot see the variation across
// input placements, and A/A batches on a real device read FASTER/SLOWER on
// 16-21 % of rows under a rule built on it (docs/compare.md). SAME is two
// one-sided tests at kEquivalenceAlpha: the difference and its
// (1 - 2 kEquivalenceAlpha) interval both within the threshold. Everything
// else with enough placements is NOISY; fewer than kMinSamples per side is
// UNCONFIRMED.
//
// Guards stand between a rejection and a verdict, all because the test
// assumes the two runs' placements are draws from one distribution while a
// process as a whole can land elsewhere (docs/compare.md, "The guards"): a
// difference within the row's own in-run range of placements is one more
// draw of that range, a difference the torch side of the same row shows
// too is the environment's, not the kernel's, and a side read at its
// power-limited pace in one run and at its held pace in the other compares
// two quantities (which one a run reads flips between runs of the same
// code), and a side timed call by call after its capture failed moves
// with the host's pace between processes, which one run cannot see, as does
// a kernel of launch scale timed with the L2 cleared before each call. All
// only turn FASTER/SLOWER into NOISY. Rows where neither side
// did any work are NO_WORK.
#include <cmath>
#include <string>

#include "text.hpp"
#include "zlcore/compare.hpp"
#include "zlcore/compare_stats.hpp"

namespace zl::compare {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Faster: return "FASTER";
    case Verdict::Slower: return "SLOWER";
    case Verdict::Same: return "SAME";
    case Verdict::Noisy: return "NOISY";
    case Verdict::NoWork: return "NO_WORK";
    case Verdict::Unconfirmed: return "UNCONFIRMED";
    case Verdict::Error: return "ERROR";
  }
  return "?";
}

bool tested(Verdict v) {
  return v == Verdict::Faster || v == Verdict::Slower || v == Verdict::Same || v == Verdict::Noisy;
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

// Why a supported difference is still no finding, or "" when it is one.
std::string guarded(const VerdictInputs& in, const Guards& g) {
  const double moved = std::fabs(in.speedup - 1.0);
  if (g.spread > 0 && moved <= g.spread) {
    return "within the row's in-run spread (" + text::pct(g.spread * 100) + "): one run's placements vary as much";
  }
  if (g.control && std::isfinite(*g.control) && *g.control > 0) {
    const double c = *g.control;
    const bool same_way = (c - 1.0) * (in.speedup - 1.0) > 0;
    // The control must carry at least half the move, and leave the kernel
    // less than the bar: a real 3 % change survives torch jitter of 1 %.
    if (same_way && 2 * std::fabs(c - 1.0) >= moved && std::fabs(in.speedup / c - 1.0) <= in.bar) {
      return "torch's side moved with it (" + text::ratio(c) + "): the environment changed, not the kernel";
    }
    // The same control read in time: the kernel's move is torch's move in
    // microseconds. Only when both kernels, FlagGems' and torch's, are of
    // launch scale in both runs (torch's jitter on a 150 us kernel is 3 us,
    // which would explain away 5 us becoming 8 us), and only when torch
    // itself moved past the bar.
    const double control_moved_ms = g.a_base_ms - g.b_base_ms;
    auto launch_scale = [](double ms) { return ms > 0 && ms < kLaunchScaleMs; };
    const bool all_launch_scale =
        launch_scale(g.a_ms) && launch_scale(g.b_ms) && launch_scale(g.a_base_ms) && launch_scale(g.b_base_ms);
    if (same_way && all_launch_scale && std::fabs(c - 1.0) > in.bar &&
        std::fabs((g.a_ms - control_moved_ms) / g.b_ms - 1.0) <= in.bar) {
      return "torch's side moved by the same time (" + text::signed_us(-control_moved_ms) +
             "): the launch path changed, not the kernel";
    }
  }
  if ((g.call_by_call_a || g.call_by_call_b) && !g.floor_known) {
    return std::string(g.call_by_call_a ? "A" : "B") +
           "'s FlagGems side was timed call by call (its capture failed): its level moves between processes with "
           "the host's pace, past its in-run spread; a noise floor from compare --calibrate can judge it";
  }
  if (g.cold_launch_scale && !g.floor_known) {
    return "timed with the L2 cleared before each call at launch scale (under " +
           std::to_string(std::lround(kLaunchScaleMs * 1e3)) +
           " us): its level moves between processes past its in-run spread; a noise floor from compare "
           "--calibrate can judge it";
  }
  if (g.sustained_a != g.sustained_b) {
    return std::string(g.sustained_a ? "A" : "B") + " was read at its sustained (power-limited) pace, " +
           (g.sustained_a ? "B" : "A") + " at the pace it held: not the same quantity";
  }
  return "";
}

}  // namespace

Decision decide(const VerdictInputs& in, const Guards& guards) {
  Decision d;
  if (!std::isfinite(in.speedup) || in.speedup <= 0) {
    d.verdict = Verdict::Error;
    return d;
  }
  if (guards.no_work) {
    d.verdict = Verdict::NoWork;
    d.why = "no work on either side: both under " + std::to_string(std::lround(kNoWorkMs * 1e6)) + " ns per call";
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
  const bool faster = significant && diff > in.bar + kUlps && test.a_larger();
  const bool slower = significant && -diff > in.bar + kUlps && !test.a_larger();
  if (faster || slower) {
    d.verdict = faster ? Verdict::Faster : Verdict::Slower;
    d.why = guarded(in, guards);
    if (!d.why.empty()) d.verdict = Verdict::Noisy;
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
