// The terminal table: the default output, aligned plain text.
#include <algorithm>
#include <cstdio>

#include "kernels.hpp"
#include "provenance.hpp"
#include "text.hpp"

namespace zl::compare {
namespace {

using Cells = std::vector<std::string>;

// Columns listed in `right` are numbers and align on their last digit.
void print_aligned(std::ostream& out, const std::vector<Cells>& lines, const std::string& indent,
                   const std::vector<size_t>& right = {}) {
  std::vector<size_t> width;
  for (const Cells& l : lines) {
    width.resize(std::max(width.size(), l.size()));
    for (size_t i = 0; i < l.size(); ++i) width[i] = std::max(width[i], l[i].size());
  }
  for (const Cells& l : lines) {
    std::string line = indent;
    for (size_t i = 0; i < l.size(); ++i) {
      const std::string pad(width[i] - l[i].size(), ' ');
      const bool r = std::find(right.begin(), right.end(), i) != right.end();
      line += r ? pad + l[i] : l[i];
      if (i + 1 < l.size()) line += (r ? "" : pad) + "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
}

void add_geomeans(std::vector<Cells>& lines, const char* kind, const std::vector<Geomean>& gs) {
  for (const Geomean& g : gs) {
    lines.push_back(
        {kind, g.group, text::geo(g), text::geo_interval(g), text::ratio(g.control), std::to_string(g.rows)});
  }
}

std::string ci_header() {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g%% CI", kConfidence * 100);
  return buf;
}

// Where and with what each side was measured: one value where both sides agree.
void print_provenance(std::ostream& out, const Report& r) {
  out << "provenance:\n";
  std::vector<Cells> lines;
  for (const provenance::Line& l : provenance::lines(r)) {
    if (l.same()) {
      lines.push_back({l.what, l.a});
    } else {
      lines.push_back({l.what, "A " + l.a});
      lines.push_back({"", "B " + l.b});
    }
  }
  print_aligned(out, lines, "  ");
}

}  // namespace

void write_table(std::ostream& out, const Report& r, const Page& page) {
  out << text::headline(r) << "\n";
  if (!page.title.empty()) out << page.title << "\n";
  for (const std::string& l : page.about) out << "  " << l << "\n";
  out << "A: " << (page.a.empty() ? text::side_line(r.a) : page.a)
      << "\nB: " << (page.b.empty() ? text::side_line(r.b) : page.b) << "\n";
  print_provenance(out, r);
  for (const std::string& l : text::legend(r)) out << "  " << l << "\n";

  out << "\n" << text::caliber_summary(r) << "\n";
  std::vector<Cells> diffs;
  for (const Difference& d : r.caliber.differences) {
    diffs.push_back({d.expected ? "expected" : "DIFFERS", d.key, "A " + d.a, "B " + d.b,
                     d.detail.empty() ? "" : d.detail, text::where(d, r.caliber)});
  }
  print_aligned(out, diffs, "  ");
  out << "  autotune pairing: " << r.caliber.autotune_pairing << "\n";
  for (const std::string& n : r.caliber.notes) out << "  note: " << n << "\n";
  if (std::string w = text::control_warning(r); !w.empty()) out << "  warning: " << w << "\n";

  // The summaries per op and dtype before the table of shapes, which runs to
  // hundreds of lines on a batch.
  out << "\ngeometric means (" << text::geomean_terms() << "):\n";
  std::vector<Cells> geo{{"", "", "speedup", ci_header(), "torch A/B", "rows"}};
  add_geomeans(geo, "overall", {r.overall});
  add_geomeans(geo, "op", r.by_op);
  add_geomeans(geo, "dtype", r.by_dtype);
  print_aligned(out, geo, "  ", {2, 4, 5});

  // The bar and the floor only when a noise floor made them differ per row.
  const bool bar = text::shows_bar(r);
  Cells header{"op", "dtype", "shape", "A ms", "B ms", "speedup", ci_header(), "noise", "verdict"};
  if (bar) header.insert(header.end(), {"bar", "floor"});
  const bool peak = text::shows_peak(r);
  header.insert(header.end(), {"torch A ms", "torch B ms", "torch A/B"});
  if (peak) header.push_back("% of peak A/B");
  header.push_back("note");
  std::vector<Cells> rows{header};
  for (const Compared& c : r.rows) {
    Cells l{c.op,
            c.dtype,
            c.shape,
            text::ms(c.a_ms),
            text::ms(c.b_ms),
            text::ratio(c.speedup),
            text::interval(c.ci_lo, c.ci_hi),
            text::pct(c.noise_pct),
            verdict_name(c.verdict)};
    if (bar) l.insert(l.end(), {text::pct(c.bar * 100), c.floor ? text::pct(*c.floor * 100) : "-"});
    l.insert(l.end(), {text::ms(c.a_base_ms), text::ms(c.b_base_ms), text::ratio(c.control)});
    if (peak) l.push_back(text::peak(c));
    l.push_back(c.note);
    rows.push_back(l);
  }
  out << "\n" << text::column_terms(r) << "\n";
  std::vector<size_t> right{3, 4, 5, 7};
  const size_t torch = bar ? 11 : 9;
  if (bar) right.insert(right.end(), {9, 10});
  right.insert(right.end(), {torch, torch + 1, torch + 2});
  print_aligned(out, rows, "", right);

  // Profiled runs: which kernels' time moved in the rows that moved.
  if (std::vector<Cells> moved = kernel_lines(r); !moved.empty()) {
    out << "\nkernels that moved (SLOWER and FASTER rows; device us per call, A and B):\n";
    moved.insert(moved.begin(), Cells{"op", "dtype", "shape", "verdict", "kernel", "A us", "B us", "change"});
    print_aligned(out, moved, "  ", {5, 6, 7});
  }

  if (!r.one_sided.empty()) {
    out << "\nonly on one side (not compared):\n";
    std::vector<Cells> lines;
    for (const OneSided& o : r.one_sided)
      lines.push_back({o.side + " only", o.op, o.dtype, o.shape, text::ms(o.ms) + " ms"});
    print_aligned(out, lines, "  ");
  }

  out << "\nverdicts: " << text::counts_line(r) << "\n";
  for (const Side* s : {&r.a, &r.b}) {
    for (const std::string& w : s->warnings) out << "warning: " << s->label << ": " << w << "\n";
  }
}

}  // namespace zl::compare
