// Markdown: the same report as the terminal table, for a PR or an issue.
#include "text.hpp"

namespace zl::compare {
namespace {

// A pipe inside a cell would split it.
std::string cell(std::string s) {
  for (size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2) s.replace(i, 1, "\\|");
  return s;
}

void geomean_table(std::ostream& out, const char* what, const std::vector<Geomean>& gs) {
  out << "| " << what << " | geomean speedup | " << kConfidence * 100
      << " % CI | torch A/B | rows |\n|---|---:|---:|---:|---:|\n";
  for (const Geomean& g : gs) {
    out << "| " << cell(g.group) << " | " << text::geo(g) << " | " << text::geo_interval(g) << " | "
        << text::ratio(g.control) << " | " << g.rows << " |\n";
  }
  out << "\n";
}

}  // namespace

void write_markdown(std::ostream& out, const Report& r) {
  out << "**" << text::headline(r) << "**\n\n# zlcore compare\n\n- A: `" << text::side_line(r.a) << "`\n- B: `"
      << text::side_line(r.b) << "`\n";
  for (const std::string& l : text::legend(r)) out << "- " << l << "\n";

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

  const bool bar = text::shows_bar(r);
  const bool peak = text::shows_peak(r);
  out << "\n## Results\n\n| op | dtype | shape | A ms | B ms | speedup | " << kConfidence * 100
      << " % CI | noise | verdict | " << (bar ? "bar | floor | " : "") << "torch A ms | torch B ms | torch A/B | "
      << (peak ? "% of peak A/B | " : "") << "note |\n"
      << "|---|---|---|---:|---:|---:|---:|---:|---|" << (bar ? "---:|---:|" : "") << "---:|---:|---:|"
      << (peak ? "---:|" : "") << "---|\n";
  for (const Compared& c : r.rows) {
    out << "| " << cell(c.op) << " | " << cell(c.dtype) << " | `" << cell(c.shape) << "` | " << text::ms(c.a_ms)
        << " | " << text::ms(c.b_ms) << " | " << text::ratio(c.speedup) << " | " << text::interval(c.ci_lo, c.ci_hi)
        << " | " << text::pct(c.noise_pct) << " | " << verdict_name(c.verdict) << " | ";
    if (bar) out << text::pct(c.bar * 100) << " | " << (c.floor ? text::pct(*c.floor * 100) : "-") << " | ";
    out << text::ms(c.a_base_ms) << " | " << text::ms(c.b_base_ms) << " | " << text::ratio(c.control) << " | ";
    if (peak) out << text::peak(c) << " | ";
    out << cell(c.note) << " |\n";
  }
  if (!r.one_sided.empty()) {
    out << "\n### Only on one side\n\n| side | op | dtype | shape | ms |\n|---|---|---|---|---:|\n";
    for (const OneSided& o : r.one_sided) {
      out << "| " << o.side << " | " << cell(o.op) << " | " << cell(o.dtype) << " | `" << cell(o.shape) << "` | "
          << text::ms(o.ms) << " |\n";
    }
  }
  out << "\n## Geometric means\n\n";
  geomean_table(out, "overall", {r.overall});
  geomean_table(out, "op", r.by_op);
  geomean_table(out, "dtype", r.by_dtype);
  out << "Verdicts: " << text::counts_line(r) << "\n";
  for (const Side* s : {&r.a, &r.b}) {
    for (const std::string& w : s->warnings) out << "\n- warning: " << s->label << ": " << cell(w);
  }
  if (!r.a.warnings.empty() || !r.b.warnings.empty()) out << "\n";
}

}  // namespace zl::compare
