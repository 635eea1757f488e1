// `history`: a performance record across runs. `add` imports run, batch and
// ab directories into one SQLite file; `report` reads every (op, dtype,
// shape, side) series back, splits it where the way of measuring changed
// (caliber segments), finds the runs where its level moved (steps) against
// the noise the series itself shows, and says what changed between the last
// good and the first bad run. docs/history.md states the schema and method.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace zl::history {

// ---- what an imported directory holds ---------------------------------------

// One (op, dtype, shape, side) row of one run: its center and interval.
struct Row {
  std::string op, dtype, shape;
  std::string side;  // "gems" (FlagGems' side, latency_ms) or "base" (torch's, latency_base_ms)
  double median_ms = 0, lo_ms = 0, hi_ms = 0;
  int n = 1;  // placements behind it
  std::string timer;
};

// One op's run directory inside an imported directory.
struct Run {
  std::string op, dir, run_id, status, started;
  // The identity keys that define how it measured (segment_keys()), joined:
  // two runs with other segments never sit in one level.
  std::string segment;
  // Every identity key a report may name as changed (versions, env, driver, ...).
  std::map<std::string, std::string> identity;
  std::vector<Row> rows;
};

// An imported directory: a run, a batch or an ab directory.
struct Entry {
  std::string path;  // absolute, the key: a directory added twice is one entry
  std::string kind;  // run, batch, ab
  std::string started;
  std::vector<Run> runs;
  std::vector<std::string> warnings;
};

// The identity keys that make two runs "measured the same way".
const std::vector<std::string>& segment_keys();

// Reads a directory with compare's readers. Throws UsageError (one line
// naming the directory and why) when it is none of run, batch or ab, or holds
// no measured row.
Entry read_entry(const std::string& dir);

// A digest of everything an entry would store: equal digests, nothing to update.
std::string fingerprint(const Entry& e);

// ---- the store ----------------------------------------------------------------

inline constexpr int kSchemaVersion = 1;

enum class AddOutcome { Added, Updated, Unchanged };
const char* outcome_name(AddOutcome o);

// A point of a series as the report reads it back.
struct StoredRow {
  std::int64_t entry_id = 0;
  std::string entry_path, entry_started;
  std::int64_t run_id = 0;  // the store's id of the op's run
  std::string segment;
  Row row;
};

class Store {
 public:
  // Opens (creating when absent) the database. Throws UsageError naming the
  // file for one that is not a zlcore history or has another schema version.
  explicit Store(const std::string& path);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // All of an entry or nothing, in one transaction. `after_run` (tests only)
  // is called inside the transaction after each run is written.
  AddOutcome add(const Entry& e, const std::function<void(size_t)>& after_run = {});

  size_t entry_count() const;
  // Every row, oldest entry first; `since` ("" or an ISO date) keeps entries
  // that started then or later; `op` ("" all) keeps one op. A row whose
  // numbers no import writes (not finite, latency not positive, outside its
  // interval, n below 1) is left out and counted in `skipped`.
  std::vector<StoredRow> rows(const std::string& since, const std::string& op, size_t* skipped = nullptr) const;
  std::map<std::string, std::string> identity(std::int64_t run_id) const;

 private:
  std::vector<StoredRow> read_rows(const std::string& since, const std::string& op, size_t* skipped) const;
  struct Impl;
  Impl* impl_;
};

// ---- step detection -------------------------------------------------------------

struct Point {
  size_t run = 0;  // index into the report's run list (time order)
  double value_ms = 0, lo_ms = 0, hi_ms = 0;
  std::string segment;
};

struct DetectOptions {
  double threshold = 0.03;  // a step smaller than this fraction is never reported
  double alpha = 0.0001;    // per series, before the correction over split positions
  bool pace = true;         // remove the run-wide pace before looking for steps
  // FlagGems' side: remove its op's torch-side pace instead (the control
  // measured in the same process), where the op has a torch side.
  bool control = true;
  // Runs each side of a step must hold: one run on a busy machine is an
  // outlier, not a level.
  size_t min_runs = 3;
  // Noise floor per (op, dtype, shape) from `compare --calibrate --out`, as a
  // fraction; absent rows learn it from the series alone.
  std::map<std::string, double> floor;
};

struct Step {
  size_t last_good = 0, first_bad = 0;  // run indices
  double before_ms = 0, after_ms = 0;   // the levels either side
  double change = 0;                    // after / before - 1
  double z = 0;                         // the change in units of its standard error
};

// Where a series starts a new segment, and why.
struct SegmentBreak {
  size_t first_run = 0;
  std::string from, to;  // the segment texts
};

struct SeriesResult {
  std::vector<Step> steps;
  std::vector<SegmentBreak> breaks;
  double noise = 0;  // the run-to-run noise learned (a fraction)
};

// Per run index, the run-wide pace: the median over series of how far each
// series' point lies from its segment's median (log ratio). One series
// alone cannot move it; a machine running faster or slower moves them all.
std::vector<double> run_pace(const std::vector<std::vector<Point>>& series, size_t runs);

// The steps of one series (points in run order), given the pace and a noise
// floor (a fraction; 0: none).
SeriesResult detect(const std::vector<Point>& points, const std::vector<double>& pace, double floor,
                    const DetectOptions& opt);

// The robust spread of successive differences, a fraction: the noise of one
// point against the next, from the series itself.
double learned_noise(const std::vector<double>& log_values);

// ---- the report -------------------------------------------------------------------

struct RunRef {
  std::string path, started;
  std::int64_t entry_id = 0;
  double pace = 0;  // log ratio
};

struct Change {
  std::string key, before, after;
};

struct ReportStep {
  std::string op, dtype, shape, side;
  Step step;
  std::vector<Change> changed;  // identity keys that differ, last good against first bad
  // The step became visible with the latest run: it holds exactly min_runs
  // runs on the new level, the latest included.
  bool is_new = false;
};

struct ReportSeries {
  std::string op, dtype, shape, side;
  std::vector<Point> points;
  SeriesResult result;
};

struct Report {
  std::vector<RunRef> runs;
  std::vector<ReportSeries> series;
  std::vector<ReportStep> steps;  // regressions first, then improvements
  std::vector<std::string> notes;
  DetectOptions options;
  size_t regressions() const;
  size_t new_regressions() const;
};

Report build_report(const Store& store, const std::string& since, const std::string& op, const DetectOptions& opt);

void write_markdown(std::ostream& out, const Report& r);
void write_json(std::ostream& out, const Report& r);
void write_csv(std::ostream& out, const Report& r);
void write_html(std::ostream& out, const Report& r);

}  // namespace zl::history
