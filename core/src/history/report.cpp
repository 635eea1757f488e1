// A report over the store: series assembled in run order, the run-wide pace
// removed, steps found per series and in the pace itself, and for each step
// what changed between its last good and first bad run.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "changes.hpp"
#include "zlcore/history.hpp"

namespace zl::history {
namespace {

using Key = std::tuple<std::string, std::string, std::string, std::string>;

struct Assembled {
  std::map<Key, std::vector<Point>> points;
  std::map<Key, std::map<size_t, std::int64_t>> store_run;  // run index -> the store's run id
  std::map<size_t, std::int64_t> any_run;                   // run index -> some run of it
};

Assembled assemble(const std::vector<StoredRow>& rows, std::vector<RunRef>& runs) {
  Assembled a;
  std::map<std::int64_t, size_t> index;
  for (const StoredRow& s : rows) {
    auto [it, fresh] = index.try_emplace(s.entry_id, runs.size());
    if (fresh) runs.push_back({s.entry_path, s.entry_started, s.entry_id, 0});
    const size_t run = it->second;
    const Key k{s.row.op, s.row.dtype, s.row.shape, s.row.side};
    auto& pts = a.points[k];
    // One point per run: a second row of the same key in one entry (a run
    // directory imported inside two batches) is the same measurement twice.
    if (!pts.empty() && pts.back().run == run) continue;
    if (!(s.row.median_ms > 0)) continue;
    pts.push_back({run, s.row.median_ms, s.row.lo_ms, s.row.hi_ms, s.segment});
    a.store_run[k][run] = s.run_id;
    a.any_run.try_emplace(run, s.run_id);
  }
  return a;
}

// The typical series' noise: the upper median, 0 when no series has enough points.
double typical_noise(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Half the typical series' noise is the least any series is granted: twelve
// points can look quieter than they are by luck.
double pooled_noise(const std::map<Key, std::vector<Point>>& points, const std::vector<double>& pace, bool use_pace) {
  std::vector<double> each;
  for (const auto& [k, pts] : points) {
    std::vector<double> y;
    for (const Point& p : pts) y.push_back(std::log(p.value_ms) - (use_pace ? pace[p.run] : 0));
    if (y.size() >= 3) each.push_back(learned_noise(y));
  }
  return typical_noise(each);
}

ReportStep make_step(const Store& store, const Key& k, const Step& st, std::int64_t good, std::int64_t bad, size_t runs,
                     size_t min_runs) {
  ReportStep r;
  std::tie(r.op, r.dtype, r.shape, r.side) = k;
  r.step = st;
  r.is_new = runs - st.first_bad == std::max<size_t>(min_runs, 1);
  if (good && bad) r.changed = changed_keys(store.identity(good), store.identity(bad));
  return r;
}

const std::vector<double>& pace_of(const Key& k, const std::vector<double>& pace,
                                   const std::map<std::string, std::vector<double>>& control) {
  if (std::get<3>(k) != "gems") return pace;
  auto it = control.find(std::get<0>(k));
  return it == control.end() ? pace : it->second;
}

// Per op, the pace of its torch side (the control its FlagGems side is
// measured beside, in the same process): what a busy machine did to that
// op's process moves both sides, a FlagGems change only one.
std::map<std::string, std::vector<double>> control_pace(const std::map<Key, std::vector<Point>>& points, size_t runs) {
  std::map<std::string, std::vector<std::vector<Point>>> base;
  for (const auto& [k, pts] : points)
    if (std::get<3>(k) == "base") base[std::get<0>(k)].push_back(pts);
  std::map<std::string, std::vector<double>> out;
  for (const auto& [op, series] : base) out[op] = run_pace(series, runs);
  return out;
}

}  // namespace

size_t Report::regressions() const {
  return static_cast<size_t>(
      std::count_if(steps.begin(), steps.end(), [](const ReportStep& s) { return s.step.change > 0; }));
}

size_t Report::new_regressions() const {
  return static_cast<size_t>(
      std::count_if(steps.begin(), steps.end(), [](const ReportStep& s) { return s.step.change > 0 && s.is_new; }));
}

Report build_report(const Store& store, const std::string& since, const std::string& op, const DetectOptions& opt) {
  Report rep;
  rep.options = opt;
  // Every op's rows, whatever --op keeps: the pace is the whole run's, and
  // one op's series alone would read its own step as the run's pace.
  size_t skipped = 0;
  Assembled a = assemble(store.rows(since, "", &skipped), rep.runs);
  std::vector<std::vector<Point>> all;
  for (const auto& [k, pts] : a.points) all.push_back(pts);
  const std::vector<double> pace = run_pace(all, rep.runs.size());
  for (size_t i = 0; i < rep.runs.size(); ++i) rep.runs[i].pace = pace[i];
  const double pooled = pooled_noise(a.points, pace, opt.pace);
  const auto control = opt.control ? control_pace(a.points, rep.runs.size()) : decltype(control_pace({}, 0)){};
  for (const auto& [k, pts] : a.points) {
    if (!op.empty() && std::get<0>(k) != op) continue;
    const auto fl = opt.floor.find(std::get<0>(k) + "\t" + std::get<1>(k) + "\t" + std::get<2>(k));
    const double floor = std::max(pooled / 2, fl == opt.floor.end() ? 0.0 : fl->second);
    ReportSeries s{std::get<0>(k),
                   std::get<1>(k),
                   std::get<2>(k),
                   std::get<3>(k),
                   pts,
                   detect(pts, pace_of(k, pace, control), floor, opt)};
    const auto& ids = a.store_run[k];
    for (const Step& st : s.result.steps)
      rep.steps.push_back(
          make_step(store, k, st, ids.at(st.last_good), ids.at(st.first_bad), rep.runs.size(), opt.min_runs));
    rep.series.push_back(std::move(s));
  }
  if (opt.pace && rep.runs.size() >= 3) {
    // The pace itself: a change that moved most series at once (a driver,
    // a clock policy, a commit that touched everything) shows here.
    std::vector<Point> p;
    for (size_t i = 0; i < pace.size(); ++i)
      p.push_back({i, std::exp(pace[i]), std::exp(pace[i]), std::exp(pace[i]), ""});
    DetectOptions raw = opt;
    raw.pace = false;
    for (const Step& st : detect(p, {}, 0, raw).steps) {
      const Key k{"(every series)", "", "", "pace"};
      rep.steps.push_back(
          make_step(store, k, st, a.any_run[st.last_good], a.any_run[st.first_bad], rep.runs.size(), opt.min_runs));
    }
  }
  std::stable_sort(rep.steps.begin(), rep.steps.end(), [](const ReportStep& x, const ReportStep& y) {
    const bool rx = x.step.change > 0, ry = y.step.change > 0;
    if (rx != ry) return rx;
    return std::fabs(x.step.change) > std::fabs(y.step.change);
  });
  rep.notes = segment_notes(rep);
  if (skipped > 0) {
    rep.notes.push_back(std::to_string(skipped) +
                        " stored row(s) left out: a latency that is not a positive finite number inside its "
                        "interval, which no import writes (the file was edited or damaged)");
  }
  return rep;
}

}  // namespace zl::history
