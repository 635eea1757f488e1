// `zlcore ab --launcher slurm`: three roles, as for batch (docs/slurm.md):
//
//   submit  writes plan.json (command "ab": the ops, their shards, and the
//           A/B's own flags), submits one array task per shard and a merge
//           job (afterany), through batch's Slurm parts.
//   shard   `ab --plan P --shard i`: the plan's flags with shard i's ops, out
//           <dir>/shards/<i>/ and the devices Slurm allocated, run as an A/B
//           on this node (--resume when the shard already started).
//   merge   `ab --plan P --merge`: ab::merge_shards, then summary.txt and
//           merge.json, which --wait reads.
//
// The shards and the merge parse the flags the submit was given (paths made
// absolute), with the same parser as an A/B on one host: every shard has the
// same sides, winners mode and report options.
#include "ab_slurm.hpp"

#include <rapidjson/document.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>

#include "../batch/slurm.hpp"
#include "../util/clock.hpp"
#include "../util/json.hpp"
#include "../util/text.hpp"
#include "ab_options.hpp"
#include "option_parser.hpp"
#include "zlcore/ab.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"

namespace fs = std::filesystem;
namespace slurm = zl::batch::slurm;

namespace zl::cli {
namespace {

// What the jobs are not given from the submit's command line: the launcher's
// flags, and what each job sets itself (its ops, directory, devices, resume).
const std::set<std::string> kNotForJobs = {"launcher", "shards",  "partition", "gpus-per-shard", "time",   "sbatch-arg",
                                           "wait",     "dry-run", "plan",      "shard",          "merge",  "backend",
                                           "out",      "ops",     "ops-file",  "devices",        "resume", "help"};
// Flags whose value is a path: made absolute, so a job (or a resume from
// another directory) does not depend on the submit's working directory.
const std::set<std::string> kPaths = {"a", "b", "same-winners", "noise-floor", "a-replay-from", "b-replay-from"};

// The A/B's flags as given, minus kNotForJobs, paths made absolute.
std::vector<std::string> job_args(const po::options_description& desc, const std::vector<std::string>& args) {
  const po::parsed_options parsed = parse_options(args, desc, po::positional_options_description());
  std::vector<std::string> out;
  for (const po::option& opt : parsed.options) {
    if (kNotForJobs.count(opt.string_key)) continue;
    if (kPaths.count(opt.string_key) && opt.value.size() == 1) {
      out.insert(out.end(), {"--" + opt.string_key, fs::absolute(opt.value[0]).lexically_normal().string()});
    } else {
      out.insert(out.end(), opt.original_tokens.begin(), opt.original_tokens.end());
    }
  }
  return out;
}

ab::Options plan_options(Context& ctx, const Backend& backend, const po::options_description& desc,
                         std::vector<std::string> argv, bool resolve_devices) {
  po::variables_map vm;
  parse("ab", desc, argv, vm);
  return ab_options(ctx, backend, vm, resolve_devices);
}

slurm::Plan read_ab_plan(const fs::path& file) {
  slurm::Plan plan = slurm::read_plan(file);
  if (plan.command != "ab") {
    throw UsageError(file.string() + " is the plan of a zlcore " + plan.command + ", not of an A/B");
  }
  return plan;
}

// The merge, in the merge job or in place when a resume has nothing to run.
int merge(Context& ctx, const Backend& backend, const po::options_description& desc, const slurm::Plan& plan,
          const fs::path& dir, const std::string& merge_job) {
  std::vector<std::string> argv = plan.ab_args;
  argv.insert(argv.end(), {"--out", dir.string(), "--ops", text::join(plan.ops, ",")});
  ab::Options o = plan_options(ctx, backend, desc, argv, false);
  o.ops = plan.options.ops;
  o.shards = plan.shards();
  const ab::ShardsMerged m = ab::merge_shards(o, dir.string(), plan.assignment);
  write_file_atomic((dir / "summary.txt").string(), m.text);
  rapidjson::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  doc.AddMember("merge_job", json::str(merge_job, a), a);
  doc.AddMember("ended", json::str(utc_now_iso(), a), a);
  doc.AddMember("exit_code", m.exit_code, a);
  write_file_atomic((dir / slurm::kMergeFile).string(), json::pretty(doc));
  slurm::log_line(dir, "merged " + std::to_string(plan.shards()) + " shards: exit " + std::to_string(m.exit_code),
                  "ab.log");
  std::cout << m.text << std::flush;
  return m.exit_code;
}

int run_shard(Context& ctx, const Backend& backend, const po::options_description& desc, const slurm::Plan& plan,
              const fs::path& dir, const std::string& shard_text) {
  const int i = slurm::shard_index(shard_text, plan.shards());
  std::string how;
  const std::vector<int> devices = slurm::allocated_devices(backend, &how);
  const std::string out = ab::ab_shard_dir(dir.string(), i);
  std::vector<std::string> argv = plan.ab_args;
  argv.insert(argv.end(), {"--out", out, "--ops", text::join(plan.assignment.at(static_cast<size_t>(i)), ","),
                           "--devices", slurm::join_ints(devices, ",")});
  // A shard that ran before (killed, refused, or more rounds asked) goes on.
  if (fs::is_regular_file(fs::path(out) / "ab_identity.json")) argv.emplace_back("--resume");
  ab::Options o = plan_options(ctx, backend, desc, argv, true);
  o.ops = slurm::shard_options(plan, i, dir).ops;  // the plan's op specs, whole
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  std::cout << "shard " << i << "/" << plan.shards() << " on " << host << ": devices " << slurm::join_ints(devices, ",")
            << " (" << how << ")\n"
            << std::flush;
  return ab::run_ab(o);
}

}  // namespace

int ab_slurm_job(Context& ctx, const po::options_description& desc, const po::variables_map& vm) {
  for (const auto& [name, value] : vm) {
    if (value.defaulted() || name == "plan" || name == "shard" || name == "merge" || name == "backend" ||
        name == "launcher")
      continue;
    throw UsageError("ab: --" + name + " does not apply to --shard / --merge: a job takes the A/B's flags from --plan");
  }
  if (vm.count("shard") && vm.count("merge")) throw UsageError("ab: --shard and --merge: give one");
  if (!vm.count("shard") && !vm.count("merge")) {
    throw UsageError("ab: --plan is for the jobs of a Slurm A/B (--shard, --merge)");
  }
  if (!vm.count("plan")) throw UsageError("ab: --shard / --merge need --plan, the plan file the submit wrote");
  const fs::path plan_file = fs::absolute(vm["plan"].as<std::string>());
  const slurm::Plan plan = read_ab_plan(plan_file);
  const Backend& backend = ctx.registry().select(flag_or_env(vm, "backend", "ZL_BACKEND"), "--backend / ZL_BACKEND");
  if (plan.backend != backend.name()) {
    throw UsageError(plan_file.string() + " is an A/B on backend " + plan.backend + ", not " + backend.name());
  }
  const fs::path dir = plan_file.parent_path();
  if (vm.count("shard")) return run_shard(ctx, backend, desc, plan, dir, vm["shard"].as<std::string>());
  const char* job = std::getenv("SLURM_JOB_ID");
  return merge(ctx, backend, desc, plan, dir, job != nullptr ? job : "");
}

int ab_slurm_submit(Context& ctx, const Backend& backend, const po::options_description& desc,
                    const std::vector<std::string>& args, const po::variables_map& vm) {
  if (vm.count("devices")) {
    throw UsageError(
        "ab: --devices does not apply to --launcher slurm: the cluster allocates devices (see "
        "--gpus-per-shard)");
  }
  const ab::Options o = ab_options(ctx, backend, vm, false);
  const fs::path dir = fs::absolute(o.out_dir).lexically_normal();

  slurm::Submitter sub;
  sub.dir = dir;
  sub.head = {fs::read_symlink("/proc/self/exe").string(), fs::absolute(ctx.backend_dir()).string(), backend.name(),
              "ab"};
  sub.visibility_env = backend.visibility_env();
  batch::BatchOptions& bo = sub.o;  // the launcher's options, as batch keeps them
  bo.backend = backend.name();
  bo.backend_dir = sub.head.backend_dir;
  bo.ops = o.ops;
  bo.out_dir = dir.string();
  for (const char* flag : {"partition", "shards", "gpus-per-shard", "time"}) {
    if (vm.count(flag)) bo.launcher_options[flag] = vm[flag].as<std::string>();
  }
  for (const char* flag : {"wait", "dry-run"}) {
    if (vm.count(flag)) bo.launcher_options[flag] = "1";
  }
  if (vm.count("sbatch-arg")) bo.launcher_args = vm["sbatch-arg"].as<std::vector<std::string>>();
  const int k = slurm::shard_count(bo);  // a bad --shards: exit 2 here, before anything is written
  slurm::array_sbatch(bo, dir, {0});     // a bad --gpus-per-shard too

  slurm::Plan plan;
  std::vector<int> shards;
  if (o.resume) {
    if (!fs::exists(dir / slurm::kPlanFile)) {
      throw UsageError("ab --resume: " + dir.string() +
                       " has no plan.json: not a Slurm A/B (resume an A/B that ran "
                       "on one host without --launcher slurm)");
    }
    plan = read_ab_plan(dir / slurm::kPlanFile);
    std::set<std::string> given, planned(plan.ops.begin(), plan.ops.end());
    for (const batch::OpSpec& op : o.ops) given.insert(op.name);
    if (given != planned) {
      throw UsageError("ab --resume: the ops differ from the plan's (" + text::join(plan.ops, ",") +
                       "); pass the same list");
    }
    slurm::refuse_while_queued(plan);
    std::set<std::string> settled_on_node;
    for (const char* x : {"a-python", "b-python"}) {
      if (!vm.count(x)) settled_on_node.insert(x);
    }
    shards = ab::shards_to_rerun(o, dir.string(), plan.assignment, settled_on_node);
  } else {
    std::error_code ec;
    if (fs::exists(dir, ec) && !fs::is_empty(dir, ec)) {
      throw UsageError("ab: --out " + dir.string() +
                       " exists and is not empty; give a new directory, or --resume to continue it");
    }
    plan = slurm::deal_round_robin(backend.name(), o.ops, k);
    plan.command = "ab";
    shards = slurm::all_shards(plan);
  }
  // This invocation's flags, a resume's included: the shards submitted now
  // and the merge read them (the settings that change numbers are checked
  // against every shard's first run above and in each shard).
  plan.ab_args = job_args(desc, args);
  plan.options = bo;
  plan.has_options = true;

  if (vm.count("dry-run")) {
    slurm::print_dry_run(sub, plan, shards);
    return kExitOk;
  }
  slurm::write_inputs(dir, plan, o.ops);
  if (shards.empty()) {
    std::cout << "every shard has finished its rounds; nothing to submit. Merging what the shards hold:\n";
    return merge(ctx, backend, desc, plan, dir, "");
  }
  const slurm::Submission s = slurm::submit_jobs(sub, plan, shards);
  std::cout << "ab " << dir.string() << ": " << plan.ops.size() << " ops in " << plan.shards() << " shards, "
            << o.rounds << " rounds each\n"
            << "submitted shards " << slurm::join_ints(shards, ",") << " as job array " << s.array_job << ", merge job "
            << s.merge_job << " (afterany)\n";
  if (!vm.count("wait")) {
    slurm::print_follow(sub, s, (dir / "report.md").string() + " and " + (dir / "summary.txt").string());
    return kExitOk;
  }
  return slurm::wait_for_merge(dir, s.merge_job, "summary.txt");
}

}  // namespace zl::cli
