// The calibration report as a terminal table, Markdown and CSV. Every one
// names the method first: a false-verdict rate means nothing without the
// rule that produced the verdicts.
#include <cmath>
#include <cstdio>

#include "text.hpp"
#include "zlcore/compare_calibrate.hpp"

namespace zl::compare {
namespace {

using Cells = std::vector<std::string>;

std::string rate(size_t part, size_t whole) {
  if (whole == 0) return "-";
  return text::pct(100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

size_t count_of(const std::map<Verdict, size_t>& counts, Verdict v) {
  auto it = counts.find(v);
  return it == counts.end() ? 0 : it->second;
}

std::string pair_name(const Calibration& c, const CalibrationPair& p) {
  return c.sides[p.a].label + " vs " + c.sides[p.b].label;
}

std::string floor_text(double log_ratio) { return text::pct(std::expm1(log_ratio) * 100); }

std::string factor_text(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", f);
  return buf;
}

std::vector<std::string> header_lines(const Calibration& c) {
  std::vector<std::string> lines{"calibration: " + std::to_string(c.sides.size()) +
                                 " runs of the same code compared pairwise (" + std::to_string(c.pairs.size()) +
                                 " pair" + (c.pairs.size() == 1 ? "" : "s") +
                                 "): every FASTER or SLOWER is a false verdict"};
  for (const Side& s : c.sides) lines.push_back(s.label + ": " + text::side_line(s));
  for (const std::string& l : text::method_lines(c.options)) lines.push_back(l);
  if (c.options.noise_floor) {
    lines.push_back("noise floor applied to the pairs: " + c.options.noise_floor->path + " (sha256 " +
                    c.options.noise_floor->sha256.substr(0, 16) + ")");
  }
  lines.push_back(
      "floor: the largest |ratio - 1| between two runs' latencies of a row; bar: what 'compare --noise-floor' makes of "
      "it, exp(factor * log(1 + floor)) - 1 and at least the threshold, where factor makes a new A/A difference pass "
      "the "
      "bar with probability alpha");
  return lines;
}

Cells pair_cells(const Calibration& c, const CalibrationPair& p) {
  const size_t f = count_of(p.counts, Verdict::Faster), s = count_of(p.counts, Verdict::Slower);
  const size_t same = count_of(p.counts, Verdict::Same), noisy = count_of(p.counts, Verdict::Noisy);
  const size_t tested = f + s + same + noisy;
  return {pair_name(c, p),
          std::to_string(f),
          std::to_string(s),
          std::to_string(same),
          std::to_string(noisy),
          std::to_string(count_of(p.counts, Verdict::NoWork)),
          std::to_string(count_of(p.counts, Verdict::Unconfirmed)),
          std::to_string(count_of(p.counts, Verdict::Error)),
          rate(f + s, tested),
          rate(noisy, tested)};
}

Cells rate_cells(const CalibrationRate& r) {
  return {r.group,
          std::to_string(r.tested),
          std::to_string(r.false_verdicts),
          rate(r.false_verdicts, r.tested),
          std::to_string(r.noisy),
          rate(r.noisy, r.tested),
          std::to_string(r.untested)};
}

Cells row_cells(const CalibrationRow& r) {
  return {r.op,
          r.dtype,
          r.shape,
          std::to_string(r.runs),
          text::ms(r.mean_ms),
          floor_text(r.max_log_ratio),
          text::pct(r.spread_pct),
          factor_text(r.factor),
          text::pct(r.bar * 100),
          std::to_string(r.false_verdicts) + "/" + std::to_string(r.tested)};
}

const Cells kPairHeader{"pair",    "FASTER",      "SLOWER", "SAME",       "NOISY",
                        "NO_WORK", "UNCONFIRMED", "ERROR",  "false rate", "NOISY rate"};
const Cells kRateHeader{"op", "tested", "false", "false rate", "NOISY", "NOISY rate", "untested"};
const Cells kRowHeader{"op", "dtype", "shape", "runs", "mean ms", "floor", "spread", "factor", "bar", "false/tested"};

void print_aligned(std::ostream& out, const std::vector<Cells>& lines, size_t first_number) {
  std::vector<size_t> width;
  for (const Cells& l : lines) {
    width.resize(std::max(width.size(), l.size()));
    for (size_t i = 0; i < l.size(); ++i) width[i] = std::max(width[i], l[i].size());
  }
  for (const Cells& l : lines) {
    std::string line = "  ";
    for (size_t i = 0; i < l.size(); ++i) {
      const std::string pad(width[i] - l[i].size(), ' ');
      line += i >= first_number ? pad + l[i] : l[i] + (i + 1 < l.size() ? pad : "");
      if (i + 1 < l.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
}

std::string md_cell(std::string s) {
  for (size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2) s.replace(i, 1, "\\|");
  return s;
}

void md_table(std::ostream& out, const std::vector<Cells>& lines, size_t first_number) {
  for (size_t k = 0; k < lines.size(); ++k) {
    out << "|";
    for (const std::string& cell : lines[k]) out << " " << md_cell(cell) << " |";
    out << "\n";
    if (k == 0) {
      out << "|";
      for (size_t i = 0; i < lines[0].size(); ++i) out << (i >= first_number ? "---:|" : "---|");
      out << "\n";
    }
  }
}

// The three tables as rows of cells, shared by the table and Markdown.
struct Tables {
  std::vector<Cells> pairs, rates, rows;
};

Tables tables(const Calibration& c) {
  Tables t;
  t.pairs.push_back(kPairHeader);
  for (const CalibrationPair& p : c.pairs) t.pairs.push_back(pair_cells(c, p));
  t.rates.push_back(kRateHeader);
  t.rates.push_back(rate_cells(c.overall));
  for (const CalibrationRate& r : c.by_op) t.rates.push_back(rate_cells(r));
  t.rows.push_back(kRowHeader);
  for (const CalibrationRow& r : c.rows) t.rows.push_back(row_cells(r));
  return t;
}

}  // namespace

void write_calibration_table(std::ostream& out, const Calibration& c) {
  const std::vector<std::string> head = header_lines(c);
  out << head[0] << "\n";
  for (size_t i = 1; i < head.size(); ++i) out << (i <= c.sides.size() ? "" : "  ") << head[i] << "\n";
  out << "\ncaliber per pair:\n";
  for (const CalibrationPair& p : c.pairs) out << "  " << pair_name(c, p) << ": " << p.caliber << "\n";
  for (const std::string& n : c.notes) out << "  note: " << n << "\n";
  const Tables t = tables(c);
  out << "\nverdicts per pair:\n";
  print_aligned(out, t.pairs, 1);
  out << "\nfalse verdicts over all pairs, overall and per op:\n";
  print_aligned(out, t.rates, 1);
  out << "\nnoise floor per row:\n";
  print_aligned(out, t.rows, 3);
}

void write_calibration_markdown(std::ostream& out, const Calibration& c) {
  const std::vector<std::string> head = header_lines(c);
  out << "# zlcore compare --calibrate\n\n" << head[0] << "\n\n";
  for (size_t i = 1; i < head.size(); ++i) out << "- " << (i <= c.sides.size() ? "`" + head[i] + "`" : head[i]) << "\n";
  out << "\n## Caliber per pair\n\n";
  for (const CalibrationPair& p : c.pairs) out << "- " << pair_name(c, p) << ": " << p.caliber << "\n";
  for (const std::string& n : c.notes) out << "- note: " << md_cell(n) << "\n";
  const Tables t = tables(c);
  out << "\n## Verdicts per pair\n\n";
  md_table(out, t.pairs, 1);
  out << "\n## False verdicts over all pairs\n\n";
  md_table(out, t.rates, 1);
  out << "\n## Noise floor per row\n\n";
  md_table(out, t.rows, 3);
}

void write_calibration_csv(std::ostream& out, const Calibration& c) {
  for (const std::string& l : header_lines(c)) out << "# " << l << "\n";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", 100 * c.overall.rate());
  out << "# false verdicts: " << c.overall.false_verdicts << " of " << c.overall.tested << " tested row comparisons ("
      << buf << " %)\n";
  out << "op,dtype,shape,runs,mean_ms,floor_pct,max_log_ratio,spread_pct,factor,bar_pct,tested,false_verdicts\n";
  auto field = [](const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string q = "\"";
    for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
  };
  auto num = [](double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.6g", v);
    return std::string(b);
  };
  for (const CalibrationRow& r : c.rows) {
    out << field(r.op) << "," << field(r.dtype) << "," << field(r.shape) << "," << r.runs << "," << num(r.mean_ms)
        << "," << num(std::expm1(r.max_log_ratio) * 100) << "," << num(r.max_log_ratio) << "," << num(r.spread_pct)
        << "," << num(r.factor) << "," << num(r.bar * 100) << "," << r.tested << "," << r.false_verdicts << "\n";
  }
}

}  // namespace zl::compare
