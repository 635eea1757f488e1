// The Slurm launcher's pure parts (core/src/batch/slurm.hpp) without a
// cluster: the plan's round trip of every batch option, bad plan files, the
// deal of ops to shards, the job scripts and sbatch lines, and the merge.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <functional>

#include "batch/slurm.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/batch.hpp"
#include "zlcore/errors.hpp"
#include "zltest/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace zl::batch;
using namespace zl::batch::slurm;
using zltest::TempDir;

namespace {

std::string slurm_usage_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const zl::UsageError& e) {
    return e.what();
  }
  return "(no UsageError)";
}

OpSpec op_with_every_field(const std::string& n) {
  OpSpec op;
  // Every field by name: a field added to OpSpec stops this compiling. Give
  // it a value that is not its default here, and write it into the plan
  // (slurm_plan.cpp), or the shards never see it.
  auto& [name, mark, op_file, test_node, dtypes, shape_file, expand] = op;
  name = n;
  mark = n + "_mark";
  op_file = "/suite/test_" + n + ".py";
  test_node = "test_" + n + ".py::test_it[\"quoted\"]";
  dtypes = {"float16", "bfloat16"};
  shape_file = "/shapes/" + n + ".yaml";
  expand = OpSpec::Expand::file;
  return op;
}

// Every field of BatchOptions set to something other than its default.
BatchOptions options_with_every_field() {
  BatchOptions o;
  // Every field by name, as above: a new BatchOptions field stops this
  // compiling until it has a value here (and the plan holds it).
  auto& [backend, backend_dir, device_indices, ops, out_dir, resume, timeout_s, backstop_s, warmup_devices,
         compile_lanes, compile_lanes_from, cold, standby, orphans, idle, run, recorded_options, caliber, force_resume,
         launcher_options, launcher_args] = o;
  auto& [check, max_util_percent, max_mem_used_mib, recheck_s, give_up_s] = idle;
  auto& [flags, dtypes, replay_from] = run;
  backend = "fakegpu";
  backend_dir = "/opt/zl/plugins";
  device_indices = {3, 1};
  ops = {op_with_every_field("abs"), op_with_every_field("mm")};
  out_dir = "/shared/runs/b";
  resume = true;
  timeout_s = 12.5;
  backstop_s = 7.25;
  warmup_devices = 2;
  compile_lanes = 5;
  compile_lanes_from = "--compile-ahead";  // auto would be the node's own cores
  cold = true;
  standby = true;
  orphans = "kill";
  check = false;
  max_util_percent = 42;
  max_mem_used_mib = int64_t{1} << 40;
  recheck_s = 0.5;
  give_up_s = 99.75;
  flags = {{"--level", "comprehensive"}, {"--force-replay", ""}, {"--mode", "it's \"quoted\""}};
  dtypes = {"float32", "int8"};
  replay_from = "/shared/runs/a";
  recorded_options = {{"level", "comprehensive"}, {"env:X", "1"}};
  caliber = {{"timer", "graph"}, {"shape_file_sha256", "abc"}};
  force_resume = true;
  launcher_options = {{"partition", "gpu"}, {"wait", "1"}};
  launcher_args = {"--account=perf", "--qos=high"};
  return o;
}

void expect_same(const OpSpec& a, const OpSpec& b) {
  const auto& [name, mark, op_file, test_node, dtypes, shape_file, expand] = a;
  EXPECT_EQ(name, b.name);
  EXPECT_EQ(mark, b.op);
  EXPECT_EQ(op_file, b.op_file);
  EXPECT_EQ(test_node, b.test_node);
  EXPECT_EQ(dtypes, b.dtypes);
  EXPECT_EQ(shape_file, b.shape_file);
  EXPECT_EQ(expand, b.expand);
}

