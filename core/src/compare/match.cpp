// Matching rows of the two sides on (op, dtype, shape), each matched row's
// speedup and verdict, rows found on one side only, and the geometric means.
#include <algorithm>
#include <cmath>
#include <tuple>

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

Compared match(const ResultRow& a, const ResultRow& b, double threshold) {
  Compared c;
  c.op = a.op;
  c.dtype = a.dtype;
  c.shape = a.shape;
  c.a_ms = a.latency_ms;
  c.b_ms = b.latency_ms;
  c.a_base_ms = a.latency_base_ms;
  c.b_base_ms = b.latency_base_ms;
  c.repeats_a = a.repeats;
  c.repeats_b = b.repeats;
  c.noise_pct = std::max(a.spread_pct, b.spread_pct);
  if (usable(a.latency_base_ms) && usable(b.latency_base_ms)) c.control = *a.latency_base_ms / *b.latency_base_ms;

  std::vector<std::string> notes;
  if (!a.error.empty()) notes.push_back("A: " + a.error);
  if (!b.error.empty()) notes.push_back("B: " + b.error);
  // A shape timed by a different timer on each side is not a like-for-like pair.
  if (a.timer != b.timer) notes.push_back("timer " + a.timer + "->" + b.timer);
  if (a.timer_base != b.timer_base) notes.push_back("torch timer " + a.timer_base + "->" + b.timer_base);
  for (const std::string& n : notes) c.note += (c.note.empty() ? "" : "; ") + n;

  if (!a.error.empty() || !b.error.empty() || !usable(a.latency_ms) || !usable(b.latency_ms)) {
    c.verdict = Verdict::Error;
    if (notes.empty()) c.note = "no latency";
    return c;
  }
  c.speedup = *a.latency_ms / *b.latency_ms;
  c.verdict = decide({*c.speedup, a.spread_pct, b.spread_pct, a.repeats, b.repeats, threshold});
  return c;
}

// Geometric mean: the one average of ratios for which A/B and B/A agree.
Geomean geomean(const std::string& group, const std::vector<const Compared*>& rows) {
  Geomean g;
  g.group = group;
  double log_sum = 0, control_log_sum = 0;
  size_t controls = 0;
  for (const Compared* c : rows) {
    if (!c->speedup) continue;
    ++g.rows;
    log_sum += std::log(*c->speedup);
    if (c->control) {
      ++controls;
      control_log_sum += std::log(*c->control);
    }
  }
  if (g.rows > 0) g.speedup = std::exp(log_sum / static_cast<double>(g.rows));
  if (controls > 0) g.control = std::exp(control_log_sum / static_cast<double>(controls));
  return g;
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
    r.rows.push_back(match(*row, *it->second, options.threshold));
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
