// rounds.csv reuses batch's RFC 4180 reader and writer conventions: one
// record per line, appended with one write, so a crash can tear at most the
// last record, which is then dropped on reading and cut off before a resumed
// A/B appends again.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../util/text.hpp"
#include "zlcore/ab.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"

namespace zl::ab {
namespace {

const std::vector<std::string>& columns() {
  static const std::vector<std::string> c = {"op",     "round",   "attempt", "side",  "status",
                                             "device", "seconds", "run_dir", "reason"};
  return c;
}

std::string field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

int to_int(const std::string& s, int fallback) {
  try {
    return std::stoi(s);
  } catch (const std::exception&) {
    return fallback;
  }
}

}  // namespace

std::string rounds_csv_header() { return text::join(columns(), ",") + "\n"; }

std::string rounds_csv_record(const RoundLine& l) {
  std::ostringstream secs;
  secs.precision(3);
  secs << std::fixed << l.seconds;
  // A reason is one line: a newline in it would be legal CSV but hard to read.
  std::string reason = l.reason;
  for (char& c : reason) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return field(l.op) + "," + std::to_string(l.round) + "," + std::to_string(l.attempt) + "," + field(l.side) + "," +
         field(l.status) + "," + std::to_string(l.device) + "," + secs.str() + "," + field(l.run_dir) + "," +
         field(reason) + "\n";
}

std::vector<RoundLine> read_rounds_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  bool torn = false;
  const auto records = batch::parse_csv(text.str(), &torn);
  if (records.empty() || records[0] != columns()) {
    throw UsageError(path + " is not the rounds.csv of a zlcore ab directory (its header is not " +
                     rounds_csv_header().substr(0, rounds_csv_header().size() - 1) + ")");
  }
  std::vector<RoundLine> out;
  for (size_t i = 1; i < records.size(); ++i) {
    const auto& r = records[i];
    if (r.size() != columns().size()) continue;
    RoundLine l;
    l.op = r[0];
    l.round = to_int(r[1], -1);
    l.attempt = to_int(r[2], 0);
    l.side = r[3];
    l.status = r[4];
    l.device = to_int(r[5], -1);
    try {
      // "inf" and "nan" read as numbers; a line's time is a finite one.
      if (const double v = std::stod(r[6]); std::isfinite(v)) l.seconds = v;
    } catch (const std::exception&) {
    }
    l.run_dir = r[7];
    l.reason = r[8];
    if (l.round >= 0 && l.attempt > 0) out.push_back(std::move(l));
  }
  return out;
}

std::string repair_rounds_csv(const std::string& path) {
  const std::string text = read_file(path);
  bool torn = false;
  size_t whole = 0;
  batch::parse_csv(text, &torn, &whole);
  if (!torn) return "";
  const std::string copy = keep_copy_aside(path, text);
  write_file_atomic(path, whole > 0 ? text.substr(0, whole) : rounds_csv_header());
  return "rounds.csv repaired: left out a torn last line; the file as it was is in " +
         std::filesystem::path(copy).filename().string();
}

}  // namespace zl::ab
