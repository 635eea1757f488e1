// `compare`: two sides of an A/B campaign (run or batch directories), their
// caliber checked field by field, rows matched per (op, dtype, shape), each
// with a speedup, its interval and a verdict from a rank test over the
// per-placement times, and geometric means with intervals. docs/compare.md
// states the method and the caliber fields; the formats live one per file.
// Calibration from A/A runs: compare_calibrate.hpp.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace zl::compare {

// One kernel of a profiled row (`kernels`, docs/profile.md): its device time
// per call of the op.
struct KernelTime {
  std::string name;
  double us = 0;
};

// One results.jsonl line, reduced to what a comparison reads.
struct ResultRow {
  std::string op, dtype, shape;
  std::optional<double> latency_ms;       // FlagGems side
  std::optional<double> latency_base_ms;  // torch side, the control
  int repeats = 1;
  double spread_pct = 0;  // (max - min) / median * 100 of the FlagGems samples
  double spread_base_pct = 0;
  std::string timer, timer_base;
  // The row's L2 policy: "cold" when its timer cleared the L2 before each
  // call (the row's `l2`), else "warm" (rows of warm and older runs).
  std::string l2 = "warm";
  std::string error;
  // Per-placement median ms of the FlagGems side (latency_ms is their mean);
  // empty in runs older than placement-randomized timing.
  std::vector<double> placements_ms;
  // The in-run repeats, what older runs have instead.
  std::vector<double> samples_ms;
  // Entries of either list that were not positive finite numbers, dropped.
  size_t unusable_samples = 0;
  // The row against the device's peaks (ABI 1.2 runs): % of peak memory
  // bandwidth and of peak compute for its dtype.
  std::optional<double> pct_peak_bandwidth, pct_peak_compute;
  // The FlagGems side was read at its sustained (power-limited) pace, not at
  // the pace it held (the graph timer's `sustained` is set).
  bool sustained = false;
  // The FlagGems side fell back from the run's timer to one that times call
  // by call (its capture failed, often a host copy inside the op): such a
  // side's level moves between processes with the host's pace.
  bool timed_call_by_call = false;
  // A fact about the side's row that decides nothing but explains its noise,
  // shown in the compared row's note ("A: ..."): ab's pooled rounds that
  // were read at two paces.
  std::string remark;
  // The FlagGems side's kernels, from a run with --profile; empty otherwise.
  std::vector<KernelTime> kernels;
};

// One entry of timer.fallback_shapes: a shape a side measured with the
// fallback timer, and why. The reason's numbers are replaced by N: a capture's
// call count or an address changes from run to run while the shape measures
// the same way, so only (dtype, shape, side, reason) as a set is caliber.
struct FallbackShape {
  std::string dtype, shape, side, reason;  // reason "" in older identities (a bare shape)
  bool operator<(const FallbackShape& o) const {
    return std::tie(dtype, shape, side, reason) < std::tie(o.dtype, o.shape, o.side, o.reason);
  }
  bool operator==(const FallbackShape& o) const {
    return std::tie(dtype, shape, side, reason) == std::tie(o.dtype, o.shape, o.side, o.reason);
  }
};

// A fallback reason with its numbers (decimal or 0x hex) replaced by N.
std::string normalized_reason(const std::string& reason);
// Per op, for a caliber cell: "(none)", or "3 shapes fell back: <reason> (2); <reason> (1)".
std::string fallback_summary(const std::set<FallbackShape>& shapes);

