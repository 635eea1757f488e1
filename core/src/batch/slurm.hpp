// The Slurm launcher's parts, private to core/src/batch (slurm_launcher.cpp
// says how they fit together). One file per job:
//   slurm_plan    plan.json written and read back (checked), the ops files
//   slurm_shards  ops to shards, shards to rerun, Slurm's devices to ours
//   slurm_script  the sbatch command lines and the job scripts, as text
//   slurm_merge   the shards' rows into the batch's ops_status.csv + summary
//   slurm_submit  submitting, printing a dry run, waiting: what `batch` and
//                 `ab` (core/src/cli/ab_slurm.cpp) share
// Everything but what reads or writes files (read_plan, shard_rows, merge,
// log_line) and allocated_devices (the environment) is a pure function of its
// arguments, so tests/batch checks it without a cluster.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "zlcore/batch.hpp"

namespace zl::batch::slurm {

namespace fs = std::filesystem;

constexpr const char* kPlanFile = "plan.json";
constexpr const char* kStatusFile = "ops_status.csv";
constexpr const char* kMergeFile = "merge.json";

// A launcher option of `o` ("" when absent).
std::string option(const BatchOptions& o, const std::string& key);
// `text` as an integer above 0, else a UsageError naming `what`.
int positive(const std::string& text, const std::string& what);
std::string join_ints(const std::vector<int>& v, const std::string& sep);
// One line appended to <dir>/<log> (a warning, never an error, on failure).
void log_line(const fs::path& dir, const std::string& line, const std::string& log = "batch.log");

// ---- the plan (slurm_plan.cpp) ------------------------------------------------

struct Submission {
  std::string array_job, merge_job, submitted;
  std::vector<int> shards;
  double submitted_epoch = 0;
};

struct Plan {
  // The command whose jobs these are: "batch", or "ab" (a shard is a whole
  // A/B over its ops; ab_args holds the A/B's flags, which every shard and
  // the merge parse, so every shard has the same sides).
  std::string command = "batch";
  std::vector<std::string> ab_args;
  std::string backend;
  std::vector<std::string> ops;                      // names, in batch order
  std::vector<std::vector<std::string>> assignment;  // shard -> op names
  // The batch's options, every field: the shards and the merge read them
  // here, never from flags (a plan by a zlcore before schema 2 has none).
  BatchOptions options;
  bool has_options = false;
  std::vector<Submission> submissions;
  int shards() const { return static_cast<int>(assignment.size()); }
};

std::string plan_json(const Plan& p);
// A plan file; a missing or malformed one (a wrong type, a missing key) is
// one UsageError naming the file and the key.
Plan read_plan(const fs::path& file);
// An ops file `zlcore batch --ops-file` reads back as the same OpSpecs.
std::string ops_yaml(const std::vector<OpSpec>& ops);

// ---- shards (slurm_shards.cpp) ------------------------------------------------

// The number of shards asked for (--shards, else --nodes, else 1), at most
// one per op.
int shard_count(const BatchOptions& o);
// A new plan: `ops` dealt round robin over `k` shards.
Plan deal_round_robin(const std::string& backend, const std::vector<OpSpec>& ops, int k);
std::vector<int> all_shards(const Plan& p);
// The shards with an op that has no settled row in `rows_by_shard` (indexed
// like the plan's shards).
std::vector<int> shards_to_rerun(const Plan& p, const std::vector<std::vector<OpRow>>& rows_by_shard);
// `--shard TEXT` as a shard of a plan of `k` shards (0 to k-1), else a
// UsageError.
int shard_index(const std::string& text, int k);
// What shard `i` of `plan` runs: the batch's options with its own ops, in
// its own directory under `dir` (the batch's), always resuming. Still to be
// filled in on the node: the devices (allocated_devices) and what the batch
// left to the host (the suite, the Python).
BatchOptions shard_options(const Plan& plan, int i, const fs::path& dir);
// The devices Slurm gave this shard (reads the environment; see the .cpp).
std::vector<int> allocated_devices(const Backend& backend, std::string* how);

fs::path shard_dir(const fs::path& dir, int i);
// Every row shard `i` wrote, run_dir made relative to the batch directory.
std::vector<OpRow> shard_rows(const fs::path& dir, int i);

// ---- job scripts and sbatch lines (slurm_script.cpp) ---------------------------

// What every job script starts zlcore with.
struct JobHead {
  std::string exe;          // zlcore, absolute
  std::string backend_dir;  // absolute
  std::string backend;
  std::string command = "batch";  // or "ab"
  std::vector<std::string> argv() const;
};

std::string shell_quote(const std::string& s);
// The job scripts name only the plan and which job they are: every batch
// option reaches the jobs through the plan file.
std::string shard_script(const JobHead& head, const fs::path& plan_file, int k);
std::string merge_script(const JobHead& head, const fs::path& plan_file);
std::vector<std::string> array_sbatch(const BatchOptions& o, const fs::path& dir, const std::vector<int>& shards);
std::vector<std::string> merge_sbatch(const BatchOptions& o, const fs::path& dir, const std::string& array_job);
// The job id `sbatch --parsable` printed; "" when there is none.
std::string parse_job_id(const std::string& output);

// ---- merge (slurm_merge.cpp) --------------------------------------------------

// Rebuilds <dir>/ops_status.csv from every shard's rows and writes the
// summary and merge.json; returns the batch's exit code.
int merge(const fs::path& dir, const Plan& plan, const std::string& merge_job);

// ---- submitting (slurm_submit.cpp) -------------------------------------------

// What a submit needs besides the plan: where, which zlcore, and the
// launcher's options (partition, time, GPUs, sbatch args, wait) in `o`.
struct Submitter {
  fs::path dir;  // the batch's (or A/B's) directory, absolute
  JobHead head;
  BatchOptions o;
  std::vector<std::string> visibility_env;  // removed from what sbatch exports
  std::string log() const { return head.command + ".log"; }
};

// The plan's directories (plan/, slurm/, shards/<i>/), each shard's ops file
// (plan/shard-<i>.yaml, plan/ops.yaml: for people) and plan.json, before
// anything is submitted (the jobs read the plan).
void write_inputs(const fs::path& dir, const Plan& plan, const std::vector<OpSpec>& ops);
// --dry-run: the plan, each shard's ops, the sbatch lines and both scripts.
void print_dry_run(const Submitter& s, const Plan& plan, const std::vector<int>& shards);
// Writes the job scripts, submits the array of `shards` and the merge job,
// records the submission in `plan` and rewrites plan.json. A failed sbatch is
// a PreflightError (check=sbatch).
Submission submit_jobs(const Submitter& s, Plan& plan, const std::vector<int>& shards);
// --resume: a UsageError while the plan's last submission is queued or
// running (its shards would race their resubmission).
void refuse_while_queued(const Plan& plan);
// Without --wait: how to follow the jobs and where the result will be.
void print_follow(const Submitter& s, const Submission& sub, const std::string& result);
// --wait: blocks until the merge job has left the queue and merge.json names
// it, prints <dir>/<print_file>, returns merge.json's exit_code.
int wait_for_merge(const fs::path& dir, const std::string& merge_job, const std::string& print_file);

}  // namespace zl::batch::slurm
