#include "text.hpp"

#include <cmath>
#include <cstdio>

namespace zl::compare::text {

std::string ms(const std::optional<double>& v) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", *v);
  return buf;
}

std::string ratio(const std::optional<double>& v) {
  if (!v) return "-";
  if (!std::isfinite(*v)) return "not finite";
  char buf[32];
  // Fixed notation of 1e300 would be 300 digits, cut at the buffer's end;
  // of 1e-317, 0.000, which reads as no time at all.
  const double m = std::fabs(*v);
  std::snprintf(buf, sizeof buf, m < 1e6 && (m >= 1e-3 || m == 0) ? "%.3f" : "%.3g", *v);
  return buf;
}

std::string pct(double v) {
  // A calibrated bar from two runs of a row that moved 2.6x is 10^28 %:
  // fixed notation would pass any buffer and lose the sign that it is a percentage.
  if (!std::isfinite(v)) return "not finite";
  char buf[32];
  if (std::fabs(v) < 1e6) {
    std::snprintf(buf, sizeof buf, "%.1f%%", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.3g%%", v);
  }
  return buf;
}

std::string signed_us(double ms) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%+.3g us", ms * 1000.0);
  return buf;
}

std::string geo(const Geomean& g) { return g.rows == 0 ? "-" : ratio(g.speedup); }

std::string interval(const std::optional<double>& lo, const std::optional<double>& hi) {
  if (!lo || !hi) return "-";
  return "[" + ratio(lo) + ", " + ratio(hi) + "]";
}

std::string geo_interval(const Geomean& g) { return g.rows == 0 ? "-" : interval(g.lo, g.hi); }

std::string p_value(const std::optional<double>& p) {
  if (!p) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", *p);
  return buf;
}

double round_sig(double v, int digits) {
  if (v == 0 || !std::isfinite(v)) return v;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return std::strtod(buf, nullptr);
}

std::string side_line(const Side& s) {
  if (!s.batch) {
    const RunInfo& r = s.runs.front();
    return s.path + " (run " + (r.run_id.empty() ? r.op : r.run_id) + ")";
  }
  return s.path + " (batch, " + std::to_string(s.runs.size()) + " run" + (s.runs.size() == 1 ? "" : "s") + ")";
}

std::vector<std::string> legend(const Report& r) {
  std::vector<std::string> lines{
      "speedup = A ms / B ms on the FlagGems side: FASTER means B is faster than A (speedup > 1), "
      "SLOWER means B is slower",
  };
  for (const std::string& l : method_lines(r.options)) lines.push_back(l);
  lines.push_back(
      "torch A/B is the same ratio for torch's own kernel, a control: far from 1 means the environment moved");
  if (std::string nf = noise_floor_line(r); !nf.empty()) lines.push_back(nf);
  if (std::string rep = repeats_line(r); !rep.empty()) lines.push_back(rep);
  return lines;
}

std::string method_name() {
  char buf[160];
  std::snprintf(buf, sizeof buf, "two-sided Mann-Whitney U test on per-placement times, alpha = %g, plus the bar",
                kAlpha);
  return buf;
}

std::vector<std::string> method_lines(const Options& o) {
  char test[200], rate[120], interval[300], rule[300];
  std::snprintf(test, sizeof test,
                "verdict: FASTER/SLOWER when a two-sided Mann-Whitney U test on both sides' per-placement times "
                "rejects at alpha = %g in the direction of the speedup",
                kAlpha);
  std::snprintf(rate, sizeof rate, ": nominal false FASTER/SLOWER rate <= %g %% per row of identical code",
                kAlpha * 100);
  std::string bar = " and |speedup - 1| is past the bar (threshold " + pct(o.threshold * 100);
  if (o.noise_floor) bar += ", or the row's noise-floor bar";
  if (o.process_guards) bar += "; and past the row's in-run spread";
  bar += ") and not matched by torch's side of the row";
  if (o.process_guards) bar += ", and the side read at one pace (held or sustained) in both";
  std::snprintf(interval, sizeof interval,
                "interval: %g %% Hodges-Lehmann interval of the speedup (the ratios that test does not reject); "
                "geomean: %g %% two-stage bootstrap (rows, then each row's placement noise), %d seeded replicates",
                kConfidence * 100, kConfidence * 100, kBootstrapReplicates);
  std::snprintf(rule, sizeof rule,
                "SAME: speedup and interval within the threshold; NOISY: cannot tell; NO_WORK: both sides under "
                "%g ns per call; UNCONFIRMED: fewer than %zu samples on a side, the test needs %zu",
                kNoWorkMs * 1e6, kMinSamples, kMinSamples);
  return {test + bar + rate, interval, rule};
}

std::string noise_floor_line(const Report& r) {
  const auto& nf = r.options.noise_floor;
  if (!nf) return "";
  return "noise floor applied: " + nf->path + " (sha256 " + nf->sha256.substr(0, 16) + ", " +
         std::to_string(nf->calibration_runs) + " calibration runs): " + std::to_string(r.rows_with_floor) + " of " +
         std::to_string(r.rows.size()) + " rows known, " + std::to_string(r.rows_widened) +
         " with a bar above the threshold";
}

std::string repeats_line(const Report& r) {
  if (r.rows_on_repeats == 0) return "";
  return std::to_string(r.rows_on_repeats) + " row" + (r.rows_on_repeats == 1 ? " has" : "s have") +
         " no placement samples (older runs): tested on in-run repeats, which cannot see placement variance";
}

bool shows_peak(const Report& r) {
  for (const Compared& c : r.rows) {
    if (c.a_pct_bw || c.b_pct_bw || c.a_pct_fp || c.b_pct_fp) return true;
  }
  return false;
}

