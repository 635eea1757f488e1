// ops_status.csv, the record a batch keeps of its ops: one row per finished
// op, its status and where its run directory is. Below batch, compare and ab,
// which all read it (compare follows a batch's rows to its runs, ab's
// rounds.csv uses the same statuses), so none of them needs another's code.
// The names stay in zl::batch: the file and its statuses are the batch's.
//
// In core/src/records/:
//   status_csv      the rows, the header, append-only writes (util/csv.hpp's quoting)
//   status_csv_read reading it back, repairing a torn or edited file
//   stray_quote     a quote that never closes: stray, or a torn last record (rounds.csv too)
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "zlcore/time_breakdown.hpp"

namespace zl::batch {

// What happened to an op (docs/batch.md, "Statuses"). passed: rows measured;
// unsupported: the suite declined the dtype or level (nothing to measure, not
// a failure); partial: some tests failed next to tests that produced rows;
// failed; no_tests: nothing selected or all skipped; empty: tests passed but
// wrote no row; harness_error: zlcore's own plugins raised (our bug, never
// the op's); preflight_failed; timeout; crashed; interrupted; skipped (the
// batch never started it).
enum class Status {
  passed,
  unsupported,
  partial,
  failed,
  no_tests,
  empty,
  harness_error,
  preflight_failed,
  timeout,
  crashed,
  interrupted,
  skipped
};
const std::vector<Status>& all_statuses();
const char* to_string(Status s);
std::optional<Status> parse_status(const std::string& s);
// passed and unsupported: the batch exits 0 when every op is one of them, and
// --resume does not run such an op again.
bool is_settled(Status s);

struct OpRow {
  std::string op;
  std::string test_node;
  Status status = Status::skipped;
  int exit_code = -1;  // -1: it never exited on its own (killed or never started)
  int signal = 0;      // crashed: the signal that ended it
  std::string backend;
  int device_index = -1;
  std::string device_id;
  std::string timer;
  std::string bench_level;
  std::string started;  // ISO 8601
  double seconds = 0;
  std::string warmed_on;  // device id of the warm-up run; empty: not warmed
  int attempt = 1;        // 1 on the first batch, +1 on each --resume that reran it
  std::string run_dir;    // relative to the batch directory
  std::string reason;     // one line: why it is not passed
  TimeBreakdown time;     // where its seconds went (the t_* columns; unknown in an older file)
};

// The header line (with '\n').
std::string csv_header();
const std::vector<std::string>& csv_columns();
// The leading columns every zlcore has written; the others (t_*) may be
// missing from an older file.
size_t csv_required_columns();
// One RFC 4180 record for a row (with '\n').
std::string csv_record(const OpRow& row);
// RFC 4180 fields of `text`; a last record without its '\n' (or with an open
// quote) is dropped and flagged in `dropped_tail`; `whole_bytes` gets the
// length of the whole records (a '\n' inside quotes does not end one).
std::vector<std::vector<std::string>> parse_csv(const std::string& text, bool* dropped_tail = nullptr,
                                                size_t* whole_bytes = nullptr);

// ops_status.csv as read back. Reading never gives up on the whole file for
// a part of it: what cannot be read is counted and named, and every row that
// can be read is kept (docs/batch.md, "Repairs").
struct StatusFile {
  std::vector<OpRow> rows;
  bool dropped_tail = false;            // a last record without its line end (torn) was left out
  size_t valid_bytes = 0;               // where that torn tail starts (the whole length when there is none)
  std::vector<std::string> unreadable;  // "line N: why", each record that could not be read
  size_t blank_lines = 0;
  size_t rows_with_extra_fields = 0;  // read, but with fields beyond the header's
  std::string header_problem;         // empty: zlcore's own header; else what is wrong with it
  bool needs_repair() const {
    return dropped_tail || !unreadable.empty() || blank_lines > 0 || rows_with_extra_fields > 0 ||
           !header_problem.empty();
  }
};
// Reads ops_status.csv back, leniently: blank lines, a torn last record, a
// record that does not parse, extra fields and a header with extra columns
// cost only themselves. Throws UsageError when the file is not a zlcore
// batch's at all (neither its header nor any row it could have written), and
// std::runtime_error when it cannot be read.
StatusFile read_status_csv(const std::string& path);
// A duration as zlcore's files hold it ("%.3f": a plain decimal from 0 to a
// year; no sign, exponent, nan or inf) into *out; else the reason, naming
// the field `name` and the text.
std::string read_seconds(const std::string& text, const std::string& name, double* out);
StatusFile parse_status_text(const std::string& text, const std::string& shown);
// Each op's current run directory, as the last row naming the op says, from
// the text of any CSV whose header has `op` and `run_dir` columns (zlcore's,
// or an older layout); records that do not read are skipped. Nullopt when
// the header lacks those columns.
std::optional<std::map<std::string, std::string>> current_run_dirs(const std::string& text);
// Creates the file with its header (atomically) when it does not exist. When
// read_status_csv finds something to repair, first keeps the file as it is
// in ops_status.csv.bak-<UTC time> (never overwriting an older copy), then
// rewrites it with the header and every row it could read, so that appends
// always start on a line of their own; `note` says what was dropped and where
// the copy is. Throws (naming the file) when the copy cannot be made: nothing
// is repaired without one.
void prepare_status_csv(const std::string& path, std::string* note);
void append_status_row(const std::string& path, const OpRow& row);

}  // namespace zl::batch
