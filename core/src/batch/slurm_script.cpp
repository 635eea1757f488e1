// The sbatch command lines and the two job scripts, as text. sbatch needs a
// script (Slurm has no argv form for a job's command), so each one only
// `exec`s zlcore by absolute path with every argument shell-quoted.
#include <algorithm>
#include <cctype>

#include "../util/text.hpp"
#include "slurm.hpp"

namespace zl::batch::slurm {
namespace {

// The array task's index, as the job script expands it.
constexpr const char* kTaskVar = "\"$SLURM_ARRAY_TASK_ID\"";

std::string script_line(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) s += (s.empty() ? "" : " ") + shell_quote(a);
  return s;
}

std::vector<std::string> common_sbatch(const BatchOptions& o, const std::string& name) {
  std::vector<std::string> a = {"sbatch", "--parsable", "--job-name=" + name, "--open-mode=append"};
  if (!option(o, "partition").empty()) a.push_back("--partition=" + option(o, "partition"));
  return a;
}

}  // namespace

std::vector<std::string> JobHead::argv() const {
  return {exe, "--backend-dir", backend_dir, command, "--backend", backend, "--launcher", "slurm"};
}

// POSIX shell single quoting: the script must pass every argument verbatim.
std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string shard_script(const JobHead& head, const fs::path& plan_file, int k) {
  std::vector<std::string> argv = head.argv();
  argv.insert(argv.end(), {"--plan", plan_file.string()});
  const std::string whose = head.command == "ab" ? "the A/B's flags" : "the batch's options";
  return "#!/bin/sh\n"
         "# zlcore " +
         head.command + " shard: one task of the job array runs shard $SLURM_ARRAY_TASK_ID of " + std::to_string(k) +
         ".\n# Written by zlcore; " + whose +
         " are in the plan, the sbatch options on its command line.\n"
         "exec " +
         script_line(argv) + " --shard " + kTaskVar + "\n";
}

std::string merge_script(const JobHead& head, const fs::path& plan_file) {
  std::vector<std::string> argv = head.argv();
  argv.insert(argv.end(), {"--plan", plan_file.string(), "--merge"});
  const std::string what = head.command == "ab" ? "ab merge: the shards' rounds into one A/B report"
                                                : "batch merge: the shards' ops_status.csv into the batch's, and the "
                                                  "summary";
  return "#!/bin/sh\n# zlcore " + what + ".\nexec " + script_line(argv) + "\n";
}

std::vector<std::string> array_sbatch(const BatchOptions& o, const fs::path& dir, const std::vector<int>& shards) {
  std::vector<std::string> a = common_sbatch(o, "zlcore-" + dir.filename().string());
  a.push_back("--array=" + join_ints(shards, ","));
  a.insert(a.end(), {"--nodes=1", "--ntasks=1"});
  a.push_back("--output=" + (dir / "slurm" / "shard-%a.log").string());
  if (!option(o, "time").empty()) a.push_back("--time=" + option(o, "time"));
  if (!option(o, "gpus-per-shard").empty()) {
    a.push_back("--gres=gpu:" + std::to_string(positive(option(o, "gpus-per-shard"), "--gpus-per-shard")));
  }
  // Pass-through last: the user's word wins over ours.
  a.insert(a.end(), o.launcher_args.begin(), o.launcher_args.end());
  return a;
}

std::vector<std::string> merge_sbatch(const BatchOptions& o, const fs::path& dir, const std::string& array_job) {
  std::vector<std::string> a = common_sbatch(o, "zlcore-merge-" + dir.filename().string());
  // afterany: the merge runs even when a shard failed or was killed, so the
  // batch always gets its one ops_status.csv.
  a.insert(a.end(), {"--dependency=afterany:" + array_job, "--nodes=1", "--ntasks=1"});
  a.push_back("--output=" + (dir / "slurm" / "merge.log").string());
  a.insert(a.end(), o.launcher_args.begin(), o.launcher_args.end());
  return a;
}

// `sbatch --parsable` prints "jobid" or "jobid;cluster" as its last line.
std::string parse_job_id(const std::string& output) {
  std::string id;
  for (const std::string& line : text::split(output, "\n")) {
    std::string head = line.substr(0, line.find(';'));
    if (!head.empty() && std::all_of(head.begin(), head.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) {
      id = head;
    }
  }
  return id;
}

}  // namespace zl::batch::slurm
