// Reading ops_status.csv back, and repairing it. The file is the batch's
// history: what zlcore appended is always whole records, but a person, a
// spreadsheet or a full disk can leave a blank line, a stray quote, an extra
// column or half a record in it. Each of those costs only itself: every
// record that can be read is kept, and before the file is rewritten it is
// copied aside, so a repair never deletes anything.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>

#include "../util/csv_scan.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/ops_status.hpp"
#include "zlcore/stray_quote.hpp"

namespace zl::batch {
namespace {

using csv::scan_record;
using csv::Scanned;

bool blank(const std::string& t, size_t from, size_t to) {
  return std::all_of(t.begin() + static_cast<long>(from), t.begin() + static_cast<long>(to),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

size_t count_newlines(const std::string& t, size_t from, size_t to) {
  return static_cast<size_t>(std::count(t.begin() + static_cast<long>(from), t.begin() + static_cast<long>(to), '\n'));
}

bool to_int(const std::string& s, int* out) {
  if (s.empty()) return true;
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

// A few characters of a line, for a message (kept to one line).
std::string excerpt(const std::string& t, size_t from) {
  std::string s = t.substr(from, std::min<size_t>(48, t.size() - from));
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return s + (t.size() - from > 48 ? "..." : "");
}

// Column name -> index in the file's own header.
using Layout = std::vector<size_t>;                  // for each of zlcore's columns, its field index
constexpr size_t kAbsent = static_cast<size_t>(-1);  // a column the file does not have (an older zlcore's)

// Ours in our order; `with_time` false: an older zlcore's, without t_*.
Layout our_layout(bool with_time = true) {
  Layout l;
  for (size_t i = 0; i < csv_columns().size(); ++i) l.push_back(with_time || i < csv_required_columns() ? i : kAbsent);
  return l;
}

// The header's layout when it names every required column of ours (maybe
// with more, maybe in another order); empty when it does not.
Layout layout_of(const std::vector<std::string>& header) {
  std::map<std::string, size_t> at;
  for (size_t i = 0; i < header.size(); ++i) at.emplace(header[i], i);
  Layout l;
  for (size_t c = 0; c < csv_columns().size(); ++c) {
    auto it = at.find(csv_columns()[c]);
    if (it == at.end() && c < csv_required_columns()) return {};
    l.push_back(it == at.end() ? kAbsent : it->second);
  }
  return l;
}

// The t_* fields into row->time; the reason they do not read otherwise.
std::string time_from(const std::vector<std::string>& f, const Layout& l, OpRow* row) {
  const std::vector<TimePart>& parts = time_parts();
  for (size_t i = 0; i < parts.size(); ++i) {
    const size_t column = l[csv_required_columns() + i];
    if (column == kAbsent || f[column].empty()) continue;
    double v = 0;
    if (std::string why = read_seconds(f[column], std::string("t_") + parts[i].name, &v); !why.empty()) return why;
    row->time.*parts[i].field = v;
    row->time.known = true;
  }
  return "";
}

// A row from fields under a layout; the reason it is not one otherwise.
std::string row_from(const std::vector<std::string>& f, const Layout& l, size_t width, OpRow* row) {
  if (f.size() < width) {
    return std::to_string(f.size()) + " field(s), the header has " + std::to_string(width);
  }
  static const std::string kNone;
  auto at = [&](size_t column) -> const std::string& { return l[column] == kAbsent ? kNone : f[l[column]]; };
  const auto status = parse_status(at(2));
  if (!status) return "status '" + excerpt(at(2), 0) + "' is not one zlcore writes";
  if (at(0).empty()) return "no op name";
  OpRow r;
  r.op = at(0);
  r.test_node = at(1);
  r.status = *status;
  r.backend = at(5);
  r.device_id = at(7);
  r.timer = at(8);
  r.bench_level = at(9);
  r.started = at(10);
  r.warmed_on = at(12);
  r.run_dir = at(14);
  r.reason = at(15);
  if (!to_int(at(3), &r.exit_code) || !to_int(at(4), &r.signal) || !to_int(at(6), &r.device_index) ||
      !to_int(at(13), &r.attempt)) {
    return "a number field is not a whole number";
  }
  if (!at(11).empty()) {
    if (std::string why = read_seconds(at(11), "seconds", &r.seconds); !why.empty()) return why;
  }
  if (std::string why = time_from(f, l, &r); !why.empty()) return why;
  *row = std::move(r);
  return "";
}

// Whether a record is a whole row of ours, of this or an older zlcore.
bool is_our_row(const std::vector<std::string>& fields) {
  OpRow row;
  return row_from(fields, our_layout(), csv_columns().size(), &row).empty() ||
         row_from(fields, our_layout(false), csv_required_columns(), &row).empty();
}

std::string describe_repair(const StatusFile& f, const std::string& copy) {
  std::vector<std::string> what;
  if (!f.unreadable.empty()) {
    std::string list;
    for (size_t i = 0; i < f.unreadable.size() && i < 3; ++i) list += (i ? "; " : "") + f.unreadable[i];
    if (f.unreadable.size() > 3) list += "; and " + std::to_string(f.unreadable.size() - 3) + " more";
    what.push_back("left out " + std::to_string(f.unreadable.size()) + " record(s) that could not be read (" + list +
                   ")");
  }
  if (f.dropped_tail) what.push_back("left out a torn last line");
  if (f.blank_lines > 0) what.push_back("dropped " + std::to_string(f.blank_lines) + " blank line(s)");
  if (f.rows_with_extra_fields > 0) {
    what.push_back("dropped the extra fields of " + std::to_string(f.rows_with_extra_fields) + " row(s)");
  }
  if (!f.header_problem.empty()) what.push_back("rewrote the header (" + f.header_problem + ")");
  std::string out = "ops_status.csv repaired: kept " + std::to_string(f.rows.size()) + " row(s)";
  for (const std::string& w : what) out += "; " + w;
  return out + (copy.empty() ? "" : "; the file as it was is in " + std::filesystem::path(copy).filename().string());
}

}  // namespace

std::string read_seconds(const std::string& text, const std::string& name, double* out) {
  constexpr double kYear = 365.0 * 24 * 3600;
  // "-0.000": an older zlcore wrote a part a hair under 0 as it came.
  const std::string digits =
      text.rfind("-0.", 0) == 0 && text.find_first_not_of("-0.") == std::string::npos ? text.substr(1) : text;
  const bool plain = !digits.empty() && digits.find_first_not_of("0123456789.") == std::string::npos;
  try {
    size_t used = 0;
    const double v = plain ? std::stod(digits, &used) : -1;
    if (used == digits.size() && std::isfinite(v) && v >= 0 && v <= kYear) {
      *out = v;
      return "";
    }
  } catch (const std::exception&) {
  }
  return name + " '" + excerpt(text, 0) + "' is not a number of seconds from 0 to a year";
}

StatusFile parse_status_text(const std::string& text, const std::string& shown) {
  StatusFile out;
  out.valid_bytes = text.size();
  const size_t ours = csv_columns().size();
  Layout layout;        // empty until the header (or a first row) is seen
  size_t width = ours;  // fields in the file's header
  size_t pos = 0, line = 1;
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
    const Scanned r = scan_record(text, pos);
    const std::string where = "line " + std::to_string(line) + ": ";
    if (!r.complete) {
      if (const auto next = records::after_stray_quote(text, pos, is_our_row)) {
        out.unreadable.push_back(where + records::kQuoteNeverCloses);
        pos = *next;
        ++line;
        continue;
      }
      out.dropped_tail = true;
      out.valid_bytes = pos;
      break;
    }
    auto skip = [&](const std::string& why) {
      out.unreadable.push_back(where + why);
      // A record that ran over several lines and still did not read: trust
      // only that its first line is bad.
      const size_t next = r.multiline ? r.first_line_end : r.end;
      line += count_newlines(text, pos, next);
      pos = next;
    };
    if (layout.empty()) {
      if (r.fields == csv_columns()) {
        layout = our_layout();
        pos = r.end;
        ++line;
        continue;
      }
      if (Layout l = layout_of(r.fields); !l.empty()) {
        layout = l;
        width = r.fields.size();
        const std::vector<std::string> older(csv_columns().begin(),
                                             csv_columns().begin() + static_cast<long>(csv_required_columns()));
        out.header_problem = r.fields == older ? "it was an older zlcore's, without the t_* time columns"
                                               : "its columns were not zlcore's own, in zlcore's order";
        pos = r.end;
        ++line;
        continue;
      }
      OpRow probe;
      if (row_from(r.fields, our_layout(), ours, &probe).empty()) {
        layout = our_layout();  // no header, but rows of ours: read them
        out.header_problem = "it was missing";
      } else if (row_from(r.fields, our_layout(false), csv_required_columns(), &probe).empty()) {
        layout = our_layout(false);  // an older zlcore's rows, without a header
        width = csv_required_columns();
        out.header_problem = "it was missing";
      } else {
        skip("neither zlcore's header nor a row");
        continue;
      }
    } else if (r.fields == csv_columns()) {
      skip("the header again");
      continue;
    }
    OpRow row;
    if (r.multiline && r.fields.size() != width) {
      skip(std::to_string(r.fields.size()) + " field(s) over several lines, the header has " + std::to_string(width));
      continue;
    }
    if (const std::string why = row_from(r.fields, layout, width, &row); !why.empty()) {
      skip(why);
      continue;
    }
    if (r.fields.size() > width) ++out.rows_with_extra_fields;
    out.rows.push_back(std::move(row));
    line += count_newlines(text, pos, r.end);
    pos = r.end;
  }
  if (layout.empty()) {
    if (!out.unreadable.empty()) {
      throw UsageError(shown + " is not a zlcore batch's ops_status.csv (neither its header nor a row zlcore writes; " +
                       "it begins '" + excerpt(text, 0) + "'); move it away or choose another --out");
    }
    out.header_problem = text.empty() ? "the file was empty" : "it was missing";
  }
  return out;
}

std::optional<std::map<std::string, std::string>> current_run_dirs(const std::string& text) {
  size_t pos = 0;
  while (pos < text.size() && blank(text, pos, std::min(text.find('\n', pos), text.size()))) {
    const size_t nl = text.find('\n', pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
  }
  const Scanned header = scan_record(text, pos);
  if (!header.complete) return std::nullopt;
  const auto op_at = std::find(header.fields.begin(), header.fields.end(), "op");
  const auto dir_at = std::find(header.fields.begin(), header.fields.end(), "run_dir");
  if (op_at == header.fields.end() || dir_at == header.fields.end()) return std::nullopt;
  const size_t op_i = static_cast<size_t>(op_at - header.fields.begin());
  const size_t dir_i = static_cast<size_t>(dir_at - header.fields.begin());
  std::map<std::string, std::string> out;
  for (pos = header.end; pos < text.size();) {
    const Scanned r = scan_record(text, pos);
    // Only whole records; one over several lines only when it has the
    // header's fields (a quoted line end), not when a stray quote ran on.
    if (!r.complete) break;
    const bool whole = !r.multiline || r.fields.size() == header.fields.size();
    if (whole && r.fields.size() > std::max(op_i, dir_i) && !r.fields[op_i].empty()) {
      out[r.fields[op_i]] = r.fields[dir_i];
    }
    pos = whole ? r.end : r.first_line_end;
  }
  return out;
}

StatusFile read_status_csv(const std::string& path) { return parse_status_text(read_file(path), path); }

void prepare_status_csv(const std::string& path, std::string* note) {
  if (!std::filesystem::exists(path)) {
    write_file_atomic(path, csv_header());
    return;
  }
  const std::string text = read_file(path);
  const StatusFile f = parse_status_text(text, path);
  if (!f.needs_repair()) return;
  // Only whitespace: nothing to keep a copy of.
  const std::string copy = blank(text, 0, text.size()) ? "" : keep_copy_aside(path, text);
  std::string fixed = csv_header();
  for (const OpRow& r : f.rows) fixed += csv_record(r);
  write_file_atomic(path, fixed);
  if (note) *note = describe_repair(f, copy);
}

}  // namespace zl::batch
