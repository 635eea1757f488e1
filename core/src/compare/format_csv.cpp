// CSV: one line per row, compared or one-sided, for spreadsheets. The caliber
// and the geomeans do not fit a flat table: --format json carries everything.
#include <cstdio>

#include "text.hpp"

namespace zl::compare {
namespace {

// RFC 4180: quote a field that holds a comma, a quote or a line break.
std::string field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

// Machine-read: 6 significant digits rather than the table's rounding.
std::string num(const std::optional<double>& v) {
  if (!v) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", *v);
  return buf;
}

}  // namespace

void write_csv(std::ostream& out, const Report& r) {
  out << "op,dtype,shape,a_ms,b_ms,speedup,noise_pct,repeats_a,repeats_b,verdict,torch_a_ms,torch_b_ms,torch_ratio,note\n";
  for (const Compared& c : r.rows) {
    out << field(c.op) << "," << field(c.dtype) << "," << field(c.shape) << "," << num(c.a_ms) << "," << num(c.b_ms) << ","
        << num(c.speedup) << "," << num(c.noise_pct) << "," << c.repeats_a << "," << c.repeats_b << ","
        << verdict_name(c.verdict) << "," << num(c.a_base_ms) << "," << num(c.b_base_ms) << "," << num(c.control) << ","
        << field(c.note) << "\n";
  }
  for (const OneSided& o : r.one_sided) {
    const bool a = o.side == "A";
    out << field(o.op) << "," << field(o.dtype) << "," << field(o.shape) << "," << (a ? num(o.ms) : "") << ","
        << (a ? "" : num(o.ms)) << ",,,,," << (a ? "ONLY_A" : "ONLY_B") << ",,,,\n";
  }
}

}  // namespace zl::compare
