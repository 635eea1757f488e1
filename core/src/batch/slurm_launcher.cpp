// The Slurm launcher: one batch sharded over a Slurm cluster, with one result
// as if it had run on one host. Three roles, one per way it is called:
//
//   submit  `zlcore batch --launcher slurm ...` writes the plan into the batch
//           directory (a filesystem every node sees), submits one job array
//           (one task per shard) and a merge job that depends on it (afterany).
//   shard   `zlcore batch --launcher slurm --plan P --shard i` (the array
//           task) runs its share of the ops with the local launcher on the
//           devices Slurm allocated, into <batch>/shards/<i>/, with the
//           batch's options as the plan P records them.
//   merge   `zlcore batch --launcher slurm --plan P --merge` (the final
//           job) merges the shards' ops_status.csv into
//           <batch>/ops_status.csv and writes the summary.
//
// Only this file and its parts (slurm.hpp) know Slurm. It never goes through
// a shell itself: sbatch, squeue run from an argv; the job script exists
// because sbatch requires one, and it only `exec`s zlcore by absolute path.
// This file holds the orchestration; the plan, the shard mapping, the script
// text and the merge are in their own files.
#include <rapidjson/document.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <map>
#include <set>
#include <thread>

#include "../util/clock.hpp"
#include "../util/text.hpp"
#include "slurm.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/paths.hpp"
#include "zlcore/process.hpp"
#include "zlcore/python_choice.hpp"
#include "zlcore/signals.hpp"
#include "zlcore/visible_devices.hpp"

namespace zl::batch {
namespace {

namespace fs = std::filesystem;

bool has_run_flag(const BatchOptions& o, const std::string& flag) {
  for (const auto& [f, value] : o.run.flags) {
    if (f == flag) return true;
  }
  return false;
}

// What a batch that runs on this host settles here, not at the submit (which
// runs nothing, maybe on a login node without them): the suite when none was
// named, and one Python for every op, as `zlcore batch` does locally.
void settle_on_this_node(BatchOptions& o, const Backend& backend) {
  const char* suite_env = std::getenv("FLAGGEMS_DIR");
  if (!has_run_flag(o, "--flaggems-dir") && (suite_env == nullptr || *suite_env == '\0')) {
    const std::string suite = embedded_suite_dir();
    o.run.flags.emplace_back("--flaggems-dir", suite);
    o.recorded_options["flaggems-dir"] = suite;
    std::cout << "suite: " << suite << " (the embedded example suite: no --flaggems-dir / FLAGGEMS_DIR given)\n";
  }
  if (!has_run_flag(o, "--python")) {
    const std::string python = choose_python("").command;
    o.run.flags.emplace_back("--python", python);
    o.recorded_options["python"] = python;
  }
  for (const auto& [var, value] : visible_devices(backend).pins) o.recorded_options["env:" + var] = value;
}

// `--plan FILE --shard i`: shard i of the plan, as a local batch in
// <batch>/shards/<i>/ on the devices Slurm allocated.
int run_shard(const BatchOptions& job, const Backend& backend) {
  const fs::path plan_file = fs::absolute(slurm::option(job, "plan"));
  const slurm::Plan plan = slurm::read_plan(plan_file);
  if (!plan.has_options) {
    throw UsageError(plan_file.string() +
                     " holds no batch options (an older zlcore wrote it): resubmit the batch with --resume");
  }
  if (plan.backend != backend.name()) {
    throw UsageError(plan_file.string() + " is a batch on backend " + plan.backend + ", not " + backend.name());
  }
  const int i = slurm::shard_index(slurm::option(job, "shard"), plan.shards());
  BatchOptions shard = slurm::shard_options(plan, i, plan_file.parent_path());
  std::string how;
  shard.device_indices = slurm::allocated_devices(backend, &how);
  settle_on_this_node(shard, backend);
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  std::cout << "shard " << shard.recorded_options["shard"] << " on " << host << ": devices "
            << slurm::join_ints(shard.device_indices, ",") << " (" << how << ")\n"
            << std::flush;
  return make_local_launcher()->launch(shard, backend);
}

// Runs a Slurm client from an argv. The backend's visibility variable is
// removed so that inside the job it can only be Slurm's (see
// slurm::allocated_devices).
Captured run_tool(const std::vector<std::string>& argv, const Backend& backend) {
  CaptureOptions opts;
  opts.timeout_s = 120;
  opts.env_unset = backend.visibility_env();
  opts.with_stderr = true;
  Captured c = capture(argv, opts);
  if (!c.started) c.output = c.spawn_error;
  return c;
}

class SlurmSubmit {
 public:
  SlurmSubmit(const BatchOptions& o, const Backend& b) : o_(o), backend_(b), dir_(fs::absolute(o.out_dir)) {
    // The jobs run in the submit directory, but a plan that outlives it (a
    // resume from elsewhere) must not depend on it.
    o_.backend_dir = fs::absolute(o.backend_dir).string();
    o_.out_dir = dir_.string();
    if (!o_.run.replay_from.empty()) o_.run.replay_from = fs::absolute(o_.run.replay_from).string();
    head_.exe = fs::read_symlink("/proc/self/exe").string();
    head_.backend_dir = fs::absolute(o.backend_dir).string();
    head_.backend = b.name();
  }

