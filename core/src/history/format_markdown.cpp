// The report as Markdown: the op-level steps first (regressions, then
// improvements), then each series' step, the runs with their pace, notes.
#include <cmath>

#include "groups.hpp"

namespace zl::history {
namespace {

std::string cell(std::string s) {
  for (size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2) s.replace(i, 1, "\\|");
  return s;
}

void write_groups(std::ostream& out, const Report& r, const std::vector<OpStep>& groups) {
  out << "## Steps\n\n";
  if (groups.empty()) {
    out << "No step beyond " << r.options.threshold * 100 << " % in any series.\n\n";
    return;
  }
  for (const OpStep& g : groups) {
    out << "- **" << (g.change > 0 ? "REGRESSION" : "IMPROVEMENT") << (g.is_new ? " (new)" : "") << "** `" << cell(g.op)
        << "` (" << g.side << "): " << percent(g.change) << " in " << g.series << " series, from "
        << run_label(r, g.first_bad) << " on; last good " << run_label(r, g.last_good)

        << ". Changed: " << cell(changed_text(g.changed)) << "\n";
  }
  out << "\n";
}

void write_series_steps(std::ostream& out, const Report& r) {
  if (r.steps.empty()) return;
  out << "## Steps per series\n\n| op | dtype | shape | side | change | last good | first bad | before ms | after ms | "
         "z |\n"
         "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const ReportStep& s : r.steps) {
    out << "| " << cell(s.op) << " | " << cell(s.dtype) << " | " << cell(s.shape) << " | " << s.side << " | "
        << percent(s.step.change) << " | " << s.step.last_good + 1 << " | " << s.step.first_bad + 1 << " | "
        << s.step.before_ms << " | " << s.step.after_ms << " | " << std::round(s.step.z * 10) / 10 << " |\n";
  }
  out << "\n";
}

}  // namespace

void write_markdown(std::ostream& out, const Report& r) {
  const std::vector<OpStep> groups = op_steps(r);
  size_t regressions = 0, fresh = 0;
  for (const OpStep& g : groups) regressions += g.change > 0, fresh += g.change > 0 && g.is_new;
  out << "# zlcore history: " << r.runs.size() << " runs, " << r.series.size() << " series, " << groups.size()
      << " step(s) (" << regressions << " regression(s), " << fresh << " new)\n\n";
  out << "Threshold " << r.options.threshold * 100 << " %, level " << r.options.alpha << " per series, at least "
      << r.options.min_runs << " run(s) each side of a step; run-wide pace " << (r.options.pace ? "removed" : "kept")
      << ". Method: docs/history.md.\n\n";
  write_groups(out, r, groups);
  write_series_steps(out, r);
  out << "## Runs\n\n| run | started | directory | pace |\n|---|---|---|---|\n";
  for (size_t i = 0; i < r.runs.size(); ++i) {
    out << "| " << i + 1 << " | " << r.runs[i].started << " | " << cell(r.runs[i].path) << " | "
        << percent(std::exp(r.runs[i].pace) - 1) << " |\n";
  }
  if (!r.notes.empty()) {
    out << "\n## Notes\n\n";
    for (const std::string& n : r.notes) out << "- " << cell(n) << "\n";
  }
}

}  // namespace zl::history
