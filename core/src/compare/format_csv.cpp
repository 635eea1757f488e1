// CSV: one line per row, compared or one-sided, for spreadsheets, after '#'
// comment lines naming the method. The caliber and the geomeans do not fit a
// flat table: --format json carries everything.
#include <cmath>
#include <cstdio>

#include "../util/csv.hpp"
#include "../util/text.hpp"
#include "text.hpp"

namespace zl::compare {
namespace {

// Machine-read: 6 significant digits rather than the table's rounding.
std::string num(const std::optional<double>& v) {
  // Empty, as for a value that is absent: "inf" is no number a reader takes.
  if (!v || !std::isfinite(*v)) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", *v);
  return buf;
}

void line(std::ostream& out, const std::vector<std::string>& cells) {
  for (size_t i = 0; i < cells.size(); ++i) out << (i ? "," : "") << csv::field(cells[i]);
  out << "\n";
}

}  // namespace

void write_csv(std::ostream& out, const Report& r) {
  // The method and what the ratios mean, as comment lines a reader can skip
  // (pandas: comment='#'): a bare table of verdicts would not say how they
  // were reached.
  for (const std::string& l : text::legend(r)) out << "# " << l << "\n";
  // What was skipped while reading (a torn results line, a missing file) is
  // said here as in every other format: a '#' line, one per warning.
  for (const Side* s : {&r.a, &r.b}) {
    for (const std::string& w : s->warnings) out << "# warning: " << s->label << ": " << zl::text::one_line(w) << "\n";
  }
  const std::vector<std::string> header{
      "op",          "dtype",     "shape",          "a_ms",           "b_ms",      "speedup",    "ci_low",
      "ci_high",     "p_value",   "bar_pct",        "floor_pct",      "noise_pct", "repeats_a",  "repeats_b",
      "samples_a",   "samples_b", "samples_kind_a", "samples_kind_b", "verdict",   "torch_a_ms", "torch_b_ms",
      "torch_ratio", "note"};
  line(out, header);
  for (const Compared& c : r.rows) {
    line(out, {c.op,
               c.dtype,
               c.shape,
               num(c.a_ms),
               num(c.b_ms),
               num(c.speedup),
               num(c.ci_lo),
               num(c.ci_hi),
               num(c.p_value),
               num(c.bar * 100),
               c.floor ? num(*c.floor * 100) : "",
               num(c.noise_pct),
               std::to_string(c.repeats_a),
               std::to_string(c.repeats_b),
               std::to_string(c.values_a.size()),
               std::to_string(c.values_b.size()),
               sample_kind_name(c.kind_a),
               sample_kind_name(c.kind_b),
               verdict_name(c.verdict),
               num(c.a_base_ms),
               num(c.b_base_ms),
               num(c.control),
               c.note});
  }
  for (const OneSided& o : r.one_sided) {
    std::vector<std::string> cells(header.size());
    const bool a = o.side == "A";
    cells[0] = o.op;
    cells[1] = o.dtype;
    cells[2] = o.shape;
    cells[a ? 3 : 4] = num(o.ms);
    cells[18] = a ? "ONLY_A" : "ONLY_B";
    line(out, cells);
  }
}

}  // namespace zl::compare