void expect_same(const BatchOptions& a, const BatchOptions& b) {
  const auto& [backend, backend_dir, device_indices, ops, out_dir, resume, timeout_s, backstop_s, warmup_devices,
               compile_lanes, compile_lanes_from, cold, standby, orphans, idle, run, recorded_options, caliber,
               force_resume, launcher_options, launcher_args] = a;
  EXPECT_EQ(backend, b.backend);
  EXPECT_EQ(backend_dir, b.backend_dir);
  EXPECT_EQ(device_indices, b.device_indices);
  ASSERT_EQ(ops.size(), b.ops.size());
  for (size_t i = 0; i < ops.size(); ++i) expect_same(ops[i], b.ops[i]);
  EXPECT_EQ(out_dir, b.out_dir);
  EXPECT_EQ(resume, b.resume);
  EXPECT_EQ(timeout_s, b.timeout_s);
  EXPECT_EQ(backstop_s, b.backstop_s);
  EXPECT_EQ(warmup_devices, b.warmup_devices);
  EXPECT_EQ(compile_lanes, b.compile_lanes);
  EXPECT_EQ(compile_lanes_from, b.compile_lanes_from);
  EXPECT_EQ(cold, b.cold);
  EXPECT_EQ(standby, b.standby);
  EXPECT_EQ(orphans, b.orphans);
  const auto& [check, max_util_percent, max_mem_used_mib, recheck_s, give_up_s] = idle;
  EXPECT_EQ(check, b.idle.check);
  EXPECT_EQ(max_util_percent, b.idle.max_util_percent);
  EXPECT_EQ(max_mem_used_mib, b.idle.max_mem_used_mib);
  EXPECT_EQ(recheck_s, b.idle.recheck_s);
  EXPECT_EQ(give_up_s, b.idle.give_up_s);
  const auto& [flags, dtypes, replay_from] = run;
  EXPECT_EQ(flags, b.run.flags);
  EXPECT_EQ(dtypes, b.run.dtypes);
  EXPECT_EQ(replay_from, b.run.replay_from);
  EXPECT_EQ(recorded_options, b.recorded_options);
  EXPECT_EQ(caliber, b.caliber);
  EXPECT_EQ(force_resume, b.force_resume);
  EXPECT_EQ(launcher_options, b.launcher_options);
  EXPECT_EQ(launcher_args, b.launcher_args);
}

Plan plan_with_every_field() {
  Plan p;
  p.backend = "fakegpu";
  p.ops = {"abs", "mm"};
  p.assignment = {{"abs"}, {"mm"}};
  p.options = options_with_every_field();
  p.has_options = true;
  Submission s;
  s.array_job = "101";
  s.merge_job = "102";
  s.submitted = "2026-12-03T10:00:00Z";
  s.submitted_epoch = 1796292000;
  s.shards = {0, 1};
  p.submissions = {s};
  return p;
}

fs::path write_plan(const fs::path& dir, const std::string& text) {
  const fs::path file = dir / kPlanFile;
  zl::write_file_atomic(file.string(), text);
  return file;
}

// The plan's JSON text with one substring replaced (it must occur).
std::string edited(const std::string& text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.substr(0, at) + to + text.substr(at + from.size());
}

}  // namespace

// ---- the plan -----------------------------------------------------------------

TEST(SlurmPlan, EveryBatchOptionRoundTrips) {
  TempDir tmp;
  const Plan p = plan_with_every_field();
  const Plan back = read_plan(write_plan(tmp.path(), plan_json(p)));
  ASSERT_TRUE(back.has_options);
  expect_same(p.options, back.options);
  EXPECT_EQ(back.backend, p.backend);
  EXPECT_EQ(back.ops, p.ops);
  EXPECT_EQ(back.assignment, p.assignment);
  ASSERT_EQ(back.submissions.size(), 1u);
  EXPECT_EQ(back.submissions[0].array_job, "101");
  EXPECT_EQ(back.submissions[0].merge_job, "102");
  EXPECT_EQ(back.submissions[0].shards, (std::vector<int>{0, 1}));
  EXPECT_EQ(back.submissions[0].submitted_epoch, 1796292000);
  EXPECT_EQ(plan_json(back), plan_json(p));
}

