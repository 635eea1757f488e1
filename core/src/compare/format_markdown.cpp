// Markdown: the same report as the terminal table, for a PR or an issue.
#include "kernels.hpp"
#include "provenance.hpp"
#include "text.hpp"

namespace zl::compare {
namespace {

// Inside a code span (shapes, kernels): a pipe would still split the cell,
// and nothing else is markup there.
std::string code(std::string s) {
  for (size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2) s.replace(i, 1, "\\|");
  return s;
}

// Elsewhere a renderer also reads HTML: an op name or a note from a run
// directory reaches the page as text, never as a tag or an entity ('>'
// alone opens nothing inside a cell, and "graph->direct" stays readable).
std::string cell(const std::string& s) {
  std::string out;
  for (char c : code(s)) {
    if (c == '<') {
      out += "&lt;";
    } else if (c == '&') {
      out += "&amp;";
    } else {
      out += c;
    }
  }
  return out;
}

void markdown_geomean_table(std::ostream& out, const char* what, const std::vector<Geomean>& gs) {
  out << "| " << what << " | geomean speedup | " << kConfidence * 100
      << " % CI | torch A/B | rows |\n|---|---:|---:|---:|---:|\n";
  for (const Geomean& g : gs) {
    out << "| " << cell(g.group) << " | " << text::geo(g) << " | " << text::geo_interval(g) << " | "
        << text::ratio(g.control) << " | " << g.rows << " |\n";
  }
  out << "\n";
}

// Where and with what each side was measured, as a table a PR can quote.
void provenance_table(std::ostream& out, const Report& r) {
  out << "\n## Provenance\n\n| | A | B |\n|---|---|---|\n";
  for (const provenance::Line& l : provenance::lines(r)) {
    out << "| " << (l.same() ? l.what : "**" + l.what + "** (differs)") << " | " << cell(l.a) << " | "
        << (l.same() ? "same" : cell(l.b)) << " |\n";
  }
}

}  // namespace

void write_markdown(std::ostream& out, const Report& r, const Page& page) {
  out << "**" << text::headline(r) << "**\n\n# " << (page.title.empty() ? "zlcore compare" : page.title) << "\n\n";
  for (const std::string& l : page.about) out << "- " << l << "\n";
  out << "- A: `" << (page.a.empty() ? text::side_line(r.a) : page.a) << "`\n- B: `"
      << (page.b.empty() ? text::side_line(r.b) : page.b) << "`\n";
  for (const std::string& l : text::legend(r)) out << "- " << l << "\n";
  provenance_table(out, r);

  out << "\n## Caliber\n\n**" << text::caliber_summary(r) << "**\n\n";
  if (!r.caliber.differences.empty()) {
    out << "| | field | A | B | why | where |\n|---|---|---|---|---|---|\n";
    for (const Difference& d : r.caliber.differences) {
      out << "| " << (d.expected ? "expected" : "**DIFFERS**") << " | `" << d.key << "` | " << cell(d.a) << " | "
          << cell(d.b) << " | " << cell(d.detail) << " | " << cell(text::where(d, r.caliber)) << " |\n";
    }
    out << "\n";
  }
  out << "- autotune pairing: " << r.caliber.autotune_pairing << "\n";
  for (const std::string& n : r.caliber.notes) out << "- note: " << cell(n) << "\n";
  if (std::string w = text::control_warning(r); !w.empty()) out << "- **warning:** " << w << "\n";

  // The summaries per op and dtype before the table of shapes, which runs to
  // hundreds of rows on a batch.
  out << "\n## Geometric means\n\n" << text::geomean_terms() << "\n\n";
  markdown_geomean_table(out, "overall", {r.overall});
  markdown_geomean_table(out, "op", r.by_op);
  markdown_geomean_table(out, "dtype", r.by_dtype);

  const bool bar = text::shows_bar(r);
  const bool peak = text::shows_peak(r);
  out << "## Results\n\n"
      << text::column_terms(r) << "\n\n| op | dtype | shape | A ms | B ms | speedup | " << kConfidence * 100
      << " % CI | noise | verdict | " << (bar ? "bar | floor | " : "") << "torch A ms | torch B ms | torch A/B | "
      << (peak ? "% of peak A/B | " : "") << "note |\n"
      << "|---|---|---|---:|---:|---:|---:|---:|---|" << (bar ? "---:|---:|" : "") << "---:|---:|---:|"
      << (peak ? "---:|" : "") << "---|\n";
  for (const Compared& c : r.rows) {
    out << "| " << cell(c.op) << " | " << cell(c.dtype) << " | `" << code(c.shape) << "` | " << text::ms(c.a_ms)
        << " | " << text::ms(c.b_ms) << " | " << text::ratio(c.speedup) << " | " << text::interval(c.ci_lo, c.ci_hi)
        << " | " << text::pct(c.noise_pct) << " | " << verdict_name(c.verdict) << " | ";
    if (bar) out << text::pct(c.bar * 100) << " | " << (c.floor ? text::pct(*c.floor * 100) : "-") << " | ";
    out << text::ms(c.a_base_ms) << " | " << text::ms(c.b_base_ms) << " | " << text::ratio(c.control) << " | ";
    if (peak) out << text::peak(c) << " | ";
    out << cell(c.note) << " |\n";
  }
  if (const auto moved = kernel_lines(r); !moved.empty()) {
    out << "\n### Kernels that moved\n\nSLOWER and FASTER rows of profiled runs: device us per call of the op.\n\n"
        << "| op | dtype | shape | verdict | kernel | A us | B us | change |\n|---|---|---|---|---|---:|---:|---:|\n";
    for (const auto& l : moved) {
      out << "| " << cell(l[0]) << " | " << cell(l[1]) << " | `" << code(l[2]) << "` | " << l[3] << " | `" << code(l[4])
          << "` | " << l[5] << " | " << l[6] << " | " << l[7] << " |\n";
    }
  }
  if (!r.one_sided.empty()) {
    out << "\n### Only on one side\n\n| side | op | dtype | shape | ms |\n|---|---|---|---|---:|\n";
    for (const OneSided& o : r.one_sided) {
      out << "| " << o.side << " | " << cell(o.op) << " | " << cell(o.dtype) << " | `" << code(o.shape) << "` | "
          << text::ms(o.ms) << " |\n";
    }
  }
  out << "\n";
  out << "Verdicts: " << text::counts_line(r) << "\n";
  for (const Side* s : {&r.a, &r.b}) {
    for (const std::string& w : s->warnings) out << "\n- warning: " << s->label << ": " << cell(w);
  }
  if (!r.a.warnings.empty() || !r.b.warnings.empty()) out << "\n";
}

}  // namespace zl::compare
