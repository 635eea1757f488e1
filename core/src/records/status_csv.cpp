// ops_status.csv: one RFC 4180 record per finished op, appended with one
// write(2) each, so the file is valid CSV after a kill at any moment. Reading
// it back, and repairing what others did to it, is status_csv_read.cpp.
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "../util/csv.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/ops_status.hpp"

namespace zl::batch {
namespace {

const std::vector<std::string> kColumns = {"op",           "test_node", "status",  "exit_code",   "signal",  "backend",
                                           "device_index", "device_id", "timer",   "bench_level", "started", "seconds",
                                           "warmed_on",    "attempt",   "run_dir", "reason"};

// The time breakdown's columns, after the others: `t_<part>` (time_parts()).
// A file of an older zlcore lacks them; its rows read with the time unknown.
std::vector<std::string> all_columns() {
  std::vector<std::string> all = kColumns;
  for (const TimePart& p : time_parts()) all.push_back(std::string("t_") + p.name);
  return all;
}

}  // namespace

const std::vector<Status>& all_statuses() {
  static const std::vector<Status> all{Status::passed,        Status::unsupported,      Status::partial,
                                       Status::failed,        Status::no_tests,         Status::empty,
                                       Status::harness_error, Status::preflight_failed, Status::timeout,
                                       Status::crashed,       Status::interrupted,      Status::skipped};
  return all;
}

const char* to_string(Status s) {
  switch (s) {
    case Status::passed: return "passed";
    case Status::unsupported: return "unsupported";
    case Status::partial: return "partial";
    case Status::failed: return "failed";
    case Status::no_tests: return "no_tests";
    case Status::empty: return "empty";
    case Status::harness_error: return "harness_error";
    case Status::preflight_failed: return "preflight_failed";
    case Status::timeout: return "timeout";
    case Status::crashed: return "crashed";
    case Status::interrupted: return "interrupted";
    case Status::skipped: return "skipped";
  }
  return "?";
}

std::optional<Status> parse_status(const std::string& s) {
  for (Status st : all_statuses()) {
    if (s == to_string(st)) return st;
  }
  return std::nullopt;
}

bool is_settled(Status s) { return s == Status::passed || s == Status::unsupported; }

const std::vector<std::string>& csv_columns() {
  static const std::vector<std::string> all = all_columns();
  return all;
}
size_t csv_required_columns() { return kColumns.size(); }
std::string csv_header() { return csv::record(csv_columns()); }

std::string csv_record(const OpRow& r) {
  char seconds[32];
  // Durations are never below 0 in the file: a part computed as a
  // difference may come out a hair under, and the reader takes none.
  std::snprintf(seconds, sizeof seconds, "%.3f", std::max(0.0, r.seconds));
  std::vector<std::string> fields{r.op,
                                  r.test_node,
                                  to_string(r.status),
                                  std::to_string(r.exit_code),
                                  std::to_string(r.signal),
                                  r.backend,
                                  std::to_string(r.device_index),
                                  r.device_id,
                                  r.timer,
                                  r.bench_level,
                                  r.started,
                                  seconds,
                                  r.warmed_on,
                                  std::to_string(r.attempt),
                                  r.run_dir,
                                  r.reason};
  for (const TimePart& p : time_parts()) {
    char v[32] = "";
    if (r.time.known) std::snprintf(v, sizeof v, "%.3f", std::max(0.0, r.time.*p.field));
    fields.emplace_back(v);
  }
  return csv::record(fields);
}

std::vector<std::vector<std::string>> parse_csv(const std::string& text, bool* dropped_tail, size_t* whole_bytes) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool in_quotes = false;
  bool any = false;  // the current record has started
  size_t i = 0;
  size_t whole = 0;
  while (i < text.size()) {
    char c = text[i];
    any = true;
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        field += c;
      }
    } else if (c == '"') {
      in_quotes = true;
    } else if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      record.push_back(std::move(field));
      field.clear();
      records.push_back(std::move(record));
      record.clear();
      any = false;
      whole = i + 1;
    } else {
      field += c;
    }
    ++i;
  }
  // Whatever follows the last line end was cut off mid-write: every record
  // this tool writes ends with '\n'.
  if (dropped_tail) *dropped_tail = any;
  if (whole_bytes) *whole_bytes = whole;
  return records;
}

void append_status_row(const std::string& path, const OpRow& row) { append_record(path, csv_record(row)); }

}  // namespace zl::batch