TEST(SlurmPlan, APlanWithoutOptionsStillReadsForResume) {
  TempDir tmp;
  // Schema 1 (zlcore before the shards read their options from the plan).
  const Plan back = read_plan(write_plan(tmp.path(), R"({"schema": 1, "backend": "host", "ops": ["a", "b"],
      "assignment": [["a"], ["b"]], "options": {}, "submissions": []})"));
  EXPECT_FALSE(back.has_options);
  EXPECT_EQ(back.shards(), 2);
}

TEST(SlurmPlan, APlanOfAnOlderZlcoreRunsItsShardsWithoutCompilingAhead) {
  TempDir tmp;
  std::string text = plan_json(plan_with_every_field());
  text = edited(text, "\"compile_lanes\": 5,\n", "");
  text = edited(text, "\"compile_lanes_from\": \"--compile-ahead\",\n", "");
  const Plan back = read_plan(write_plan(tmp.path(), text));
  ASSERT_TRUE(back.has_options);
  EXPECT_EQ(back.options.compile_lanes, 0);
  EXPECT_EQ(back.options.compile_lanes_from, "an older plan");
}

TEST(SlurmPlan, BadPlanFilesAreOneLineNamingTheFileAndTheKey) {
  TempDir tmp;
  const std::string good = plan_json(plan_with_every_field());
  const std::string file = (tmp.path() / kPlanFile).string();
  const auto message = [&](const std::string& text) {
    write_plan(tmp.path(), text);
    return slurm_usage_error([&] { read_plan(file); });
  };
  EXPECT_EQ(slurm_usage_error([&] { read_plan(tmp.path() / "none" / kPlanFile); }),
            (tmp.path() / "none").string() + " has no plan.json: not a Slurm batch");
  EXPECT_EQ(message("[1, 2]"), file + " is not a zlcore Slurm plan: the document is not an object");
  EXPECT_NE(message("{\"ops\": ").find(file + " is not a zlcore Slurm plan: "), std::string::npos);
  EXPECT_EQ(message(edited(good, "\"check\": false", "\"check\": \"no\"")),
            file + " is not a zlcore Slurm plan: 'batch.idle.check' is not true or false");
  EXPECT_EQ(message(edited(good, "\"caliber\"", "\"calibre\"")),
            file + " is not a zlcore Slurm plan: 'batch.caliber' is missing");
  EXPECT_EQ(message(edited(good, "\"name\": \"mm\"", "\"name\": 7")),
            file + " is not a zlcore Slurm plan: 'batch.ops[1].name' is not a string");
  EXPECT_EQ(message(edited(good, "\"timeout_s\": 12.5", "\"timeout_s\": \"12.5\"")),
            file + " is not a zlcore Slurm plan: 'batch.timeout_s' is not a number");
  EXPECT_EQ(message(edited(good, "\"warmup_devices\": 2", "\"warmup_devices\": 2.5")),
            file + " is not a zlcore Slurm plan: 'batch.warmup_devices' is not an integer");
  EXPECT_EQ(message(edited(good, "\"--level\",\n", "\"--level\", \"x\",\n")),
            file + " is not a zlcore Slurm plan: 'batch.run.flags[0]' is not a pair [name, value]");
  EXPECT_EQ(message(edited(good, "\"env:X\": \"1\"", "\"env:X\": 1")),
            file + " is not a zlcore Slurm plan: 'batch.recorded_options.env:X' is not a string");
  EXPECT_EQ(message(edited(good, "\"expand\": \"file\"", "\"expand\": \"some\"")),
            file + " is not a zlcore Slurm plan: 'expand' of an op is 'some', not none, all or file");
  EXPECT_EQ(message(edited(good, "\"schema\": 2", "\"schema\": 4")),
            file + " is not a zlcore Slurm plan: schema 4 is newer than this zlcore's (3)");
  EXPECT_EQ(message(edited(good, "\"assignment\": [\n    [\n      \"abs\"", "\"assignment\": [\n    [\n      \"neg\"")),
            file + " is not a zlcore Slurm plan: 'assignment[0]' names 'neg', which 'ops' lacks");
  EXPECT_EQ(message(edited(good, "\"shards\": [\n        0", "\"shards\": [\n        \"0\"")),
            file + " is not a zlcore Slurm plan: 'submissions[0].shards[0]' is not an integer");
  EXPECT_EQ(message(edited(good, "\"compile_lanes\": 5", "\"compile_lanes\": -7")),
            file + " is not a zlcore Slurm plan: compile_lanes -7 is not from 0 to 64");
  EXPECT_EQ(message(edited(good, "\"warmup_devices\": 2", "\"warmup_devices\": -1")),
            file + " is not a zlcore Slurm plan: warmup_devices -1 is not from 0 to 4096");
  EXPECT_EQ(message(edited(good, "\"max_util_percent\": ", "\"max_util_percent\": 1")),
            file + " is not a zlcore Slurm plan: idle.max_util_percent 1" +
                std::to_string(plan_with_every_field().options.idle.max_util_percent) + " is not from 0 to 100");
}

