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
// text, the submission (shared with `zlcore ab`) and the merge are in their
// own files.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <set>

#include "../util/text.hpp"
#include "slurm.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/paths.hpp"
#include "zlcore/python_choice.hpp"
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
  if (plan.command != "batch") {
    throw UsageError(plan_file.string() + " is the plan of a zlcore " + plan.command + ", not of a batch");
  }
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

class SlurmSubmit {
 public:
  SlurmSubmit(const BatchOptions& o, const Backend& b) : o_(o), backend_(b), dir_(fs::absolute(o.out_dir)) {
    // The jobs run in the submit directory, but a plan that outlives it (a
    // resume from elsewhere) must not depend on it.
    o_.backend_dir = fs::absolute(o.backend_dir).string();
    o_.out_dir = dir_.string();
    if (!o_.run.replay_from.empty()) o_.run.replay_from = fs::absolute(o_.run.replay_from).string();
    sub_.dir = dir_;
    sub_.head.exe = fs::read_symlink("/proc/self/exe").string();
    sub_.head.backend_dir = fs::absolute(o.backend_dir).string();
    sub_.head.backend = b.name();
    sub_.visibility_env = b.visibility_env();
  }

  int run() {
    const bool dry = !slurm::option(o_, "dry-run").empty();
    slurm::Plan plan = o_.resume ? resume_plan() : new_plan();
    std::vector<int> shards = o_.resume ? rerun(plan) : slurm::all_shards(plan);
    // This invocation's options, a resume's included: the shards submitted
    // now run with them.
    plan.options = o_;
    plan.has_options = true;

    sub_.o = o_;
    if (dry) {
      slurm::print_dry_run(sub_, plan, shards);
      return kExitOk;
    }

    slurm::write_inputs(dir_, plan, o_.ops);
    if (shards.empty()) {
      std::cout << "every op has passed; nothing to submit. Merging what the shards hold:\n";
      return slurm::merge(dir_, plan, "");
    }
    const slurm::Submission s = slurm::submit_jobs(sub_, plan, shards);
    std::cout << "batch " << dir_.string() << ": " << plan.ops.size() << " ops in " << plan.shards() << " shards\n"
              << "submitted shards " << slurm::join_ints(shards, ",") << " as job array " << s.array_job
              << ", merge job " << s.merge_job << " (afterany)\n";
    if (slurm::option(o_, "wait").empty()) {
      slurm::print_follow(sub_, s, (dir_ / "summary.txt").string() + " and " + (dir_ / slurm::kStatusFile).string());
      return kExitOk;
    }
    return slurm::wait_for_merge(dir_, s.merge_job, "summary.txt");
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
    slurm::refuse_while_queued(p);
    return p;
  }

  std::vector<int> rerun(const slurm::Plan& p) const {
    std::vector<std::vector<OpRow>> rows;
    for (int i = 0; i < p.shards(); ++i) rows.push_back(slurm::shard_rows(dir_, i));
    return slurm::shards_to_rerun(p, rows);
  }

  BatchOptions o_;
  const Backend& backend_;
  fs::path dir_;
  slurm::Submitter sub_;
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
      const slurm::Plan plan = slurm::read_plan(plan_file);
      if (plan.command != "batch") {
        throw UsageError(plan_file.string() + " is the plan of a zlcore " + plan.command + ", not of a batch");
      }
      return slurm::merge(plan_file.parent_path(), plan, job ? job : "");
    }
    return SlurmSubmit(o, backend).run();
  }
};

}  // namespace

std::unique_ptr<Launcher> make_slurm_launcher() { return std::make_unique<SlurmLauncher>(); }

}  // namespace zl::batch
