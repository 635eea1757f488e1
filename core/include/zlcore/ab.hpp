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
#pragma once

#include <map>
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
  rounds,      // one value per round and side: the median of that round's placement medians
  placements,  // every round's placement medians, pooled
};

struct Options {
  std::string backend;
  std::string backend_dir;
  std::vector<Device> devices;
  std::vector<batch::OpSpec> ops;
  std::string out_dir;
  bool resume = false;
  int rounds = 6;
  bool calibrate = false;  // every round also runs side A a second time (A2)
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
// What can be read back; a torn last line (a crash mid-append) is dropped.
// Throws UsageError when the file is not an A/B's rounds.csv.
std::vector<RoundLine> read_rounds_csv(const std::string& path);

// ---- pool -------------------------------------------------------------------

// One side of the report: for each op, the rounds' run directories of that
// side pooled into one run whose rows carry, as their test values, one value
// per round or every round's per-placement medians (docs/ab.md, "How rounds
// combine").
compare::Side pool_side(const std::string& label, const std::string& shown,
                        const std::map<std::string, std::vector<std::string>>& runs_by_op, Samples samples);

// ---- the whole A/B ----------------------------------------------------------

// Runs (or, with resume, continues) the A/B and writes its report. Returns
// the exit code (docs/cli.md, "zlcore ab").
int run_ab(const Options& o);

}  // namespace zl::ab