TEST(SlurmPlan, OpsYamlReadsBackAsTheSameOps) {
  TempDir tmp;
  std::vector<OpSpec> ops = {op_with_every_field("abs"), op_with_every_field("mm")};
  for (OpSpec& op : ops) {
    op.name = op.op;  // a YAML ops file names an op by its mark
    op.expand = OpSpec::Expand::none;
  }
  // What YAML would misread unquoted: quotes, a backslash, ": ", " #", a leading '&'.
  ops[1].test_node = "t.py::test[it's \"odd\": #1 \\ x]";
  ops[1].shape_file = "/&shapes/a: b.yaml";
  const fs::path file = tmp.path() / "ops.yaml";
  zl::write_file_atomic(file.string(), ops_yaml(ops));
  const std::vector<OpSpec> back = load_ops_file(file.string());
  ASSERT_EQ(back.size(), ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    EXPECT_EQ(back[i].op, ops[i].op);
    EXPECT_EQ(back[i].test_node, ops[i].test_node);
    EXPECT_EQ(back[i].op_file, ops[i].op_file);
    EXPECT_EQ(back[i].dtypes, ops[i].dtypes);
    EXPECT_EQ(back[i].shape_file, ops[i].shape_file);
  }
}

// ---- shards -------------------------------------------------------------------