  int run() {
    const bool dry = !slurm::option(o_, "dry-run").empty();
    slurm::Plan plan = o_.resume ? resume_plan() : new_plan();
    std::vector<int> shards = o_.resume ? rerun(plan) : slurm::all_shards(plan);
    // This invocation's options, a resume's included: the shards submitted
    // now run with them.
    plan.options = o_;
    plan.has_options = true;

    const fs::path plan_file = dir_ / slurm::kPlanFile;
    const std::string array_script = slurm::shard_script(head_, plan_file, plan.shards());
    const std::string merge_script = slurm::merge_script(head_, plan_file);
    const std::vector<std::string> array_argv = slurm::array_sbatch(o_, dir_, shards);
    const std::vector<std::string> merge_argv = slurm::merge_sbatch(o_, dir_, "<array job id>");
    if (dry) {
      std::cout << "# plan (" << (dir_ / slurm::kPlanFile).string() << ")\n" << slurm::plan_json(plan);
      for (int i = 0; i < plan.shards(); ++i) {
        std::cout << "# shard " << i << " ops: " << text::join(plan.assignment[static_cast<size_t>(i)], ",") << "\n";
      }
      std::cout << "# shards to submit: " << slurm::join_ints(shards, ",") << "\n";
      std::cout << "# array job: " << text::join(array_argv, " ") << " " << (dir_ / "plan" / "shard.sbatch").string()
                << "\n"
                << array_script << "# merge job: " << text::join(merge_argv, " ") << " "
                << (dir_ / "plan" / "merge.sbatch").string() << "\n"
                << merge_script << "# dry run: nothing written, nothing submitted\n";
      return kExitOk;
    }

    write_inputs(plan);
    if (shards.empty()) {
      std::cout << "every op has passed; nothing to submit. Merging what the shards hold:\n";
      return slurm::merge(dir_, plan, "");
    }
    write_file_atomic((dir_ / "plan" / "shard.sbatch").string(), array_script);
    write_file_atomic((dir_ / "plan" / "merge.sbatch").string(), merge_script);
    fs::permissions(dir_ / "plan" / "shard.sbatch", fs::perms::owner_exec, fs::perm_options::add);
    fs::permissions(dir_ / "plan" / "merge.sbatch", fs::perms::owner_exec, fs::perm_options::add);

    std::vector<std::string> argv = array_argv;
    argv.push_back((dir_ / "plan" / "shard.sbatch").string());
    const std::string array_job = submit(argv, "job array");
    argv = slurm::merge_sbatch(o_, dir_, array_job);
    argv.push_back((dir_ / "plan" / "merge.sbatch").string());
    const std::string merge_job = submit(argv, "merge job");

    slurm::Submission s;
    s.array_job = array_job;
    s.merge_job = merge_job;
    s.shards = shards;
    s.submitted = utc_now_iso();
    s.submitted_epoch = static_cast<double>(std::time(nullptr));
    plan.submissions.push_back(s);
    write_file_atomic((dir_ / slurm::kPlanFile).string(), slurm::plan_json(plan));
    const std::string list = slurm::join_ints(shards, ",");
    slurm::log_line(dir_, "submitted shards " + list + " of " + std::to_string(plan.shards()) + " as job array " +
                              array_job + ", merge job " + merge_job);

    std::cout << "batch " << dir_.string() << ": " << plan.ops.size() << " ops in " << plan.shards() << " shards\n"
              << "submitted shards " << list << " as job array " << array_job << ", merge job " << merge_job
              << " (afterany)\n";
    if (slurm::option(o_, "wait").empty()) {
      std::cout << "follow:  squeue -j " << array_job << "," << merge_job << "\n"
                << "logs:    " << (dir_ / "slurm").string() << "/shard-<i>.log, merge.log\n"
                << "result:  " << (dir_ / "summary.txt").string() << " and " << (dir_ / slurm::kStatusFile).string()
                << " once job " << merge_job << " ends\n";
      return kExitOk;
    }
    return wait_for(merge_job);
  }

 private:
  slurm::Plan new_plan() {
    if (fs::exists(dir_ / slurm::kPlanFile) || fs::exists(dir_ / slurm::kStatusFile)) {
      throw UsageError("--out " + dir_.string() +
                       " already holds a batch; pass --resume to continue it, or another --out");
    }
    return slurm::deal_round_robin(backend_.name(), o_.ops, slurm::shard_count(o_));
  }

