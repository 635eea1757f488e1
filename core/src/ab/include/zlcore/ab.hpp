// `zlcore ab`: one command for an A/B of two FlagGems trees (or two
// interpreters, or two environments), the two sides interleaved on each
// device so that drift lands on both (docs/ab.md).
//
// The pieces, each in its own file under core/src/ab/:
//   order        which side runs when within a round (ABBA across rounds)
//   rounds_csv   rounds.csv: every finished run and round, append-only, resumable
//   pool         each side's rounds pooled into one compare::Side per side
//   runner       the rounds over the devices: executors per side, retries, SIGINT
//   report       the report files (compare's outputs plus the A/A statement)
//   shards       a Slurm A/B's shards (each a whole A/B) merged into one report
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "zlcore/backend.hpp"
#include "zlcore/batch.hpp"
#include "zlcore/compare.hpp"

namespace zl::ab {

// One side of the A/B. Label "A", "B", or "A2" (side A again, for the
// in-run A/A of --calibrate).
struct SideSpec {
  std::string label;
  std::string suite_root;                  // absolute FlagGems directory
  std::string python;                      // interpreter for pytest
  std::map<std::string, std::string> env;  // --a-env K=V: set for every run of this side
  std::string replay_from;                 // the side's own replay source; empty: the A/B's choice
};

// How winners are made fair (docs/ab.md, "Winners").
enum class Winners {
  record,  // side A records once per op (round 0); every round of every side replays it
  given,   // --same-winners DIR: every round of every side replays DIR
  own,     // --winners own: each side tunes in its own tuner cache, in warm workers
};

// What a row's test values are (docs/ab.md, "How rounds combine").
enum class Samples {
  rounds,      // one value per round and side: the mean of that round's placement medians
  placements,  // every round's placement medians, pooled
};

struct Options {
  std::string backend;
  std::string backend_dir;
  std::vector<Device> devices;
  // --resume where the backend reports no devices: why, so that an A/B with
  // every round already whole still writes its report (on a machine without
  // the devices) and one with rounds left fails on this before measuring.
  std::string no_devices_reason;
  std::vector<batch::OpSpec> ops;
  std::string out_dir;
  bool resume = false;
  int rounds = 6;
  bool calibrate = false;  // every round also runs side A a second time (A2)
  // record / given: the rounds replay in warm workers (one per side and
  // device) instead of a fresh process per run. own is always warm.
  bool warm = false;
  // A (shape, side) of an op that takes the graph timer's sustained (power-
  // limited) procedure in one run takes it in every later run of every side
  // (ZL_GRAPH_SUSTAINED_ROWS, one file for the A/B): a side read at boost
  // clocks in some rounds and at the capped plateau in others cannot show a
  // small change (docs/ab.md, "One pace per row"). false: --sustained per-run.
  bool sticky_sustained = true;
  Winners winners = Winners::record;
  std::string same_winners;  // Winners::given: the record every side replays
  std::vector<std::string> visibility_env;
  std::string framework_vendor;
  // `zlcore run` flags every run of both sides gets ({"--level", "core"}); a
  // switch has value "".
  std::vector<std::pair<std::string, std::string>> run_flags;
  std::vector<std::string> dtypes;
  double timeout_s = 600;
  int retries = 1;  // a failed round runs again on both sides this many times
  Samples samples = Samples::rounds;
  compare::Options compare;
  bool fail_on_regression = false;
  SideSpec a, b;
  // A Slurm A/B's merge: the number of shards the ops were split over (each
  // a whole A/B on its own allocation); 0 for an A/B on this host.
  int shards = 0;
  // Everything that changes a number, as text: --resume refuses another.
  std::map<std::string, std::string> settings;
};

// ---- order ----------------------------------------------------------------

// The labels of round r (1-based), in the order they run. Odd rounds run A
// first, even rounds B first, so consecutive rounds read A B B A A B ...:
// a linear drift over two rounds adds the same to both sides. With A2, A and
// A2 stand symmetric around B (A B A2, then A2 B A).
std::vector<std::string> round_order(int round, bool calibrate);

// ---- rounds.csv -------------------------------------------------------------

// One line per finished run (side = its label) and per finished round
// (side "*": status "done", "failed" or "unsupported"). Round 0 is side A's
// record run.
struct RoundLine {
  std::string op;
  int round = 0;
  int attempt = 1;
  std::string side;
  std::string status;
  int device = -1;
  double seconds = 0;
  std::string run_dir;  // relative to the A/B directory
  std::string reason;
};
std::string rounds_csv_header();
std::string rounds_csv_record(const RoundLine& l);
// rounds.csv as read: every line that reads as one zlcore writes, and what
// was left out. A line that does not read (a status zlcore never writes, a
// field that is not a number, a quote that never closes) is left out alone:
// the lines after it are read on their own.
struct RoundsFile {
  std::vector<RoundLine> lines;
  std::vector<std::string> unreadable;  // "line <n>: <why>", one per line left out
  bool dropped_tail = false;            // a torn last line (a crash mid-append)
  size_t blank_lines = 0;
  bool empty = false;  // nothing but blank space, not even the header (a crash, a truncation)
  bool needs_repair() const { return dropped_tail || blank_lines > 0 || !unreadable.empty() || empty; }
};
// Throws UsageError when `text` is not an A/B's rounds.csv (its first record
// is not zlcore's header); `shown` names the file in that message. An empty
// file is an A/B's that lost everything: `empty`, to repair.
RoundsFile parse_rounds_text(const std::string& text, const std::string& shown);
// The lines of the file at `path` that can be read back (parse_rounds_text).
std::vector<RoundLine> read_rounds_csv(const std::string& path);
// Before a resumed A/B appends: the file is rewritten with only the lines
// that read (a torn last line, a damaged line, a blank line left out), so the
// next line does not run into damage, and the file as it was is kept beside
// it (rounds.csv.bak-<UTC time>). Returns what was done, one line, or "" when
// the file was whole.
std::string repair_rounds_csv(const std::string& path);

// ---- pool -------------------------------------------------------------------

// One side of the report: for each op, the rounds' run directories of that
// side pooled into one run whose rows carry, as their test values, one value
// per round or every round's per-placement medians (docs/ab.md, "How rounds
// combine").
compare::Side pool_side(const std::string& label, const std::string& shown,
                        const std::map<std::string, std::vector<std::string>>& runs_by_op, Samples samples);

// ---- shards of a Slurm A/B (shards.cpp) -------------------------------------

// The ops of `ops` with a round still to run in `lines`: neither given up
// (a round line failed or unsupported) nor with a done round line for every
// round 1..rounds. A shard with none is complete (a raised --rounds makes it
// incomplete again).
std::vector<std::string> unfinished_ops(const std::vector<RoundLine>& lines, const std::vector<std::string>& ops,
                                        int rounds);
// One shard's rounds.csv lines as the A/B directory sees them: run_dir made
// relative to it (shards/<i>/runs/...).
std::vector<RoundLine> lines_of_shard(std::vector<RoundLine> lines, int shard);
// The directory of shard i of the Slurm A/B in `dir`.
std::string ab_shard_dir(const std::string& dir, int shard);
// --resume of a Slurm A/B: each shard's A/B that has started must have
// been started with the same settings (a UsageError naming the first
// difference and the shard), except those in `settled_on_node` (an
// interpreter the shard chose on its node; the shard's own resume checks
// it there); returns the shards with an op unfinished.
std::vector<int> shards_to_rerun(const Options& o, const std::string& dir,
                                 const std::vector<std::vector<std::string>>& ops_by_shard,
                                 const std::set<std::string>& settled_on_node = {});

struct ShardsMerged {
  int exit_code = 0;
  std::string text;  // what the merge printed: the shards' state and the report's table
};
// The merge: every shard's rounds into <dir>/rounds.csv, the report
// recomputed over them (the same files an A/B on one host writes), the
// identity. Exit code: 3 when a shard's caliber check refused the pair, else
// the report's (1: a failed op, or --fail-on-regression and a SLOWER row),
// else 1 when a shard has an op unfinished (AB_INCOMPLETE), else 0.
ShardsMerged merge_shards(const Options& o, const std::string& dir,
                          const std::vector<std::vector<std::string>>& ops_by_shard);

// ---- the whole A/B ----------------------------------------------------------

// Runs (or, with resume, continues) the A/B and writes its report. Returns
// the exit code (docs/cli.md, "zlcore ab").
int run_ab(const Options& o);

}  // namespace zl::ab