TEST(SlurmShards, OpsAreDealtRoundRobin) {
  std::vector<OpSpec> ops;
  for (const char* n : {"a", "b", "c", "d", "e"}) ops.push_back(op_with_every_field(n));
  const Plan p = deal_round_robin("host", ops, 2);
  EXPECT_EQ(p.backend, "host");
  EXPECT_EQ(p.ops, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(p.assignment, (std::vector<std::vector<std::string>>{{"a", "c", "e"}, {"b", "d"}}));
  EXPECT_EQ(all_shards(p), (std::vector<int>{0, 1}));
}

TEST(SlurmShards, ShardCountIsShardsElseNodesAtMostOnePerOp) {
  BatchOptions o;
  o.ops = {op_with_every_field("a"), op_with_every_field("b"), op_with_every_field("c")};
  EXPECT_EQ(shard_count(o), 1);
  o.launcher_options["nodes"] = "2";
  EXPECT_EQ(shard_count(o), 2);
  o.launcher_options["shards"] = "8";
  EXPECT_EQ(shard_count(o), 3);
  o.launcher_options["shards"] = "0";
  EXPECT_EQ(slurm_usage_error([&] { shard_count(o); }), "--shards: '0' is not a positive integer");
}

TEST(SlurmShards, ResumeRerunsOnlyShardsWithAnOpNotSettled) {
  Plan p;
  p.assignment = {{"a", "b"}, {"c"}, {"d"}};
  OpRow passed_a, failed_b, unsupported_c;
  passed_a.op = "a";
  passed_a.status = Status::passed;
  failed_b.op = "b";
  failed_b.status = Status::failed;
  unsupported_c.op = "c";
  unsupported_c.status = Status::unsupported;
  // Shard 0: b failed; shard 1: settled; shard 2: no row at all.
  EXPECT_EQ(shards_to_rerun(p, {{passed_a, failed_b}, {unsupported_c}, {}}), (std::vector<int>{0, 2}));
  OpRow passed_b = failed_b;
  passed_b.status = Status::passed;
  EXPECT_EQ(shards_to_rerun(p, {{passed_a, failed_b, passed_b}, {unsupported_c}}), (std::vector<int>{2}));
}

TEST(SlurmShards, ShardIndexIsOneOfThePlans) {
  EXPECT_EQ(shard_index("0", 2), 0);
  EXPECT_EQ(shard_index("1", 2), 1);
  for (const char* bad : {"2", "1/2", "-1", "", "x", "99999999999"}) {
    EXPECT_EQ(slurm_usage_error([&] { shard_index(bad, 2); }),
              std::string("--shard: '") + bad + "' is not a shard of this plan (0 to 1)");
  }
}

TEST(SlurmShards, AShardRunsItsOwnOpsInItsOwnDirectoryResuming) {
  Plan p = plan_with_every_field();
  p.options.resume = false;
  const BatchOptions o = shard_options(p, 1, "/shared/runs/b");
  ASSERT_EQ(o.ops.size(), 1u);
  expect_same(o.ops[0], p.options.ops[1]);
  EXPECT_EQ(o.out_dir, "/shared/runs/b/shards/1");
  EXPECT_TRUE(o.resume);
  EXPECT_EQ(o.recorded_options.at("shard"), "1/2");
  // The rest is the batch's, as the plan holds it.
  EXPECT_EQ(o.run.flags, p.options.run.flags);
  EXPECT_EQ(o.caliber, p.options.caliber);
  EXPECT_EQ(o.timeout_s, p.options.timeout_s);
  p.assignment[1] = {"neg"};
  EXPECT_EQ(slurm_usage_error([&] { shard_options(p, 1, "/b"); }),
            "the plan assigns op 'neg' to shard 1 but 'batch.ops' does not describe it");
}

// ---- job scripts and sbatch lines -------------------------------------------

// An A/B's plan (zlcore ab --launcher slurm): its flags reach the shards
// through the plan; schema 3, so a zlcore without ab shards refuses it.
TEST(SlurmPlan, AnAbPlanCarriesItsFlagsAndSaysWhoseItIs) {
  TempDir tmp;
  Plan p = plan_with_every_field();
  EXPECT_EQ(plan_json(p).find("\"command\""), std::string::npos) << "a batch plan is unchanged";
  EXPECT_NE(plan_json(p).find("\"schema\": 2"), std::string::npos);
  p.command = "ab";
  p.ab_args = {"--a", "/fg/a", "--b", "/fg/b", "--rounds", "5", "--a-env", "K=it's"};
  const std::string text = plan_json(p);
  EXPECT_NE(text.find("\"schema\": 3"), std::string::npos);
  const Plan back = read_plan(write_plan(tmp.path(), text));
  EXPECT_EQ(back.command, "ab");
  EXPECT_EQ(back.ab_args, p.ab_args);
  EXPECT_EQ(plan_json(back), text);
  const std::string file = (tmp.path() / "plan.json").string();
  EXPECT_EQ(slurm_usage_error([&] {
              std::string bad = text;
              bad.replace(bad.find("\"command\": \"ab\""), 15, "\"command\": \"run\"");
              read_plan(write_plan(tmp.path(), bad));
            }),
            file + " is not a zlcore Slurm plan: 'command' is 'run', not batch or ab");
}

TEST(SlurmScript, AnAbsJobsRunAb) {
  const JobHead head{"/opt/zl/bin/zlcore", "/opt/zl/lib/plugins", "host", "ab"};
  EXPECT_EQ(shard_script(head, "/b/plan.json", 2),
            "#!/bin/sh\n"
            "# zlcore ab shard: one task of the job array runs shard $SLURM_ARRAY_TASK_ID of 2.\n"
            "# Written by zlcore; the A/B's flags are in the plan, the sbatch options on its command line.\n"
            "exec '/opt/zl/bin/zlcore' '--backend-dir' '/opt/zl/lib/plugins' 'ab' '--backend' 'host' "
            "'--launcher' 'slurm' '--plan' '/b/plan.json' --shard \"$SLURM_ARRAY_TASK_ID\"\n");
  EXPECT_EQ(merge_script(head, "/b/plan.json"),
            "#!/bin/sh\n"
            "# zlcore ab merge: the shards' rounds into one A/B report.\n"
            "exec '/opt/zl/bin/zlcore' '--backend-dir' '/opt/zl/lib/plugins' 'ab' '--backend' 'host' "
            "'--launcher' 'slurm' '--plan' '/b/plan.json' '--merge'\n");
}

TEST(SlurmScript, ShellQuoteKeepsEveryByte) {
  EXPECT_EQ(shell_quote("plain"), "'plain'");
  EXPECT_EQ(shell_quote("it's $HOME"), "'it'\\''s $HOME'");
  EXPECT_EQ(shell_quote(""), "''");
}

TEST(SlurmScript, JobScriptsNameOnlyThePlanAndTheJob) {
  const JobHead head{"/opt/zl/bin/zlcore", "/opt/zl/lib/plugins", "host"};
  EXPECT_EQ(shard_script(head, "/b/it's/plan.json", 3),
            "#!/bin/sh\n"
            "# zlcore batch shard: one task of the job array runs shard $SLURM_ARRAY_TASK_ID of 3.\n"
            "# Written by zlcore; the batch's options are in the plan, the sbatch options on its command line.\n"
            "exec '/opt/zl/bin/zlcore' '--backend-dir' '/opt/zl/lib/plugins' 'batch' '--backend' 'host' "
            "'--launcher' 'slurm' '--plan' '/b/it'\\''s/plan.json' --shard \"$SLURM_ARRAY_TASK_ID\"\n");
  EXPECT_EQ(merge_script(head, "/b/plan.json"),
            "#!/bin/sh\n"
            "# zlcore batch merge: the shards' ops_status.csv into the batch's, and the summary.\n"
            "exec '/opt/zl/bin/zlcore' '--backend-dir' '/opt/zl/lib/plugins' 'batch' '--backend' 'host' "
            "'--launcher' 'slurm' '--plan' '/b/plan.json' '--merge'\n");
}

TEST(SlurmScript, SbatchLinesPutThePassThroughLast) {
  BatchOptions o;
  o.launcher_options = {{"partition", "gpu"}, {"time", "04:00:00"}, {"gpus-per-shard", "8"}};
  o.launcher_args = {"--account=perf"};
  EXPECT_EQ(array_sbatch(o, "/runs/nightly", {0, 2}),
            (std::vector<std::string>{"sbatch", "--parsable", "--job-name=zlcore-nightly", "--open-mode=append",
                                      "--partition=gpu", "--array=0,2", "--nodes=1", "--ntasks=1",
                                      "--output=/runs/nightly/slurm/shard-%a.log", "--time=04:00:00", "--gres=gpu:8",
                                      "--account=perf"}));
  EXPECT_EQ(merge_sbatch(o, "/runs/nightly", "77"),
            (std::vector<std::string>{"sbatch", "--parsable", "--job-name=zlcore-merge-nightly", "--open-mode=append",
                                      "--partition=gpu", "--dependency=afterany:77", "--nodes=1", "--ntasks=1",
                                      "--output=/runs/nightly/slurm/merge.log", "--account=perf"}));
  o.launcher_options["gpus-per-shard"] = "many";
  EXPECT_EQ(slurm_usage_error([&] { array_sbatch(o, "/b", {0}); }),
            "--gpus-per-shard: 'many' is not a positive integer");
}

TEST(SlurmScript, JobIdIsTheLastNumericLine) {
  EXPECT_EQ(parse_job_id("123\n"), "123");
  EXPECT_EQ(parse_job_id("123;cluster\n"), "123");
  EXPECT_EQ(parse_job_id("sbatch: warning: x\n456\n"), "456");
  EXPECT_EQ(parse_job_id("sbatch: error: Batch job submission failed\n"), "");
  EXPECT_EQ(parse_job_id(""), "");
}

// ---- merge --------------------------------------------------------------------

TEST(SlurmMerge, ShardRowsBecomeOneStatusFileInStartOrder) {
  TempDir tmp;
  const fs::path dir = tmp.path();
  Plan p;
  p.ops = {"a", "b", "c", "d"};
  p.assignment = {{"a", "c"}, {"b", "d"}};
  const auto row = [](const std::string& op, Status s, const std::string& started) {
    OpRow r;
    r.op = op;
    r.status = s;
    r.started = started;
    r.run_dir = "runs/" + op;
    return r;
  };
  fs::create_directories(shard_dir(dir, 0));
  fs::create_directories(shard_dir(dir, 1));
  const std::string csv0 = (shard_dir(dir, 0) / kStatusFile).string();
  const std::string csv1 = (shard_dir(dir, 1) / kStatusFile).string();
  std::string note;
  prepare_status_csv(csv0, &note);
  prepare_status_csv(csv1, &note);
  append_status_row(csv0, row("a", Status::passed, "2026-12-03T10:00:03Z"));
  append_status_row(csv0, row("c", Status::failed, "2026-12-03T10:00:05Z"));
  append_status_row(csv1, row("b", Status::unsupported, "2026-12-03T10:00:01Z"));
  // d never ran: the shard was killed first.

  EXPECT_EQ(merge(dir, p, "900"), zl::kExitFailed);
  const StatusFile merged = read_status_csv((dir / kStatusFile).string());
  ASSERT_EQ(merged.rows.size(), 3u);
  EXPECT_EQ(merged.rows[0].op, "b");
  EXPECT_EQ(merged.rows[0].run_dir, "shards/1/runs/b");
  EXPECT_EQ(merged.rows[1].op, "a");
  EXPECT_EQ(merged.rows[1].run_dir, "shards/0/runs/a");
  EXPECT_EQ(merged.rows[2].op, "c");
  const std::string summary = zl::read_file((dir / "summary.txt").string());
  EXPECT_NE(summary.find("shards with ops not passed: 0,1 (--resume resubmits only these)"), std::string::npos)
      << summary;
  const std::string result = zl::read_file((dir / kMergeFile).string());
  EXPECT_NE(result.find("\"merge_job\": \"900\""), std::string::npos) << result;
  EXPECT_NE(result.find("\"exit_code\": 1"), std::string::npos) << result;
  EXPECT_NE(result.find("\"not_run\": 1"), std::string::npos) << result;

  // The rest lands (c passes on a rerun, d runs): the batch passes, and the
  // merge keeps the history.
  append_status_row(csv0, row("c", Status::passed, "2026-12-03T11:00:00Z"));
  append_status_row(csv1, row("d", Status::passed, "2026-12-03T11:00:01Z"));
  EXPECT_EQ(merge(dir, p, "901"), zl::kExitOk);
  EXPECT_EQ(read_status_csv((dir / kStatusFile).string()).rows.size(), 5u);
  EXPECT_EQ(zl::read_file((dir / "summary.txt").string()).find("shards with ops not passed"), std::string::npos);
}
