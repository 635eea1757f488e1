// Matching rows of the two sides on (op, dtype, shape), each matched row's
// speedup, test values, bar and verdict, and rows found on one side only.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "kernels.hpp"
#include "zlcore/compare.hpp"

namespace zl::compare {
namespace {

using Key = std::tuple<std::string, std::string, std::string>;

Key key_of(const ResultRow& r) { return {r.op, r.dtype, r.shape}; }

std::vector<const ResultRow*> all_rows(const Side& s) {
  std::vector<const ResultRow*> out;
  for (const RunInfo& run : s.runs) {
    for (const ResultRow& r : run.rows) out.push_back(&r);
  }
  return out;
}

bool usable(const std::optional<double>& ms) { return ms && std::isfinite(*ms) && *ms > 0; }

// A ratio that can be printed, logged and averaged: neither overflowed to
// infinity nor underflowed to zero (latencies near the ends of the double
// range, 1e308 against 1e-3).
bool finite_ratio(double r) { return std::isfinite(r) && r > 0; }

std::string out_of_range(double a_ms, double b_ms) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "out of range (%.4g ms / %.4g ms is no finite number)", a_ms, b_ms);
  return buf;
}

std::string sides_text(bool a, bool b) { return a && b ? "A, B" : (a ? "A" : "B"); }

// What the test values of a row are, where that is not the placements the
// method is built for.
void note_samples(const Compared& c, const ResultRow& a, const ResultRow& b, std::vector<std::string>& notes) {
  if (a.unusable_samples > 0 || b.unusable_samples > 0) {
    notes.push_back("unusable values dropped: A " + std::to_string(a.unusable_samples) + ", B " +
                    std::to_string(b.unusable_samples));
  }
  const bool none_a = c.kind_a == SampleKind::None, none_b = c.kind_b == SampleKind::None;
  if (none_a || none_b) {
    notes.push_back("no samples on " + sides_text(none_a, none_b) + ": the test needs " + std::to_string(kMinSamples) +
                    " a side");
    return;
  }
  const bool rep_a = c.kind_a == SampleKind::Repeats, rep_b = c.kind_b == SampleKind::Repeats;
  if (rep_a || rep_b) {
    notes.push_back("no placement samples on " + sides_text(rep_a, rep_b) +
                    ": tested on in-run repeats, blind to placement variance");
  }
  const bool few_a = c.values_a.size() < kMinSamples, few_b = c.values_b.size() < kMinSamples;
  if (few_a || few_b) {
    notes.push_back(std::to_string(c.values_a.size()) + " vs " + std::to_string(c.values_b.size()) +
                    " samples: the test needs " + std::to_string(kMinSamples) + " a side");
  }
}

Compared match(const ResultRow& a, const ResultRow& b, const Options& opt) {
  Compared c;
  c.op = a.op;
  c.dtype = a.dtype;
  c.shape = a.shape;
  c.a_ms = a.latency_ms;
  c.b_ms = b.latency_ms;
  c.a_pct_bw = a.pct_peak_bandwidth;
  c.b_pct_bw = b.pct_peak_bandwidth;
  c.a_pct_fp = a.pct_peak_compute;
  c.b_pct_fp = b.pct_peak_compute;
  c.kernels_moved = kernels_moved(a.kernels, b.kernels);
  c.a_base_ms = a.latency_base_ms;
  c.b_base_ms = b.latency_base_ms;
  c.repeats_a = a.repeats;
  c.repeats_b = b.repeats;
  c.noise_pct = std::max(a.spread_pct, b.spread_pct);
  c.kind_a = sample_kind(a);
  c.kind_b = sample_kind(b);
  c.values_a = test_values(a);
  c.values_b = test_values(b);
  c.bar = opt.threshold;
  if (opt.noise_floor) {
    auto it = opt.noise_floor->rows.find(key_of(a));
    if (it != opt.noise_floor->rows.end()) {
      c.floor = std::expm1(it->second.max_log_ratio);
      c.bar = noise_bar(it->second, opt.threshold);
    }
  }
  std::vector<std::string> notes;
  if (usable(a.latency_base_ms) && usable(b.latency_base_ms)) {
    c.control = *a.latency_base_ms / *b.latency_base_ms;
    if (!finite_ratio(*c.control)) {
      c.control.reset();
      notes.push_back("torch ratio " + out_of_range(*a.latency_base_ms, *b.latency_base_ms));
    }
  }
  if (!a.error.empty()) notes.push_back("A: " + a.error);
  if (!b.error.empty()) notes.push_back("B: " + b.error);
  if (!a.remark.empty()) notes.push_back("A: " + a.remark);
  if (!b.remark.empty()) notes.push_back("B: " + b.remark);
  // A shape timed by a different timer on each side is not a like-for-like pair.
  if (a.timer != b.timer) notes.push_back("timer " + a.timer + "->" + b.timer);
  if (a.timer_base != b.timer_base) notes.push_back("torch timer " + a.timer_base + "->" + b.timer_base);
  // Nor is a shape read from memory on one side and from the L2 on the other.
  if (a.l2 != b.l2) notes.push_back("L2 " + a.l2 + "->" + b.l2);
  const bool failed = !a.error.empty() || !b.error.empty() || !usable(a.latency_ms) || !usable(b.latency_ms);
  if (!failed) note_samples(c, a, b, notes);
  for (const std::string& n : notes) c.note += (c.note.empty() ? "" : "; ") + n;

  if (failed) {
    c.verdict = Verdict::Error;
    if (notes.empty()) c.note = "no latency";
    return c;
  }
  if (!finite_ratio(*a.latency_ms / *b.latency_ms)) {
    c.verdict = Verdict::Error;
    c.note += (c.note.empty() ? "speedup " : "; speedup ") + out_of_range(*a.latency_ms, *b.latency_ms);
    return c;
  }
  c.speedup = *a.latency_ms / *b.latency_ms;
  Guards guards;
  if (opt.process_guards) {
    guards.spread = c.noise_pct / 100;
    guards.sustained_a = a.sustained;
    guards.sustained_b = b.sustained;
    guards.call_by_call_a = a.timed_call_by_call;
    guards.call_by_call_b = b.timed_call_by_call;
    guards.floor_known = c.floor.has_value();
    guards.cold_launch_scale =
        (a.l2 == "cold" || b.l2 == "cold") && *a.latency_ms < kLaunchScaleMs && *b.latency_ms < kLaunchScaleMs;
    c.host_paced = (guards.call_by_call_a || guards.call_by_call_b) && !guards.floor_known;
  }
  guards.control = c.control;
  guards.a_ms = *a.latency_ms;
  guards.b_ms = *b.latency_ms;
  if (c.control) {
    guards.a_base_ms = *a.latency_base_ms;
    guards.b_base_ms = *b.latency_base_ms;
  }
  guards.no_work = *a.latency_ms < kNoWorkMs && *b.latency_ms < kNoWorkMs;
  const Decision d = decide({*c.speedup, c.values_a, c.values_b, opt.threshold, c.bar}, guards);
  if (!d.why.empty()) c.note += (c.note.empty() ? "" : "; ") + d.why;
  c.verdict = d.verdict;
  c.p_value = d.p_value;
  c.ci_lo = d.ci_lo;
  c.ci_hi = d.ci_hi;
  // Values near the ends of the double range make ratios of them overflow:
  // the interval is then not a number to print, and the row says so.
  if ((c.ci_lo && !finite_ratio(*c.ci_lo)) || (c.ci_hi && !finite_ratio(*c.ci_hi))) {
    c.ci_lo.reset();
    c.ci_hi.reset();
    c.note +=
        std::string(c.note.empty() ? "" : "; ") + "no finite interval: the values' ratios leave the range of a double";
  }
  return c;
}