// One run directory: the caliber fields flattened to strings, and its rows.
struct RunInfo {
  std::string dir;  // as found: the side's path or <batch>/runs/<op>
  std::string run_id;
  std::string op;  // identity.op, else the directory name
  std::string status;
  std::string started;                         // identity.started (ISO 8601; "" when absent)
  std::map<std::string, std::string> caliber;  // key -> value ("" when absent)
  std::map<std::string, std::string> env;      // identity.env
  std::string autotune_mode;                   // tune, record, replay ("" unknown)
  std::string autotune_source;                 // replay: the run_id it replays
  std::string autotune_records_hash;           // record: written; replay: read ("" unknown)
  // The winners the run used (autotune.winners_hash, "" in older identities)
  // and each kernel's digest: compared instead of the mode when both have them.
  std::string autotune_winners_hash;
  std::map<std::string, std::string> autotune_winners;  // kernel -> sha256
  std::set<FallbackShape> fallback_shapes;              // timer.fallback_shapes as a set
  std::string reason;                                   // identity.reason: why it did not pass
  // Where and with what the run measured (backend, device, driver, versions,
  // dates, command), for a report's provenance block: key -> value as the
  // identity spells it, absent when the identity does not record it.
  std::map<std::string, std::string> provenance;
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
  std::string key;               // e.g. "timer.name", "env.TRITON_X", "autotune"
  std::string a, b;              // values; "(none)" when absent, "(unset)" for an absent env knob
  std::string detail;            // why it matters, where the values alone do not say
  std::vector<std::string> ops;  // run pairs (by op) where it differs
  bool expected = false;         // named by --expect-diff
};

