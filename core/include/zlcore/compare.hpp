// `compare`: two sides of an A/B campaign (run or batch directories), their
// caliber checked field by field, rows matched per (op, dtype, shape), each
// with a speedup and a verdict, and geometric means. docs/compare.md states
// the verdict rule and the caliber fields; the formats live one per file.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

namespace zl::compare {

// One results.jsonl line, reduced to what a comparison reads.
struct ResultRow {
  std::string op, dtype, shape;
  std::optional<double> latency_ms;       // FlagGems side
  std::optional<double> latency_base_ms;  // torch side, the control
  int repeats = 1;
  double spread_pct = 0;       // (max - min) / median * 100 of the FlagGems samples
  double spread_base_pct = 0;
  std::string timer, timer_base;
  std::string error;
};

// One run directory: the caliber fields flattened to strings, and its rows.
struct RunInfo {
  std::string dir;       // as found: the side's path or <batch>/runs/<op>
  std::string run_id;
  std::string op;        // identity.op, else the directory name
  std::string status;
  std::map<std::string, std::string> caliber;  // key -> value ("" when absent)
  std::map<std::string, std::string> env;      // identity.env
  std::string autotune_mode;                   // tune, record, replay ("" unknown)
  std::string autotune_source;                 // replay: the run_id it replays
  std::string autotune_records_hash;           // record: written; replay: read ("" unknown)
  std::vector<ResultRow> rows;
};

struct Side {
  std::string label;  // "A" or "B"
  std::string path;   // as given
  bool batch = false;
  std::vector<RunInfo> runs;
  std::vector<std::string> warnings;  // unreadable lines, missing results, ...
};

// Throws UsageError when `path` is neither a run directory (run_identity.json)
// nor a batch directory (ops_status.csv or runs/<op>/run_identity.json), or
// when an identity file is not JSON.
Side load_side(const std::string& label, const std::string& path);

// ---- caliber -------------------------------------------------------------

struct Difference {
  std::string key;      // e.g. "timer.name", "env.TRITON_X", "autotune"
  std::string a, b;     // values; "(none)" when absent, "(unset)" for an absent env knob
  std::string detail;   // why it matters, where the values alone do not say
  std::vector<std::string> ops;  // run pairs (by op) where it differs
  bool expected = false;         // named by --expect-diff
};

struct Caliber {
  std::vector<Difference> differences;  // in key-table order, then env keys sorted
  std::string autotune_pairing;         // e.g. "record/replay (fair)"
  bool autotune_fair = false;
  std::vector<std::string> notes;       // run status, unpaired runs, unmatched --expect-diff
  size_t pairs = 0;                     // run pairs compared
  // Differences not declared by --expect-diff.
  size_t unexpected() const;
};

// The keys compared besides env.* and autotune, in the order they are listed.
const std::vector<std::string>& caliber_keys();

// Whether `key` (a Difference key) is covered by an --expect-diff pattern:
// the exact key, "env." + pattern, or a prefix when the pattern ends in ".*".
bool expected_by(const std::string& key, const std::vector<std::string>& patterns);

Caliber check_caliber(const Side& a, const Side& b, const std::vector<std::string>& expect_diff);

// ---- rows and verdicts ---------------------------------------------------

enum class Verdict { Faster, Slower, Same, Noisy, Unconfirmed, Error };
const char* verdict_name(Verdict v);

struct VerdictInputs {
  double speedup = 1;     // A latency / B latency
  double spread_a = 0;    // percent
  double spread_b = 0;
  int repeats_a = 1, repeats_b = 1;
  double threshold = 0.02;  // fraction
};
// The rule of docs/compare.md, "Verdicts".
Verdict decide(const VerdictInputs& in);

struct Compared {
  std::string op, dtype, shape;
  std::optional<double> a_ms, b_ms;            // FlagGems side
  std::optional<double> a_base_ms, b_base_ms;  // torch control
  std::optional<double> speedup;               // a_ms / b_ms
  std::optional<double> control;               // a_base_ms / b_base_ms
  double noise_pct = 0;                        // max of both sides' spread
  int repeats_a = 1, repeats_b = 1;
  Verdict verdict = Verdict::Unconfirmed;
  std::string note;                            // errors, per-shape timer changes
};

struct OneSided {
  std::string side;  // "A" or "B": where the row exists
  std::string op, dtype, shape;
  std::optional<double> ms;
};

struct Geomean {
  std::string group;  // op or dtype name; "all" overall
  size_t rows = 0;
  double speedup = 1;
  std::optional<double> control;  // torch's A/B, when every row has it
};

struct Options {
  double threshold = 0.02;  // fraction, --threshold 2 (%)
  std::vector<std::string> expect_diff;
};

struct Report {
  Side a, b;
  Options options;
  Caliber caliber;
  std::vector<Compared> rows;       // sorted by op, dtype, shape as in side A
  std::vector<OneSided> one_sided;
  Geomean overall;
  std::vector<Geomean> by_op, by_dtype;
  std::map<Verdict, size_t> counts;
  bool regression() const;  // any SLOWER row (confirmed and past the threshold)
};

Report compare(Side a, Side b, const Options& options);

// ---- outputs, one per file -----------------------------------------------

void write_table(std::ostream& out, const Report& r);
void write_markdown(std::ostream& out, const Report& r);
void write_csv(std::ostream& out, const Report& r);
void write_json(std::ostream& out, const Report& r);
// A self-contained page: inline CSS and SVG, nothing fetched at view time.
void write_html(std::ostream& out, const Report& r);

}  // namespace zl::compare
