// Submitting a plan's jobs, as `zlcore batch` and `zlcore ab` both do it: the
// dry run's printout, the two job scripts and their sbatch lines, the
// submission recorded in the plan, the squeue check before a resume, and
// --wait. What the jobs do (a batch shard, an A/B shard, their merges) is the
// caller's; this file only knows Slurm.
#include <rapidjson/document.h>

#include <chrono>
#include <ctime>
#include <iostream>
#include <map>
#include <thread>

#include "../util/clock.hpp"
#include "../util/json_read.hpp"
#include "../util/text.hpp"
#include "slurm.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/process.hpp"
#include "zlcore/signals.hpp"

namespace zl::batch::slurm {
namespace {

// Runs a Slurm client from an argv. The backend's visibility variable is
// removed so that inside the job it can only be Slurm's (see
// allocated_devices).
Captured run_tool(const std::vector<std::string>& argv, const std::vector<std::string>& visibility_env) {
  CaptureOptions opts;
  opts.timeout_s = 120;
  opts.env_unset = visibility_env;
  opts.with_stderr = true;
  Captured c = capture(argv, opts);
  if (!c.started) c.output = c.spawn_error;
  return c;
}

std::string submit(const Submitter& s, const std::vector<std::string>& argv, const std::string& what) {
  Captured r = run_tool(argv, s.visibility_env);
  const std::string id = r.exit_code == 0 ? parse_job_id(r.output) : "";
  if (id.empty()) {
    log_line(s.dir, what + ": sbatch failed: " + r.output, s.log());
    throw PreflightError("sbatch", what + ": " + text::join(argv, " ") + " failed (exit " +
                                       std::to_string(r.exit_code) + "): " + text::one_line(r.output));
  }
  return id;
}

bool merged_by(const fs::path& dir, const std::string& job) {
  try {
    rapidjson::Document doc;
    return json::parse(doc, read_file((dir / kMergeFile).string())).empty() && doc.IsObject() &&
           doc.HasMember("merge_job") && doc["merge_job"].IsString() && job == doc["merge_job"].GetString();
  } catch (const std::exception&) {
    return false;
  }
}

fs::path array_script_file(const fs::path& dir) { return dir / "plan" / "shard.sbatch"; }
fs::path merge_script_file(const fs::path& dir) { return dir / "plan" / "merge.sbatch"; }

}  // namespace

void write_inputs(const fs::path& dir, const Plan& plan, const std::vector<OpSpec>& ops) {
  fs::create_directories(dir / "plan");
  fs::create_directories(dir / "slurm");
  std::map<std::string, const OpSpec*> by_name;
  for (const OpSpec& op : ops) by_name[op.name] = &op;
  std::vector<OpSpec> all;
  for (int i = 0; i < plan.shards(); ++i) {
    std::vector<OpSpec> mine;
    for (const std::string& name : plan.assignment[static_cast<size_t>(i)]) mine.push_back(*by_name.at(name));
    all.insert(all.end(), mine.begin(), mine.end());
    fs::create_directories(shard_dir(dir, i));
    write_file_atomic((dir / "plan" / ("shard-" + std::to_string(i) + ".yaml")).string(), ops_yaml(mine));
  }
  write_file_atomic((dir / "plan" / "ops.yaml").string(), ops_yaml(all));
  // Before any job is submitted: a shard reads its options here.
  write_file_atomic((dir / kPlanFile).string(), plan_json(plan));
}

void print_dry_run(const Submitter& s, const Plan& plan, const std::vector<int>& shards) {
  const fs::path plan_file = s.dir / kPlanFile;
  std::cout << "# plan (" << plan_file.string() << ")\n" << plan_json(plan);
  for (int i = 0; i < plan.shards(); ++i) {
    std::cout << "# shard " << i << " ops: " << text::join(plan.assignment[static_cast<size_t>(i)], ",") << "\n";
  }
  std::cout << "# shards to submit: " << join_ints(shards, ",") << "\n";
  std::cout << "# array job: " << text::join(array_sbatch(s.o, s.dir, shards), " ") << " "
            << array_script_file(s.dir).string() << "\n"
            << shard_script(s.head, plan_file, plan.shards())
            << "# merge job: " << text::join(merge_sbatch(s.o, s.dir, "<array job id>"), " ") << " "
            << merge_script_file(s.dir).string() << "\n"
            << merge_script(s.head, plan_file) << "# dry run: nothing written, nothing submitted\n";
}

Submission submit_jobs(const Submitter& s, Plan& plan, const std::vector<int>& shards) {
  const fs::path plan_file = s.dir / kPlanFile;
  const fs::path array_file = array_script_file(s.dir), merge_file = merge_script_file(s.dir);
  write_file_atomic(array_file.string(), shard_script(s.head, plan_file, plan.shards()));
  write_file_atomic(merge_file.string(), merge_script(s.head, plan_file));
  fs::permissions(array_file, fs::perms::owner_exec, fs::perm_options::add);
  fs::permissions(merge_file, fs::perms::owner_exec, fs::perm_options::add);

  std::vector<std::string> argv = array_sbatch(s.o, s.dir, shards);
  argv.push_back(array_file.string());
  Submission sub;
  sub.array_job = submit(s, argv, "job array");
  argv = merge_sbatch(s.o, s.dir, sub.array_job);
  argv.push_back(merge_file.string());
  sub.merge_job = submit(s, argv, "merge job");
  sub.shards = shards;
  sub.submitted = utc_now_iso();
  sub.submitted_epoch = static_cast<double>(std::time(nullptr));
  plan.submissions.push_back(sub);
  write_file_atomic(plan_file.string(), plan_json(plan));
  log_line(s.dir,
           "submitted shards " + join_ints(shards, ",") + " of " + std::to_string(plan.shards()) + " as job array " +
               sub.array_job + ", merge job " + sub.merge_job,
           s.log());
  return sub;
}

void refuse_while_queued(const Plan& plan) {
  if (plan.submissions.empty()) return;
  const Submission& s = plan.submissions.back();
  auto out = capture_output({"squeue", "-h", "-o", "%i", "-j", s.array_job + "," + s.merge_job});
  if (out && out->find_first_not_of(" \n") != std::string::npos) {
    throw UsageError("--resume: jobs " + s.array_job + "/" + s.merge_job + " of this " + plan.command +
                     " are still queued or running; wait for them or scancel them");
  }
}

void print_follow(const Submitter& s, const Submission& sub, const std::string& result) {
  std::cout << "follow:  squeue -j " << sub.array_job << "," << sub.merge_job << "\n"
            << "logs:    " << (s.dir / "slurm").string() << "/shard-<i>.log, merge.log\n"
            << "result:  " << result << " once job " << sub.merge_job << " ends\n";
}

int wait_for_merge(const fs::path& dir, const std::string& merge_job, const std::string& print_file) {
  signals::install();
  std::cout << "waiting for merge job " << merge_job << " (Ctrl-C stops waiting; the jobs go on)\n" << std::flush;
  int gone_polls = 0;
  while (true) {
    if (signals::interrupt_count() > 0) {
      std::cout << "stopped waiting; jobs keep running\n";
      return kExitInterrupted;
    }
    auto out = capture_output({"squeue", "-h", "-o", "%i", "-j", merge_job});
    const bool listed = out && out->find_first_not_of(" \n") != std::string::npos;
    if (!listed && merged_by(dir, merge_job)) break;
    // Gone from the queue without a merge: give the filesystem a moment,
    // then report instead of waiting forever.
    if (!listed && ++gone_polls > 20) {
      std::cerr << "merge job " << merge_job << " ended without merging; see " << (dir / "slurm" / "merge.log").string()
                << "\n";
      return kExitFailed;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  std::cout << read_file((dir / print_file).string()) << std::flush;
  rapidjson::Document doc;
  const bool read = json::parse(doc, read_file((dir / kMergeFile).string())).empty();
  return read && doc.IsObject() && doc.HasMember("exit_code") && doc["exit_code"].IsInt() ? doc["exit_code"].GetInt()
                                                                                          : kExitFailed;
}

}  // namespace zl::batch::slurm
