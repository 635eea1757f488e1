// rounds.csv reuses batch's CSV conventions: one record per line, appended
// with one write, so a crash can tear at most the last record, which is then
// dropped on reading and cut off before a resumed A/B appends again. A person
// or a tool can do worse (a status zlcore never writes, a quote that never
// closes); as for ops_status.csv, each damaged line costs only itself: every
// whole line is kept, the file as it was is copied aside before a repair, and
// the rounds whose lines were lost run again.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "../util/csv_scan.hpp"
#include "../util/text.hpp"
#include "zlcore/ab.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/ops_status.hpp"
#include "zlcore/stray_quote.hpp"

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

// A whole number, all of `s`.
bool whole_number(const std::string& s, int* out) {
  try {
    size_t used = 0;
    const int v = std::stoi(s, &used);
    if (used != s.size()) return false;
    *out = v;
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// A few characters of a field, for a message (kept to one line).
std::string excerpt(const std::string& s) {
  std::string e = s.substr(0, 32);
  for (char& c : e) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return e + (s.size() > 32 ? "..." : "");
}

bool blank(const std::string& t, size_t from, size_t to) {
  return std::all_of(t.begin() + static_cast<long>(from), t.begin() + static_cast<long>(to),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

// Where the runner puts a run: runs/<op>/... of the A/B, or of a Slurm shard
// (shards/<n>/runs/...). Anything else, an absolute path or one that climbs
// out with "..", would have a resume read, pool and replay winners from a
// directory that is not this A/B's.
bool run_dir_of_ours(const std::string& rel) {
  if (rel.empty()) return true;
  const std::vector<std::string> parts = text::split_keep_empty(rel, "/");
  size_t at = 0;
  if (parts.size() > 2 && parts[0] == "shards" && !parts[1].empty() &&
      std::all_of(parts[1].begin(), parts[1].end(), [](char c) { return c >= '0' && c <= '9'; })) {
    at = 2;
  }
  if (parts.size() < at + 2 || parts[at] != "runs") return false;
  return std::none_of(parts.begin() + static_cast<long>(at), parts.end(),
                      [](const std::string& p) { return p.empty() || p == "." || p == ".."; });
}

// A line from a record's fields, as the runner writes them: a run's line has
// a run's status, a round's line (side "*") one of the three a round ends
// with. Anything else is not a line of ours, however it reads as CSV: a
// round settled by it would be neither run again nor reported.
std::string line_from(const std::vector<std::string>& f, RoundLine* l) {
  if (f.size() != columns().size()) {
    return std::to_string(f.size()) + " field(s), the header has " + std::to_string(columns().size());
  }
  if (f[0].empty()) return "no op name";
  if (!whole_number(f[1], &l->round) || l->round < 0) return "round '" + excerpt(f[1]) + "' is not a round number";
  if (!whole_number(f[2], &l->attempt) || l->attempt < 1) {
    return "attempt '" + excerpt(f[2]) + "' is not an attempt number";
  }
  static const std::set<std::string> sides = {"A", "B", "A2", "*"};
  if (!sides.count(f[3])) return "side '" + excerpt(f[3]) + "' is not A, B, A2 or *";
  static const std::set<std::string> round_ends = {"done", "failed", "unsupported"};
  if (f[3] == "*" ? !round_ends.count(f[4]) : !batch::parse_status(f[4])) {
    return "status '" + excerpt(f[4]) + "' is not one zlcore writes" + (f[3] == "*" ? " for a round" : "");
  }
  if (!whole_number(f[5], &l->device)) return "device '" + excerpt(f[5]) + "' is not a whole number";
  l->seconds = 0;
  if (!f[6].empty()) {
    if (std::string why = batch::read_seconds(f[6], "seconds", &l->seconds); !why.empty()) return why;
  }
  if (!run_dir_of_ours(f[7])) return "run_dir '" + excerpt(f[7]) + "' is not a directory under runs/";
  l->op = f[0];
  l->side = f[3];
  l->status = f[4];
  l->run_dir = f[7];
  l->reason = f[8];
  return "";
}

bool is_our_line(const std::vector<std::string>& fields) {
  RoundLine l;
  return line_from(fields, &l).empty();
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

RoundsFile parse_rounds_text(const std::string& text, const std::string& shown) {
  RoundsFile out;
  size_t pos = 0, line = 1;
  bool header = false;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    const size_t line_end = nl == std::string::npos ? text.size() : nl;
    if (blank(text, pos, line_end)) {
      if (nl == std::string::npos) break;  // trailing spaces: nothing lost
      ++out.blank_lines;
      pos = nl + 1;
      ++line;
      continue;
    }
    const csv::Scanned r = csv::scan_record(text, pos);
    if (!header) {
      if (!r.complete || r.fields != columns()) {
        throw UsageError(shown + " is not the rounds.csv of a zlcore ab directory (its header is not " +
                         rounds_csv_header().substr(0, rounds_csv_header().size() - 1) + ")");
      }
      header = true;
      pos = r.end;
      ++line;
      continue;
    }
    const std::string where = "line " + std::to_string(line) + ": ";
    if (!r.complete) {
      if (const auto next = records::after_stray_quote(text, pos, is_our_line)) {
        out.unreadable.push_back(where + records::kQuoteNeverCloses);
        pos = *next;
        ++line;
        continue;
      }
      out.dropped_tail = true;
      break;
    }
    RoundLine l;
    const std::string why = r.multiline && r.fields.size() != columns().size()
                                ? std::to_string(r.fields.size()) + " field(s) over several lines, the header has " +
                                      std::to_string(columns().size())
                                : line_from(r.fields, &l);
    if (!why.empty()) {
      out.unreadable.push_back(where + why);
      // A record that ran over several lines and still did not read: trust
      // only that its first line is bad.
      const size_t next = r.multiline ? r.first_line_end : r.end;
      line += static_cast<size_t>(
          std::count(text.begin() + static_cast<long>(pos), text.begin() + static_cast<long>(next), '\n'));
      pos = next;
      continue;
    }
    out.lines.push_back(std::move(l));
    line += static_cast<size_t>(
        std::count(text.begin() + static_cast<long>(pos), text.begin() + static_cast<long>(r.end), '\n'));
    pos = r.end;
  }
  // No record at all: as ops_status.csv, rewritten with its header, and
  // every round runs again.
  out.empty = !header;
  return out;
}

std::vector<RoundLine> read_rounds_csv(const std::string& path) {
  return parse_rounds_text(read_file(path), path).lines;
}

std::string repair_rounds_csv(const std::string& path) {
  const std::string text = read_file(path);
  const RoundsFile f = parse_rounds_text(text, path);
  if (!f.needs_repair()) return "";
  const std::string copy = keep_copy_aside(path, text);
  std::string fixed = rounds_csv_header();
  for (const RoundLine& l : f.lines) fixed += rounds_csv_record(l);
  write_file_atomic(path, fixed);
  std::string out = "rounds.csv repaired: kept " + std::to_string(f.lines.size()) + " line(s)";
  if (!f.unreadable.empty()) {
    std::string list;
    for (size_t i = 0; i < f.unreadable.size() && i < 3; ++i) list += (i ? "; " : "") + f.unreadable[i];
    if (f.unreadable.size() > 3) list += "; and " + std::to_string(f.unreadable.size() - 3) + " more";
    out += "; left out " + std::to_string(f.unreadable.size()) + " line(s) that could not be read (" + list +
           "); a round left without its round line runs again";
  }
  if (f.empty) out += "; it was empty, so the header was written again and every round runs";
  if (f.dropped_tail) out += "; left out a torn last line";
  if (f.blank_lines > 0) out += "; dropped " + std::to_string(f.blank_lines) + " blank line(s)";
  return out + "; the file as it was is in " + std::filesystem::path(copy).filename().string();
}

}  // namespace zl::ab