struct Caliber {
  std::vector<Difference> differences;  // in key-table order, then env keys sorted
  std::string autotune_pairing;         // e.g. "record/replay (fair)"
  bool autotune_fair = false;
  std::vector<std::string> notes;  // unpaired runs, unmatched --expect-diff, then run status
  // The runs that did not pass, one each (also worded in `notes`), for a
  // report that groups them in a table.
  struct NotPassed {
    std::string side, op, dir, status, reason;
  };
  std::vector<NotPassed> not_passed;
  size_t pairs = 0;  // run pairs compared
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

enum class Verdict { Faster, Slower, Same, Noisy, NoWork, Unconfirmed, Error };
const char* verdict_name(Verdict v);
// FASTER, SLOWER, SAME and NOISY: the verdicts of a row the test judged.
bool tested(Verdict v);
// Every verdict, in the order counts and legends list them.
inline constexpr Verdict kVerdicts[] = {Verdict::Faster, Verdict::Slower,      Verdict::Same, Verdict::Noisy,
                                        Verdict::NoWork, Verdict::Unconfirmed, Verdict::Error};

// The method's parameters (docs/compare.md, "The method").
inline constexpr double kAlpha = 0.01;             // two-sided level of the rank test
inline constexpr double kConfidence = 1 - kAlpha;  // of every interval in a report
// SAME is two one-sided tests at 5 % each (TOST): the 90 % interval of the
// ratio lies inside the threshold. Equivalence needs its own, narrower
// interval; with the 99 % one, six placements a side could almost never show
// that two clusters 2 % apart are "the same within 2 %".
inline constexpr double kEquivalenceAlpha = 0.10;
// Per side. With fewer, the exact test cannot reach kAlpha (4 against 4: the
// smallest two-sided p-value is 2 / C(8, 4) = 0.029); 5 against 5: 0.0079.
inline constexpr size_t kMinSamples = 5;
inline constexpr int kBootstrapReplicates = 4000;  // geomean intervals
// A time per call under this on both sides is no work to compare: a graph
// that launches nothing (a view op, a size query) replays in nanoseconds,
// the smallest kernel takes about a microsecond (docs/compare.md, "Verdicts").
inline constexpr double kNoWorkMs = 1e-4;
// Rows whose FlagGems and torch sides are under this in both runs are where
// a launch path's fraction of a microsecond is a few percent: only there does
// the torch control read in time (verdict.cpp).
inline constexpr double kLaunchScaleMs = 0.010;

// What a side's test values are: per-placement medians, or in older runs
// the in-run repeats of one placement, which cannot see placement variance.
enum class SampleKind { Placements, Repeats, None };
const char* sample_kind_name(SampleKind k);  // "placements", "repeats", "none"

// A row's test values: placements_ms when it has them, else samples_ms.
SampleKind sample_kind(const ResultRow& r);
const std::vector<double>& test_values(const ResultRow& r);

struct VerdictInputs {
  double speedup = 1;        // A latency / B latency
  std::vector<double> a, b;  // each side's test values (ms)
  double threshold = 0.02;   // fraction: SAME means within it
  double bar = 0.02;         // fraction: FASTER/SLOWER must pass it; the threshold or the row's noise-floor bar
};

// What else a row knows that can stop a supported difference from being a
// finding (verdict.cpp).
struct Guards {
  // Fraction: the noisier side's in-run range of test values over their
  // mean. FASTER/SLOWER must pass it too when it is above 0 (Options::process_guards).
  double spread = 0;
  std::optional<double> control;  // the torch side's A/B latency ratio, when both sides have one
  // The row's latencies (ms), FlagGems side and torch side, for the control
  // read in time: a launch path that got faster or slower adds the same
  // microseconds to every launch, a larger fraction of a smaller kernel.
  // 0: unknown.
  double a_ms = 0, b_ms = 0, a_base_ms = 0, b_base_ms = 0;
  // Each run's FlagGems side read at its sustained (power-limited) pace.
  bool sustained_a = false, sustained_b = false;
  // Each run's FlagGems side timed call by call after its capture failed,
  // and whether a noise floor measured this row's process-to-process move.
  bool call_by_call_a = false, call_by_call_b = false, floor_known = false;
  // A run read the row with the L2 cleared before each call (`l2` cold) and
  // both its FlagGems latencies are of launch scale (under kLaunchScaleMs).
  bool cold_launch_scale = false;
  bool no_work = false;  // both latencies under kNoWorkMs
};

struct Decision {
  Verdict verdict = Verdict::Unconfirmed;
  std::optional<double> p_value;       // the rank test's, when tested
  std::optional<double> ci_lo, ci_hi;  // kConfidence interval of A/B, when tested
  std::string why;                     // for a verdict the spread or the control turned NOISY, and NO_WORK
};
// The rule of docs/compare.md, "Verdicts".
Decision decide(const VerdictInputs& in, const Guards& guards = {});

// A kernel's time in A and in B (us per call of the op); absent on a side
// whose top kernels did not list it.
struct KernelMove {
  std::string name;
  std::optional<double> a_us, b_us;
};

struct Compared {
  std::string op, dtype, shape;
  std::optional<double> a_ms, b_ms;            // FlagGems side
  std::optional<double> a_base_ms, b_base_ms;  // torch control
  std::optional<double> speedup;               // a_ms / b_ms
  std::optional<double> control;               // a_base_ms / b_base_ms
  double noise_pct = 0;                        // max of both sides' spread (percent); a bar, not a test (verdict.cpp)
  int repeats_a = 1, repeats_b = 1;
  std::vector<double> values_a, values_b;  // each side's test values (ms)
  SampleKind kind_a = SampleKind::None, kind_b = SampleKind::None;
  std::optional<double> p_value;       // the rank test's, when tested
  std::optional<double> ci_lo, ci_hi;  // kConfidence interval of the speedup
  double bar = 0.02;                   // the bar |speedup - 1| had to pass
  std::optional<double> floor;         // noise floor of the row (fraction), when known
  Verdict verdict = Verdict::Unconfirmed;
  std::string note;  // errors, timer changes, samples that are no placements
  // A side was timed call by call after its capture failed and no noise
  // floor measured the row: its move between processes is the host's, so it
  // carries no verdict (verdict.cpp) and stays out of the geomeans too.
  bool host_paced = false;
  // % of the device's peak bandwidth / compute per side, where the runs say.
  std::optional<double> a_pct_bw, b_pct_bw, a_pct_fp, b_pct_fp;
  // Profiled runs (--profile): the kernels whose time moved most between A
  // and B, the most first (kernels.cpp); empty when neither side profiled.
  std::vector<KernelMove> kernels_moved;
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
  std::optional<double> lo, hi;   // kConfidence two-stage bootstrap interval
  std::optional<double> control;  // torch's A/B, when every row has it
  size_t host_paced = 0;          // rows left out: timed call by call, no floor (Compared::host_paced)
};

// The geometric mean of the rows' speedups and its interval: a two-stage
// bootstrap (rows with replacement, then each drawn row's own noise, a normal
// draw with the variance resampling its test values gives its log speedup),
// seeded by the rows' keys so the same rows give the same interval.
Geomean geomean(const std::string& group, const std::vector<const Compared*>& rows);

// ---- noise floor -----------------------------------------------------------

// What `compare --calibrate ... --out F` measured for one row: the largest
// |log ratio| of its latency between any two of `runs` A/A runs.
struct NoiseFloorRow {
  std::string op, dtype, shape;
  int runs = 0;
  double max_log_ratio = 0;
};

struct NoiseFloor {
  std::string path;    // as given
  std::string sha256;  // of the file's bytes
  size_t calibration_runs = 0;
  std::map<std::tuple<std::string, std::string, std::string>, NoiseFloorRow> rows;
};

// Throws UsageError naming the file when it is not a noise-floor file of a
// version this build reads.
NoiseFloor load_noise_floor(const std::string& path);

// The bar of a row the file knows: max(threshold, exp(f * max_log_ratio) - 1) where
// f = stats::floor_factor(runs, kAlpha) (docs/compare.md, "Noise floor").
double noise_bar(const NoiseFloorRow& row, double threshold);

struct Options {
  double threshold = 0.02;  // fraction, --threshold 2 (%)
  std::vector<std::string> expect_diff;
  std::shared_ptr<const NoiseFloor> noise_floor;  // --noise-floor, when given
  // The guards that stand in for what one process per side cannot show:
  // FASTER/SLOWER must pass each row's in-run spread, and the side must be
  // read at one pace (held or sustained) in both runs. On for two runs; off
  // where the test values are rounds in several processes (zlcore ab),
  // whose test sees how each process lands.
  bool process_guards = true;
};

struct Report {
  Side a, b;
  Options options;
  Caliber caliber;
  std::vector<Compared> rows;  // sorted by op, dtype, shape as in side A
  std::vector<OneSided> one_sided;
  Geomean overall;
  std::vector<Geomean> by_op, by_dtype;
  std::map<Verdict, size_t> counts;
  size_t rows_on_repeats = 0;  // compared rows with a side that has no placement samples
  size_t rows_with_floor = 0;  // rows the noise-floor file knows
  size_t rows_widened = 0;     // of those, rows whose bar is above the threshold
  bool regression() const;     // any SLOWER row (confirmed and past the threshold)
};

Report compare(Side a, Side b, const Options& options);

// Why a report compares nothing, in one line, or "" when it has a row in
// common: a side without rows, or the ops, else the dtypes of the ops both
// have, else the shapes, that differ, each named. An empty table would
// pass a CI gate silently.
std::string nothing_in_common(const Report& r);

// ---- outputs, one per file -----------------------------------------------

// A report that is another command's (zlcore ab's): its title, the lines
// that say how its sides were measured (under the answer, which stays the
// first line), and each side in words in place of its directory line.
// Empty fields: compare's own.
struct Page {
  std::string title;               // "zlcore ab: 6 rounds of 2 ops"
  std::vector<std::string> about;  // e.g. rounds, order, winners, calibration
  std::string a, b;                // what side A and side B are
};

void write_table(std::ostream& out, const Report& r, const Page& page = {});
void write_markdown(std::ostream& out, const Report& r, const Page& page = {});
void write_csv(std::ostream& out, const Report& r);
void write_json(std::ostream& out, const Report& r);
// A self-contained page: inline CSS and SVG, nothing fetched at view time.
void write_html(std::ostream& out, const Report& r, const Page& page = {});

}  // namespace zl::compare
