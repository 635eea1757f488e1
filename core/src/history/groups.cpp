#include "groups.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

namespace zl::history {

std::vector<OpStep> op_steps(const Report& r) {
  std::map<std::tuple<std::string, std::string, size_t>, std::vector<const ReportStep*>> by;
  for (const ReportStep& s : r.steps) by[{s.op, s.side, s.step.first_bad}].push_back(&s);
  std::vector<OpStep> out;
  for (const auto& [k, steps] : by) {
    OpStep g;
    std::tie(g.op, g.side, g.first_bad) = k;
    g.last_good = steps.front()->step.last_good;
    g.series = steps.size();
    std::vector<double> changes;
    for (const ReportStep* s : steps) {
      changes.push_back(s->step.change);
      g.is_new = g.is_new || s->is_new;
      g.last_good = std::max(g.last_good, s->step.last_good);
    }
    std::sort(changes.begin(), changes.end());
    g.change = changes[changes.size() / 2];
    g.changed = steps.front()->changed;
    out.push_back(std::move(g));
  }
  std::stable_sort(out.begin(), out.end(), [](const OpStep& x, const OpStep& y) {
    if ((x.change > 0) != (y.change > 0)) return x.change > 0;
    return std::fabs(x.change) > std::fabs(y.change);
  });
  return out;
}

std::string percent(double fraction) {
  // A level of 0 ms before a step makes its change infinite: say so, not "+inf %".
  if (std::isinf(fraction) && fraction > 0) return "(from a level of 0)";
  if (!std::isfinite(fraction)) return "(no level to compare)";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f %%", fraction * 100);
  return buf;
}

std::string changed_text(const std::vector<Change>& c) {
  if (c.empty()) return "(no identity key differs)";
  std::string out;
  for (const Change& x : c) out += (out.empty() ? "" : "; ") + x.key + " " + x.before + " -> " + x.after;
  return out;
}

std::string run_label(const Report& r, size_t run) {
  return "run " + std::to_string(run + 1) + " (" + (run < r.runs.size() ? r.runs[run].started : "?") + ")";
}

}  // namespace zl::history
