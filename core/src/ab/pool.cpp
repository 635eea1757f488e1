// How rounds combine (docs/ab.md): every round of a side measures each row on
// its own input placements. A round is one process at one time: whatever
// slowed it (a neighbour busy for a second, the process's own layout) moves
// all its placements together, so by default a round contributes one value,
// the mean of its placement medians (the run's own latency), and compare's
// own verdict (Mann-Whitney, Hodges-Lehmann interval) runs over the rounds.
// With --samples placements every round's placement medians are pooled
// instead: more values, but a test that trusts them as independent.
#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>

#include "zlcore/ab.hpp"

namespace zl::ab {
namespace {

using Key = std::tuple<std::string, std::string, std::string>;

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

// A round's value of a row: the mean of its placements, which is the run's
// own latency (older runs without placements: their latency, which was the
// median of their repeats); nullopt when it has none. Not their median: on
// the H200 a large memory-bound row's placements fall in two groups ~10 %
// apart (where its buffers land), and
// the median of 6 or 32 of them jumps between the groups from run to run
// (4-9 % between rounds, against 0.2-0.9 % for the mean; a sustained read's
// placements are scaled so that their mean is its readings' level).
// docs/results.md, "Finding an injected effect". One
// slow placement still moves a round only by its share, and the test over
// rounds is a rank test: one slow round is no verdict.
std::optional<double> round_value(const compare::ResultRow& r) {
  if (!r.placements_ms.empty()) return mean(r.placements_ms);
  if (r.latency_ms && *r.latency_ms > 0) return *r.latency_ms;
  return std::nullopt;
}

double spread_pct(std::vector<double> v) {
  if (v.size() < 2) return 0;
  std::sort(v.begin(), v.end());
  const double median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  return median > 0 ? (v.back() - v.front()) / median * 100 : 0;
}

// Profiled rounds (--profile): each kernel's time per call, the mean over
// the rounds that listed it, the most first, so that compare names what
// moved between the sides rather than in one round.
std::vector<compare::KernelTime> pooled_kernels(const std::vector<const compare::ResultRow*>& parts) {
  std::map<std::string, std::pair<double, int>> sums;
  for (const compare::ResultRow* r : parts) {
    for (const compare::KernelTime& k : r->kernels) {
      sums[k.name].first += k.us;
      sums[k.name].second += 1;
    }
  }
  std::vector<compare::KernelTime> out;
  for (const auto& [name, s] : sums) out.push_back({name, s.first / s.second});
  std::stable_sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.us > y.us; });
  return out;
}

// One op's rounds into one run: the first round's identity stands for the
// caliber (every round ran the same settings; the first is what the check
// before the rounds saw), the rows are pooled.
compare::RunInfo pool_op(const std::vector<compare::RunInfo>& rounds, const std::string& dir, Samples samples) {
  compare::RunInfo out = rounds.front();
  out.dir = dir;
  out.rows.clear();
  std::vector<Key> order;
  std::map<Key, std::vector<const compare::ResultRow*>> rows;
  for (const compare::RunInfo& run : rounds) {
    if (run.status != "passed" && out.status == "passed") {
      out.status = run.status;
      out.reason = run.reason;
    }
    for (const compare::ResultRow& r : run.rows) {
      const Key k{r.op, r.dtype, r.shape};
      if (!rows.count(k)) order.push_back(k);
      rows[k].push_back(&r);
    }
  }
  for (const Key& k : order) {
    const auto& parts = rows[k];
    compare::ResultRow p = *parts.front();
    p.placements_ms.clear();
    p.samples_ms.clear();
    p.unusable_samples = 0;
    std::vector<double> latencies, bases, per_round;
    for (const compare::ResultRow* r : parts) {
      if (auto v = round_value(*r)) per_round.push_back(*v);
      p.placements_ms.insert(p.placements_ms.end(), r->placements_ms.begin(), r->placements_ms.end());
      p.samples_ms.insert(p.samples_ms.end(), r->samples_ms.begin(), r->samples_ms.end());
      p.unusable_samples += r->unusable_samples;
      if (p.error.empty() && !r->error.empty()) p.error = r->error;
      if (r->latency_ms) latencies.push_back(*r->latency_ms);
      if (r->latency_base_ms) bases.push_back(*r->latency_base_ms);
      // A row timed by another timer in some round is not like for like.
      if (r->timer != p.timer && p.error.empty())
        p.error = "timer " + p.timer + " in one round, " + r->timer + " in another";
    }
    if (samples == Samples::rounds) {
      // The rounds are the test values; compare reads them as placements.
      p.placements_ms = per_round;
      p.samples_ms.clear();
    }
    // Pooled placements hold a sustained round's values when any round was
    // read sustained (with rounds as the test values compare leaves the
    // pace guard off: the test over rounds sees it vary). The graph timer
    // decides that path per run, and on a row near the power limit it flips
    // from round to round; the two paces can be 10 % apart on a GEMM
    // (docs/results.md, "The path flips between runs"). The test sees that as
    // noise; the note says where it is from.
    const auto sustained_rounds =
        std::count_if(parts.begin(), parts.end(), [](const compare::ResultRow* r) { return r->sustained; });
    p.sustained = sustained_rounds > 0;
    if (p.sustained && sustained_rounds < static_cast<long>(parts.size())) {
      p.remark = std::to_string(sustained_rounds) + " of " + std::to_string(parts.size()) +
                 " rounds read at the sustained (power-limited) pace, the others at the pace held";
    }
    const std::vector<double>& values = p.placements_ms.empty() ? p.samples_ms : p.placements_ms;
    if (!values.empty()) {
      p.latency_ms = mean(values);
      p.spread_pct = spread_pct(values);
    } else if (!latencies.empty()) {
      p.latency_ms = mean(latencies);
      p.spread_pct = spread_pct(latencies);
    }
    if (!bases.empty()) p.latency_base_ms = mean(bases);
    p.kernels = pooled_kernels(parts);
    p.repeats = static_cast<int>(values.size());
    out.rows.push_back(std::move(p));
  }
  return out;
}

}  // namespace

compare::Side pool_side(const std::string& label, const std::string& shown,
                        const std::map<std::string, std::vector<std::string>>& runs_by_op, Samples samples) {
  compare::Side side;
  side.label = label;
  side.path = shown;
  side.batch = true;
  for (const auto& [op, dirs] : runs_by_op) {
    std::vector<compare::RunInfo> rounds;
    for (const std::string& d : dirs) {
      compare::Side one = compare::load_side(label, d);
      side.warnings.insert(side.warnings.end(), one.warnings.begin(), one.warnings.end());
      for (compare::RunInfo& r : one.runs) rounds.push_back(std::move(r));
    }
    if (rounds.empty()) continue;
    side.runs.push_back(pool_op(rounds, shown + "/runs/" + batch::op_dir_name(op), samples));
  }
  return side;
}

}  // namespace zl::ab