std::string peak(const Compared& c) {
  auto pair = [](const char* what, const std::optional<double>& a, const std::optional<double>& b) -> std::string {
    if (!a && !b) return "";
    auto one = [](const std::optional<double>& v) {
      char buf[32];
      if (!v) return std::string("-");
      std::snprintf(buf, sizeof buf, "%.0f", *v);
      return std::string(buf);
    };
    return std::string(what) + " " + one(a) + "/" + one(b) + " %";
  };
  std::string bw = pair("bw", c.a_pct_bw, c.b_pct_bw), fp = pair("fp", c.a_pct_fp, c.b_pct_fp);
  if (bw.empty() && fp.empty()) return "-";
  return bw + (bw.empty() || fp.empty() ? "" : "  ") + fp;
}

bool shows_bar(const Report& r) { return r.rows_widened > 0 || r.options.noise_floor != nullptr; }

std::string where(const Difference& d, const Caliber& c) {
  if (c.pairs > 1 && d.ops.size() == c.pairs) return "all ops";
  std::string out;
  for (const std::string& op : d.ops) out += (out.empty() ? "" : ", ") + op;
  return out;
}

std::string caliber_summary(const Report& r) {
  const Caliber& c = r.caliber;
  if (c.pairs == 0) return "caliber: no run pairs to compare";
  const size_t n = c.differences.size(), unexpected = c.unexpected();
  if (n == 0) return "caliber: measured the same way (every field compared is equal)";
  std::string s = "caliber: " + std::to_string(n) + " difference" + (n == 1 ? "" : "s");
  if (unexpected == 0) return s + ", all expected (--expect-diff): measured the same way otherwise";
  return s + ", " + std::to_string(unexpected) + " not expected: NOT measured the same way";
}

std::string control_warning(const Report& r) {
  if (!r.overall.control) return "";
  const double control = *r.overall.control;
  const double moved = control - 1.0;
  if (std::fabs(moved) <= r.options.threshold) return "";
  // A control of 1e-317 (torch's time on A next to nothing) is a real ratio
  // whose percentage is no finite number, and 0.000 would hide that it is not 0.
  const double pct = (1.0 / control - 1.0) * 100;
  char by[48], ratio[32];
  if (!std::isfinite(pct)) {
    std::snprintf(by, sizeof by, "by more than any percentage");
  } else {
    std::snprintf(by, sizeof by, std::fabs(pct) < 1e6 ? "%+.1f %%" : "%+.3g %%", pct);
  }
  std::snprintf(ratio, sizeof ratio, control >= 1e-3 && control < 1e6 ? "%.3f" : "%.3g", control);
  return std::string("torch's own latency moved ") + by + " between A and B (geomean A/B " + ratio +
         "): the environment changed";
}

std::string counts_line(const Report& r) {
  std::string s;
  for (Verdict v : kVerdicts) {
    auto it = r.counts.find(v);
    s += (s.empty() ? "" : ", ") + std::string(verdict_name(v)) + " " +
         std::to_string(it == r.counts.end() ? 0 : it->second);
  }
  return s + "; one side only " + std::to_string(r.one_sided.size());
}

std::string headline(const Report& r) {
  const Geomean& g = r.overall;
  const std::string left_out = g.host_paced == 0
                                   ? ""
                                   : "; " + std::to_string(g.host_paced) + (g.host_paced == 1 ? " row" : " rows") +
                                         " timed call by call left out (docs/compare.md, \"The guards\")";
  if (g.rows == 0 && g.host_paced > 0) {
    return "answer: cannot tell from these runs: every row with a speedup was timed call by call" + left_out;
  }
  if (g.rows == 0) return "answer: no row was compared";
  const auto count = [&r](Verdict v) {
    auto it = r.counts.find(v);
    return std::to_string(it == r.counts.end() ? 0 : it->second);
  };
  char level[16];
  std::snprintf(level, sizeof level, "%g", kConfidence * 100);
  const std::string numbers = "geomean speedup " + geo(g) + " (" + level + " % interval " + geo_interval(g) +
                              ") over " + std::to_string(g.rows) + " rows; FASTER on " + count(Verdict::Faster) +
                              ", SLOWER on " + count(Verdict::Slower) + left_out;
  // Rows the test could not judge (too few samples, no work, an error) say
  // nothing either way: where no row could be judged, "no difference" would
  // read as a finding.
  size_t judged = 0;
  for (const auto& [v, n] : r.counts) judged += tested(v) ? n : 0;
  if (judged == 0) {
    return "answer: cannot tell from these runs: none of the " + std::to_string(g.rows) +
           " rows could be tested (UNCONFIRMED " + count(Verdict::Unconfirmed) + ", NO_WORK " + count(Verdict::NoWork) +
           ", ERROR " + count(Verdict::Error) + "); " + numbers;
  }
  const bool shown = g.lo && g.hi && (*g.lo > 1 || *g.hi < 1);
  if (!shown) return "answer: no overall difference shown between B and A: " + numbers;
  return "answer: B is " + pct(std::abs(g.speedup - 1) * 100) + (g.speedup > 1 ? " faster" : " slower") +
         " than A: " + numbers;
}

const char* verdict_colour(Verdict v) {
  switch (v) {
    case Verdict::Faster: return "#1b873f";
    case Verdict::Slower: return "#d1242f";
    case Verdict::Same: return "#6e7781";
    case Verdict::Noisy: return "#bf8700";
    case Verdict::NoWork: return "#afb8c1";
    case Verdict::Unconfirmed: return "#8250df";
    case Verdict::Error: return "#24292f";
  }
  return "#000000";
}

}  // namespace zl::compare::text
