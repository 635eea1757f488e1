// The report as one self-contained page: the steps in words first
// (regressions first), then a timeline per op with its steps and segment
// breaks labelled on the picture, and per shape on demand.
#include <algorithm>
#include <map>
#include <set>

#include "../compare/html.hpp"
#include "changes.hpp"
#include "groups.hpp"
#include "html_chart.hpp"

namespace zl::history {
namespace {

using compare::html::escape;

std::vector<Marker> markers_for(const Report& r, const std::vector<const ReportSeries*>& series) {
  std::vector<Marker> out;
  std::set<std::pair<size_t, std::string>> seen;
  for (const ReportSeries* s : series) {
    for (const ReportStep& st : r.steps) {
      if (st.op != s->op || st.side != s->side || (st.dtype != s->dtype || st.shape != s->shape)) continue;
      const std::string label = "run " + std::to_string(st.step.first_bad + 1) + ": " + percent(st.step.change) + " (" +
                                s->side + "), changed: " + changed_text(st.changed);
      if (seen.insert({st.step.first_bad, label}).second) out.push_back({st.step.first_bad, label, true});
    }
    for (const SegmentBreak& b : s->result.breaks) {
      const std::string label = "run " + std::to_string(b.first_run + 1) + ": new segment, no step read across (" +
                                segment_difference(b.from, b.to) + ")";
      if (seen.insert({b.first_run, label}).second) out.push_back({b.first_run, label, false});
    }
  }
  // One label per marker and op keeps the picture readable: a step of ten
  // shapes is one line.
  std::map<std::pair<size_t, bool>, Marker> one;
  for (const Marker& m : out) one.try_emplace({m.before_run, m.step}, m);
  out.clear();
  for (const auto& [k, m] : one) out.push_back(m);
  return out;
}

void write_op(std::ostream& out, const Report& r, const std::string& op,
              const std::vector<const ReportSeries*>& series) {
  out << "<section><h2>" << escape(op) << "</h2>\n<p class=\"legend\">Each line: one (dtype, shape, side) series, in % "
      << "of its own median; bars: the run's interval. Red: a step; grey dashed: a new segment.</p>\n";
  std::vector<const ReportSeries*> gems;
  for (const ReportSeries* s : series)
    if (s->side == "gems") gems.push_back(s);
  const auto& shown = gems.empty() ? series : gems;
  out << timeline_svg(shown, markers_for(r, shown), r.runs.size(), 900, 260);
  out << "<details><summary>per series (" << series.size() << ")</summary>\n";
  for (const ReportSeries* s : series) {
    out << "<h3>" << escape(s->dtype + " " + s->shape + " " + s->side) << "</h3>\n"
        << timeline_svg({s}, markers_for(r, {s}), r.runs.size(), 700, 180);
  }
  out << "</details></section>\n";
}

}  // namespace

void write_html(std::ostream& out, const Report& r) {
  const std::vector<OpStep> groups = op_steps(r);
  out << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>zlcore history</title>\n<style>"
         "body{font-family:sans-serif;margin:1em 2em}li.reg{color:#b00}li.imp{color:#060}"
         ".legend{color:#555;font-size:90%}svg{display:block}</style></head><body>\n"
      << "<h1>zlcore history: " << r.runs.size() << " runs, " << r.series.size() << " series, " << groups.size()
      << " step(s)</h1>\n<p>Threshold " << r.options.threshold * 100 << " %; run-wide pace "
      << (r.options.pace ? "removed" : "kept") << ". Runs 1 to " << r.runs.size() << ", listed at the end.";
  out << "</p>\n<h2>Steps</h2>\n<ul>\n";
  if (groups.empty()) out << "<li>No step beyond the threshold in any series.</li>\n";
  for (const OpStep& g : groups) {
    out << "<li class=\"" << (g.change > 0 ? "reg" : "imp") << "\"><b>" << (g.change > 0 ? "REGRESSION" : "IMPROVEMENT")
        << (g.is_new ? " (new)" : "") << "</b> " << escape(g.op) << " (" << g.side << "): " << percent(g.change)
        << " in " << g.series << " series, from " << escape(run_label(r, g.first_bad)) << " on; last good "
        << escape(run_label(r, g.last_good)) << ". Changed: " << escape(changed_text(g.changed)) << "</li>\n";
  }
  out << "</ul>\n";
  for (const std::string& n : r.notes) out << "<p class=\"legend\">" << escape(n) << "</p>\n";
  // Ops with a regression first, in the order of the steps above.
  std::map<std::string, std::vector<const ReportSeries*>> by_op;
  for (const ReportSeries& s : r.series) by_op[s.op].push_back(&s);
  std::vector<std::string> order;
  for (const OpStep& g : groups)
    if (by_op.count(g.op) && std::find(order.begin(), order.end(), g.op) == order.end()) order.push_back(g.op);
  for (const auto& [op, s] : by_op)
    if (std::find(order.begin(), order.end(), op) == order.end()) order.push_back(op);
  for (const std::string& op : order) write_op(out, r, op, by_op[op]);
  out << "<h2>Runs</h2>\n<table>\n<tr><th>run</th><th>started</th><th>directory</th></tr>\n";
  for (size_t i = 0; i < r.runs.size(); ++i) {
    out << "<tr><td>" << i + 1 << "</td><td>" << escape(r.runs[i].started) << "</td><td>" << escape(r.runs[i].path)
        << "</td></tr>\n";
  }
  out << "</table>\n";
  out << "</body></html>\n";
}

}  // namespace zl::history