  slurm::Plan resume_plan() {
    slurm::Plan p = slurm::read_plan(dir_ / slurm::kPlanFile);
    std::set<std::string> given, planned(p.ops.begin(), p.ops.end());
    for (const OpSpec& op : o_.ops) given.insert(op.name);
    if (given != planned) {
      throw UsageError("--resume: the ops differ from the plan's (" + text::join(p.ops, ",") + "); pass the same list");
    }
    // A shard still queued or running would race its resubmission.
    if (!p.submissions.empty()) {
      const slurm::Submission& s = p.submissions.back();
      auto out = capture_output({"squeue", "-h", "-o", "%i", "-j", s.array_job + "," + s.merge_job});
      if (out && out->find_first_not_of(" \n") != std::string::npos) {
        throw UsageError("--resume: jobs " + s.array_job + "/" + s.merge_job +
                         " of this batch are still queued or running; wait for them or scancel them");
      }
    }
    return p;
  }

  std::vector<int> rerun(const slurm::Plan& p) const {
    std::vector<std::vector<OpRow>> rows;
    for (int i = 0; i < p.shards(); ++i) rows.push_back(slurm::shard_rows(dir_, i));
    return slurm::shards_to_rerun(p, rows);
  }

  void write_inputs(const slurm::Plan& p) {
    fs::create_directories(dir_ / "plan");
    fs::create_directories(dir_ / "slurm");
    std::map<std::string, const OpSpec*> by_name;
    for (const OpSpec& op : o_.ops) by_name[op.name] = &op;
    std::vector<OpSpec> all;
    for (int i = 0; i < p.shards(); ++i) {
      std::vector<OpSpec> mine;
      for (const std::string& name : p.assignment[static_cast<size_t>(i)]) mine.push_back(*by_name.at(name));
      all.insert(all.end(), mine.begin(), mine.end());
      fs::create_directories(slurm::shard_dir(dir_, i));
      write_file_atomic((dir_ / "plan" / ("shard-" + std::to_string(i) + ".yaml")).string(), slurm::ops_yaml(mine));
    }
    write_file_atomic((dir_ / "plan" / "ops.yaml").string(), slurm::ops_yaml(all));
    // Before any job is submitted: a shard reads its options here.
    write_file_atomic((dir_ / slurm::kPlanFile).string(), slurm::plan_json(p));
  }

  std::string submit(const std::vector<std::string>& argv, const std::string& what) {
    Captured r = run_tool(argv, backend_);
    const std::string id = r.exit_code == 0 ? slurm::parse_job_id(r.output) : "";
    if (id.empty()) {
      slurm::log_line(dir_, what + ": sbatch failed: " + r.output);
      throw PreflightError("sbatch", what + ": " + text::join(argv, " ") + " failed (exit " +
                                         std::to_string(r.exit_code) + "): " + text::one_line(r.output));
    }
    return id;
  }

  // Blocks until the merge job has left the queue, then prints its summary.
  int wait_for(const std::string& merge_job) {
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
      if (!listed && merged_by(merge_job)) break;
      // Gone from the queue without a merge: give the filesystem a moment,
      // then report instead of waiting forever.
      if (!listed && ++gone_polls > 20) {
        std::cerr << "merge job " << merge_job << " ended without merging; see "
                  << (dir_ / "slurm" / "merge.log").string() << "\n";
        return kExitFailed;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    std::cout << read_file((dir_ / "summary.txt").string()) << std::flush;
    rapidjson::Document doc;
    doc.Parse(read_file((dir_ / slurm::kMergeFile).string()).c_str());
    return doc.IsObject() && doc.HasMember("exit_code") ? doc["exit_code"].GetInt() : kExitFailed;
  }

  bool merged_by(const std::string& job) const {
    try {
      rapidjson::Document doc;
      doc.Parse(read_file((dir_ / slurm::kMergeFile).string()).c_str());
      return doc.IsObject() && doc.HasMember("merge_job") && job == doc["merge_job"].GetString();
    } catch (const std::exception&) {
      return false;
    }
  }

  BatchOptions o_;
  const Backend& backend_;
  fs::path dir_;
  slurm::JobHead head_;
};

class SlurmLauncher : public Launcher {
 public:
  const char* name() const override { return "slurm"; }

  // Only a shard runs ops here; submitting and merging touch no device.
  bool uses_local_devices(const BatchOptions& o) const override { return !slurm::option(o, "shard").empty(); }

  int launch(const BatchOptions& o, const Backend& backend) override {
    if (!slurm::option(o, "shard").empty()) return run_shard(o, backend);
    if (!slurm::option(o, "merge").empty()) {
      const fs::path plan_file = fs::absolute(slurm::option(o, "plan"));
      const char* job = std::getenv("SLURM_JOB_ID");
      return slurm::merge(plan_file.parent_path(), slurm::read_plan(plan_file), job ? job : "");
    }
    return SlurmSubmit(o, backend).run();
  }
};

}  // namespace

std::unique_ptr<Launcher> make_slurm_launcher() { return std::make_unique<SlurmLauncher>(); }

}  // namespace zl::batch
