// One self-contained HTML page: inline CSS and an inline SVG plot, no script
// and no link to anything, so it reads the same offline and months later.
// It leads with the answer (verdict counts, the geomean with its interval,
// the plot), with a one-line caliber verdict beside it so a number is never
// read without knowing whether the sides were measured alike; then the runs
// that did not pass in one table, the caliber check in full, the geomeans,
// the rows, and the method last. Where and with what each side was
// measured (provenance) follows the plot.
#include <map>

#include "html.hpp"
#include "text.hpp"

namespace zl::compare {
namespace {

using html::escape;

constexpr const char* kStyle = R"(
body{font-family:-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:#24292f;margin:24px;max-width:1400px}
h1{font-size:22px;margin:0 0 8px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
.sides{font-family:monospace;font-size:13px}.legend{color:#57606a;font-size:13px;margin:6px 0}
.banner{padding:10px 14px;border-radius:6px;font-weight:bold;margin:8px 0}
.ok{background:#dafbe1;border:1px solid #1b873f}.bad{background:#ffebe9;border:1px solid #d1242f}
.warn{background:#fff8c5;border:1px solid #bf8700}
table{border-collapse:collapse;font-size:13px;margin:6px 0}
th{background:#dde4ee;text-align:left;padding:4px 8px;border:1px solid #c4ccd6}
td{padding:3px 8px;border:1px solid #d0d7de;font-variant-numeric:tabular-nums}
td.n{text-align:right}td.s{font-family:monospace}td.ci{white-space:nowrap}
tr:nth-child(even) td{background:#f6f8fa}
.v{display:inline-block;min-width:88px;text-align:center;color:#fff;border-radius:4px;padding:1px 6px;font-weight:bold;font-size:12px}
.diff{color:#d1242f;font-weight:bold}.exp{color:#57606a}
.plot{overflow-x:auto;border:1px solid #d0d7de;border-radius:6px;padding:8px;background:#fff}
.big{font-size:28px;font-weight:bold}
.headline{font-size:18px;font-weight:600;margin:6px 0 10px}
.answer{display:flex;flex-wrap:wrap;gap:16px;align-items:center;margin:10px 0}
.count{text-align:center}.count .n{font-size:26px;font-weight:bold;display:block}
a{color:#0969da}
)";

std::string verdict_badge(Verdict v) {
  return std::string("<span class=\"v\" style=\"background:") + text::verdict_colour(v) + "\">" + verdict_name(v) +
         "</span>";
}

const char* caliber_class(const Caliber& c) {
  return c.unexpected() > 0 || c.pairs == 0 ? "bad" : (c.differences.empty() ? "ok" : "warn");
}

// The answer: how many rows landed on each verdict, the geomean with its
// interval, and whether the numbers may be compared at all.
void answer_section(std::ostream& out, const Report& r) {
  out << "<div class=\"answer\">\n<div><span class=\"big\">" << text::geo(r.overall) << "</span> geomean speedup<br>"
      << kConfidence * 100 << " % CI " << text::geo_interval(r.overall) << " over " << r.overall.rows << " rows"
      << (r.overall.host_paced == 0 ? ""
                                    : " (" + std::to_string(r.overall.host_paced) + " timed call by call left out)")
      << "<br><span class=\"exp\">torch control " << text::ratio(r.overall.control)
      << ": the same A/B of torch's own kernel, which neither side changed; far from 1, the machine moved, not the "
         "code</span></div>\n";
  for (Verdict v : kVerdicts) {
    auto it = r.counts.find(v);
    out << "<div class=\"count\"><span class=\"n\">" << (it == r.counts.end() ? 0 : it->second) << "</span>"
        << verdict_badge(v) << "</div>\n";
  }
  out << "<div class=\"count\"><span class=\"n\">" << r.one_sided.size() << "</span>one side only</div>\n";
  if (!r.caliber.not_passed.empty()) {
    out << "<div class=\"count\"><span class=\"n\">" << r.caliber.not_passed.size()
        << "</span><a href=\"#not-passed\">runs did not pass</a></div>\n";
  }
  out << "</div>\n<div class=\"banner " << caliber_class(r.caliber) << "\">" << escape(text::caliber_summary(r))
      << (r.caliber.differences.empty() ? "" : " (<a href=\"#caliber\">caliber check</a>)") << "</div>\n";
  if (std::string w = text::control_warning(r); !w.empty())
    out << "<div class=\"banner warn\">" << escape(w) << "</div>\n";
}

// Every run that did not pass, in one table: a long list of "status failed"
// lines buried the summary of a 30-op batch.
void not_passed_section(std::ostream& out, const Report& r) {
  const auto& runs = r.caliber.not_passed;
  if (runs.empty()) return;
  std::map<std::string, size_t> by_status;
  for (const auto& n : runs) by_status[n.status]++;
  std::string counts;
  for (const auto& [status, n] : by_status) counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " + status;
  out << "<h2 id=\"not-passed\">Runs that did not pass (" << runs.size() << ": " << escape(counts) << ")</h2>\n"
      << "<table><tr><th>op</th><th>side</th><th>status</th><th>reason</th><th>run</th></tr>\n";
  for (const auto& n : runs) {
    out << "<tr><td>" << escape(n.op) << "</td><td>" << escape(n.side) << "</td><td>" << escape(n.status) << "</td><td>"
        << escape(n.reason.empty() ? "-" : n.reason) << "</td><td class=\"s\">" << escape(n.dir) << "</td></tr>\n";
  }
  out << "</table>\n";
}

void caliber_section(std::ostream& out, const Report& r) {
  const Caliber& c = r.caliber;
  out << "<h2 id=\"caliber\">Caliber check</h2>\n<div class=\"banner " << caliber_class(c) << "\">"
      << escape(text::caliber_summary(r)) << "</div>\n";
  if (!c.differences.empty()) {
    out << "<table><tr><th></th><th>field</th><th>A</th><th>B</th><th>why</th><th>where</th></tr>\n";
    for (const Difference& d : c.differences) {
      out << "<tr><td class=\"" << (d.expected ? "exp\">expected" : "diff\">DIFFERS") << "</td><td class=\"s\">"
          << escape(d.key) << "</td><td class=\"s\">" << escape(d.a) << "</td><td class=\"s\">" << escape(d.b)
          << "</td><td>" << escape(d.detail) << "</td><td>" << escape(text::where(d, c)) << "</td></tr>\n";
    }
    out << "</table>\n";
  }
  out << "<p>Autotune pairing: <b>" << escape(c.autotune_pairing) << "</b></p>\n";
  // Run statuses have their own table above.
  std::vector<std::string> notes(c.notes.begin(), c.notes.end() - static_cast<long>(c.not_passed.size()));
  if (!notes.empty()) {
    out << "<ul>\n";
    for (const std::string& n : notes) out << "<li>" << escape(n) << "</li>\n";
    out << "</ul>\n";
  }
}

void html_geomean_table(std::ostream& out, const char* what, const std::vector<Geomean>& gs) {
  out << "<table><tr><th>" << what << "</th><th>geomean speedup</th><th>" << kConfidence * 100
      << " % CI</th><th>torch A/B</th><th>rows</th></tr>\n";
  for (const Geomean& g : gs) {
    out << "<tr><td>" << escape(g.group) << "</td><td class=\"n\">" << text::geo(g) << "</td><td class=\"n ci\">"
        << text::geo_interval(g) << "</td><td class=\"n\">" << text::ratio(g.control) << "</td><td class=\"n\">"
        << g.rows << "</td></tr>\n";
  }
  out << "</table>\n";
}

void results_table(std::ostream& out, const Report& r) {
  const bool bar = text::shows_bar(r);
  const bool peak = text::shows_peak(r);
  out << "<h2>Results</h2>\n<div class=\"legend\">" << escape(text::column_terms(r))
      << "</div>\n<table><tr><th>op</th><th>dtype</th><th>shape</th><th>A ms</th><th>B "
         "ms</th><th>speedup</th>"
      << "<th>" << kConfidence * 100 << " % CI</th><th>noise</th><th>verdict</th>"
      << (bar ? "<th>bar</th><th>floor</th>" : "") << "<th>torch A ms</th><th>torch B ms</th><th>torch A/B</th>"
      << (peak ? "<th>% of peak A/B</th>" : "") << "<th>note</th></tr>\n";
  for (const Compared& c : r.rows) {
    out << "<tr><td>" << escape(c.op) << "</td><td>" << escape(c.dtype) << "</td><td class=\"s\">" << escape(c.shape)
        << "</td><td class=\"n\">" << text::ms(c.a_ms) << "</td><td class=\"n\">" << text::ms(c.b_ms)
        << "</td><td class=\"n\"><b>" << text::ratio(c.speedup) << "</b></td><td class=\"n ci\">"
        << text::interval(c.ci_lo, c.ci_hi) << "</td><td class=\"n\">" << text::pct(c.noise_pct) << "</td><td>"
        << verdict_badge(c.verdict) << "</td>";
    if (bar) {
      out << "<td class=\"n\">" << text::pct(c.bar * 100) << "</td><td class=\"n\">"
          << (c.floor ? text::pct(*c.floor * 100) : "-") << "</td>";
    }
    out << "<td class=\"n\">" << text::ms(c.a_base_ms) << "</td><td class=\"n\">" << text::ms(c.b_base_ms)
        << "</td><td class=\"n\">" << text::ratio(c.control) << "</td>";
    if (peak) out << "<td class=\"n\">" << escape(text::peak(c)) << "</td>";
    out << "<td>" << escape(c.note) << "</td></tr>\n";
  }
  out << "</table>\n";
  if (r.one_sided.empty()) return;
  out << "<h2>Only on one side (not compared)</h2>\n<table><tr><th>side</th><th>op</th><th>dtype</th><th>shape</th>"
         "<th>ms</th></tr>\n";
  for (const OneSided& o : r.one_sided) {
    out << "<tr><td>" << o.side << " only</td><td>" << escape(o.op) << "</td><td>" << escape(o.dtype)
        << "</td><td class=\"s\">" << escape(o.shape) << "</td><td class=\"n\">" << text::ms(o.ms) << "</td></tr>\n";
  }
  out << "</table>\n";
}

}  // namespace

void write_html(std::ostream& out, const Report& r, const Page& page) {
  const std::vector<std::string> legend = text::legend(r);
  const std::string title = page.title.empty() ? "zlcore compare" : page.title;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" << escape(title) << ": "
      << escape(r.a.path) << " vs " << escape(r.b.path) << "</title>\n<style>" << kStyle
      << "</style></head><body>\n"
      // The answer first, as in every format; then what the page is.
      << "<p class=\"headline\">" << escape(text::headline(r)) << "</p>\n<h1>" << escape(title) << "</h1>\n";
  if (!page.about.empty()) {
    out << "<ul class=\"about\">\n";
    for (const std::string& l : page.about) out << "<li>" << escape(l) << "</li>\n";
    out << "</ul>\n";
  }
  out << "<div class=\"sides\">A: " << escape(page.a.empty() ? text::side_line(r.a) : page.a)
      << "<br>B: " << escape(page.b.empty() ? text::side_line(r.b) : page.b) << "</div>\n";
  // What a speedup means, before the first number; the method waits below.
  out << "<div class=\"legend\">" << escape(legend.front()) << "</div>\n";
  answer_section(out, r);

  out << "<h2>Speedup per shape, grouped by op</h2>\n<div class=\"legend\">above 1: B faster; below 1: B slower; grey "
         "band: within the threshold; under each bar its dtype and shape; whiskers: the interval, an arrow with the "
         "value where it runs past the axis; point at a bar for its numbers</div>\n"
         "<div class=\"plot\">\n"
      << html::speedup_plot(r) << "</div>\n";
  out << html::provenance_section(r);
  not_passed_section(out, r);
  caliber_section(out, r);
  // The summaries a reader forwards, per op and dtype, before the full table
  // of shapes, which runs to hundreds of rows on a batch.
  out << "<h2>Geometric means</h2>\n<div class=\"legend\">" << escape(text::geomean_terms()) << "</div>\n";
  html_geomean_table(out, "overall", {r.overall});
  html_geomean_table(out, "op", r.by_op);
  html_geomean_table(out, "dtype", r.by_dtype);
  results_table(out, r);

  out << "<h2>Method</h2>\n";
  for (size_t i = 1; i < legend.size(); ++i) out << "<div class=\"legend\">" << escape(legend[i]) << "</div>\n";
  std::string warnings;
  for (const Side* s : {&r.a, &r.b}) {
    for (const std::string& w : s->warnings) warnings += "<li>" + s->label + ": " + escape(w) + "</li>\n";
  }
  if (!warnings.empty()) out << "<h2>Warnings</h2>\n<ul>\n" << warnings << "</ul>\n";
  out << "</body></html>\n";
}

}  // namespace zl::compare