template <typename KeyFn>
std::vector<Geomean> grouped(const std::vector<Compared>& rows, KeyFn key) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Compared*>> groups;
  for (const Compared& c : rows) {
    const std::string& k = key(c);
    if (groups.find(k) == groups.end()) order.push_back(k);
    groups[k].push_back(&c);
  }
  std::vector<Geomean> out;
  for (const std::string& k : order) out.push_back(geomean(k, groups[k]));
  return out;
}

}  // namespace

bool Report::regression() const {
  return std::any_of(rows.begin(), rows.end(), [](const Compared& c) { return c.verdict == Verdict::Slower; });
}

Report compare(Side a, Side b, const Options& options) {
  Report r;
  r.options = options;
  r.caliber = check_caliber(a, b, options.expect_diff);

  const std::vector<const ResultRow*> rows_a = all_rows(a), rows_b = all_rows(b);
  std::map<Key, const ResultRow*> index_b;
  for (const ResultRow* row : rows_b) index_b.emplace(key_of(*row), row);
  std::map<Key, bool> matched;
  for (const ResultRow* row : rows_a) {
    auto it = index_b.find(key_of(*row));
    if (it == index_b.end()) {
      r.one_sided.push_back({"A", row->op, row->dtype, row->shape, row->latency_ms});
      continue;
    }
    matched[it->first] = true;
    r.rows.push_back(match(*row, *it->second, options));
  }
  for (const ResultRow* row : rows_b) {
    if (!matched.count(key_of(*row))) r.one_sided.push_back({"B", row->op, row->dtype, row->shape, row->latency_ms});
  }
  // Shapes keep the order FlagGems ran them in (usually by size) within an
  // (op, dtype) group; groups sort by name so a batch reads alphabetically.
  auto by_group = [](const auto& x, const auto& y) { return std::tie(x.op, x.dtype) < std::tie(y.op, y.dtype); };
  std::stable_sort(r.rows.begin(), r.rows.end(), by_group);
  std::stable_sort(r.one_sided.begin(), r.one_sided.end(), by_group);

  std::vector<const Compared*> all;
  for (const Compared& c : r.rows) {
    all.push_back(&c);
    ++r.counts[c.verdict];
    if (c.verdict != Verdict::Error && (c.kind_a == SampleKind::Repeats || c.kind_b == SampleKind::Repeats))
      ++r.rows_on_repeats;
    if (c.floor) ++r.rows_with_floor;
    if (c.bar > options.threshold) ++r.rows_widened;
  }
  r.overall = geomean("all", all);
  r.by_op = grouped(r.rows, [](const Compared& c) -> const std::string& { return c.op; });
  r.by_dtype = grouped(r.rows, [](const Compared& c) -> const std::string& { return c.dtype; });
  std::sort(r.by_dtype.begin(), r.by_dtype.end(), [](const Geomean& x, const Geomean& y) { return x.group < y.group; });
  r.a = std::move(a);
  r.b = std::move(b);
  return r;
}

}  // namespace zl::compare
