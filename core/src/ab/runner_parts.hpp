// What the runner needs from the rest of core/src/ab/, one concept a file:
// executors.cpp (one executor per side), winners.cpp (each run's autotune
// flags), caliber_gate.cpp (the check before the rounds), identity.cpp
// (ab_identity.json and --resume), report.cpp (the report files),
// orphans.cpp (the runs a killed ab left running).
#pragma once

#include <filesystem>
#include <iosfwd>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "zlcore/ab.hpp"

namespace zl::ab {

// Whether each side runs in warm workers: always when it tunes in its own
// cache (--winners own); with --warm when winners are replayed. A fresh
// process per run is the default there: a round is then one process, so
// whatever a process brings (its memory layout, the core it lands on) is
// spread over the rounds instead of staying with one side (docs/ab.md).
bool warm_sides(const Options& o);

// One executor per label (A, B, and A2 with --calibrate), warm or cold as
// warm_sides says.
std::map<std::string, std::unique_ptr<batch::Executor>> make_executors(const Options& o, const std::string& ab_dir);

// The graph timer's shared record of the sides that keep the sustained
// procedure (Options::sticky_sustained), and its file in the A/B directory.
inline constexpr const char* kSustainedRowsEnv = "ZL_GRAPH_SUSTAINED_ROWS";
inline constexpr const char* kSustainedRowsFile = "sustained_rows.jsonl";

// The side's variables: the shared sustained-rows file, and its own tuner
// cache directories when it is warm.
std::map<std::string, std::string> side_env(const Options& o, const std::string& label, const std::string& ab_dir);

// Extra `zlcore run` flags of one run: round 0 records (isolated cache);
// a measured round replays the side's source, --same-winners, or the record
// (warm: into the side's own cache, --replay-in-cache).
std::vector<std::string> winner_args(const Options& o, const std::string& label, int round, const std::string& record);

struct CaliberVerdict {
  bool fair = false;
  std::string summary;  // one line for ab_identity.json
  std::string text;     // what is printed: every difference, declared or not
};
// compare's caliber check over the first measured round's A and B runs.
CaliberVerdict check_round_caliber(const std::filesystem::path& round_dir, const std::vector<std::string>& expect_diff);

// `reason`: why a `failed` A/B stopped (a full disk); left out when empty.
void write_ab_identity(const Options& o, const std::string& path, const std::string& status, const std::string& started,
                       const std::string& caliber, const std::string& reason = "");
// Throws UsageError when the settings that change numbers differ from the
// directory's first invocation, naming the first that does. Keys in
// `unchecked` are skipped (a Slurm submit cannot know what a shard settled on
// its node).
void check_resume_settings(const Options& o, const std::string& identity_path,
                           const std::set<std::string>& unchecked = {});

// Kills every run a lease left by an earlier, killed ab still names, saying
// so on `out`, and removes the leases. Returns "" or, when a run outlives
// SIGKILL, why nothing may start.
std::string stop_orphan_runs(const std::string& ab_dir, std::ostream& out);

// Pools the finished rounds per side, writes report.{md,csv,json,html} (and
// aa.{md,json} with --calibrate), prints the table to `out`; returns the exit
// code.
int write_report(const Options& o, const std::string& ab_dir, const std::vector<RoundLine>& lines, std::ostream& out);

}  // namespace zl::ab
