// plan.json: what a Slurm batch (or A/B) is (its ops, their shards, every
// batch option, an A/B's flags, every submission), written by the submit and read back by the
// shards, the merge and --resume. It lives on a shared disk that people edit,
// so reading it checks every field: a wrong one is one line naming the file
// and the key, not a crash. Also the ops files written next to it.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "../util/json.hpp"
#include "../util/json_fields.hpp"
#include "../util/json_read.hpp"
#include "slurm.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"

namespace zl::batch::slurm {
namespace {

// 2: the batch's options are in "batch", the shards read them there.
// 3: "command" says whose jobs these are; an `ab` plan has "ab" (the A/B's
// flags). Batch plans are still written as 2 (they did not change); an ab
// plan is 3, so a zlcore that predates ab shards refuses it instead of
// running it as a batch.
constexpr int kSchema = 3;
constexpr int kBatchSchema = 2;

const char* expand_name(OpSpec::Expand e) {
  switch (e) {
    case OpSpec::Expand::none: return "none";
    case OpSpec::Expand::all: return "all";
    case OpSpec::Expand::file: return "file";
  }
  return "none";
}

OpSpec::Expand parse_expand(const json::Fields& f) {
  const std::string e = f.str("expand");
  for (OpSpec::Expand x : {OpSpec::Expand::none, OpSpec::Expand::all, OpSpec::Expand::file}) {
    if (e == expand_name(x)) return x;
  }
  throw std::runtime_error("'expand' of an op is '" + e + "', not none, all or file");
}

json::Value op_json(const OpSpec& op, json::Alloc& a) {
  // Every field by name: a field added to OpSpec stops this compiling until
  // the plan holds it.
  const auto& [name, mark, op_file, test_node, dtypes, shape_file, expand] = op;
  json::Value v(rapidjson::kObjectType);
  v.AddMember("name", json::str(name, a), a);
  v.AddMember("op", json::str(mark, a), a);
  v.AddMember("op_file", json::str(op_file, a), a);
  v.AddMember("test_node", json::str(test_node, a), a);
  v.AddMember("dtypes", json::str_array(dtypes, a), a);
  v.AddMember("shape_file", json::str(shape_file, a), a);
  v.AddMember("expand", rapidjson::StringRef(expand_name(expand)), a);
  return v;
}

OpSpec op_from(const json::Fields& f) {
  OpSpec op;
  op.name = f.str("name");
  op.op = f.str("op");
  op.op_file = f.str("op_file");
  op.test_node = f.str("test_node");
  op.dtypes = f.strings("dtypes");
  op.shape_file = f.str("shape_file");
  op.expand = parse_expand(f);
  return op;
}

json::Value options_json(const BatchOptions& o, json::Alloc& a) {
  // Every field by name: a field added to BatchOptions (or IdlePolicy,
  // OpRunFlags) stops this compiling until the plan holds it, since the
  // shards know the batch only through the plan.
  const auto& [backend, backend_dir, device_indices, ops, out_dir, resume, timeout_s, backstop_s, warmup_devices,
               compile_lanes, compile_lanes_from, cold, standby, orphans, idle, run, recorded_options, caliber,
               force_resume, launcher_options, launcher_args] = o;
  const auto& [check, max_util_percent, max_mem_used_mib, recheck_s, give_up_s] = idle;
  const auto& [flags, dtypes, replay_from] = run;
  json::Value v(rapidjson::kObjectType);
  v.AddMember("backend", json::str(backend, a), a);
  v.AddMember("backend_dir", json::str(backend_dir, a), a);
  json::Value devices(rapidjson::kArrayType);
  for (int d : device_indices) devices.PushBack(d, a);
  v.AddMember("device_indices", devices, a);
  json::Value op_list(rapidjson::kArrayType);
  for (const OpSpec& op : ops) op_list.PushBack(op_json(op, a), a);
  v.AddMember("ops", op_list, a);
  v.AddMember("out_dir", json::str(out_dir, a), a);
  v.AddMember("resume", resume, a);
  v.AddMember("timeout_s", timeout_s, a);
  v.AddMember("backstop_s", backstop_s, a);
  v.AddMember("warmup_devices", warmup_devices, a);
  // auto is decided on the node that runs the shard; the submitter's cores say nothing.
  v.AddMember("compile_lanes", compile_lanes_from == "auto" ? 0 : compile_lanes, a);
  v.AddMember("compile_lanes_from", json::str(compile_lanes_from, a), a);
  v.AddMember("cold", cold, a);
  v.AddMember("standby", standby, a);
  v.AddMember("orphans", json::str(orphans, a), a);
  json::Value idle_v(rapidjson::kObjectType);
  idle_v.AddMember("check", check, a);
  idle_v.AddMember("max_util_percent", max_util_percent, a);
  idle_v.AddMember("max_mem_used_mib", max_mem_used_mib, a);
  idle_v.AddMember("recheck_s", recheck_s, a);
  idle_v.AddMember("give_up_s", give_up_s, a);
  v.AddMember("idle", idle_v, a);
  json::Value run_v(rapidjson::kObjectType);
  json::Value flag_list(rapidjson::kArrayType);
  for (const auto& [flag, value] : flags) flag_list.PushBack(json::str_array({flag, value}, a), a);
  run_v.AddMember("flags", flag_list, a);
  run_v.AddMember("dtypes", json::str_array(dtypes, a), a);
  run_v.AddMember("replay_from", json::str(replay_from, a), a);
  v.AddMember("run", run_v, a);
  v.AddMember("recorded_options", json::str_map(recorded_options, a), a);
  v.AddMember("caliber", json::str_map(caliber, a), a);
  v.AddMember("force_resume", force_resume, a);
  v.AddMember("launcher_options", json::str_map(launcher_options, a), a);
  v.AddMember("launcher_args", json::str_array(launcher_args, a), a);
  return v;
}

void within(const char* field, int64_t value, int64_t most) {
  if (value < 0 || value > most) {
    throw std::runtime_error(std::string(field) + " " + std::to_string(value) + " is not from 0 to " +
                             std::to_string(most));
  }
}

BatchOptions options_from(const json::Fields& f) {
  BatchOptions o;
  o.backend = f.str("backend");
  o.backend_dir = f.str("backend_dir");
  o.device_indices = f.integers("device_indices");
  for (const json::Fields& op : f.objects("ops")) o.ops.push_back(op_from(op));
  o.out_dir = f.str("out_dir");
  o.resume = f.boolean("resume");
  o.timeout_s = f.number("timeout_s");
  o.backstop_s = f.number("backstop_s");
  o.warmup_devices = f.integer("warmup_devices");
  // Absent in plans of older zlcore: no pass. auto means the cores of the
  // node the shard runs on, not the submitter's.
  o.compile_lanes_from = f.has("compile_lanes_from") ? f.str("compile_lanes_from") : "an older plan";
  o.compile_lanes = o.compile_lanes_from == "auto" ? auto_compile_lanes()
                    : f.has("compile_lanes")       ? f.integer("compile_lanes")
                                                   : 0;
  // A plan is a file anyone can edit: what the flags refuse, it may not say.
  within("compile_lanes", o.compile_lanes, kMaxCompileLanes);
  within("warmup_devices", o.warmup_devices, kMaxWarmupDevices);
  o.cold = f.boolean("cold");
  o.standby = f.has("standby") && f.boolean("standby");  // absent in plans of older zlcore
  o.orphans = f.str("orphans");
  const json::Fields idle = f.object("idle");
  o.idle.check = idle.boolean("check");
  o.idle.max_util_percent = idle.integer("max_util_percent");
  o.idle.max_mem_used_mib = idle.int64("max_mem_used_mib");
  within("idle.max_util_percent", o.idle.max_util_percent, kMaxIdleUtilPercent);
  within("idle.max_mem_used_mib", o.idle.max_mem_used_mib, kMaxIdleMemMib);
  o.idle.recheck_s = idle.number("recheck_s");
  o.idle.give_up_s = idle.number("give_up_s");
  const json::Fields run = f.object("run");
  o.run.flags = run.string_pairs("flags");
  o.run.dtypes = run.strings("dtypes");
  o.run.replay_from = run.str("replay_from");
  o.recorded_options = f.string_map("recorded_options");
  o.caliber = f.string_map("caliber");
  o.force_resume = f.boolean("force_resume");
  o.launcher_options = f.string_map("launcher_options");
  o.launcher_args = f.strings("launcher_args");
  return o;
}

Plan plan_from(const json::Fields& f) {
  Plan p;
  if (f.has("schema") && f.integer("schema") > kSchema) {
    throw std::runtime_error("schema " + std::to_string(f.integer("schema")) + " is newer than this zlcore's (" +
                             std::to_string(kSchema) + ")");
  }
  p.command = f.has("command") ? f.str("command") : "batch";
  if (p.command != "batch" && p.command != "ab") {
    throw std::runtime_error("'command' is '" + p.command + "', not batch or ab");
  }
  if (f.has("ab")) p.ab_args = f.object("ab").strings("args");
  p.backend = f.has("backend") ? f.str("backend") : "";
  p.ops = f.strings("ops");
  p.assignment = f.string_lists("assignment");
  if (f.has("batch")) {
    p.options = options_from(f.object("batch"));
    p.has_options = true;
  }
  if (f.has("submissions")) {
    for (const json::Fields& v : f.objects("submissions")) {
      Submission s;
      s.array_job = v.str("array_job");
      s.merge_job = v.str("merge_job");
      s.submitted = v.str("submitted");
      s.submitted_epoch = v.number("submitted_epoch");
      s.shards = v.integers("shards");
      p.submissions.push_back(s);
    }
  }
  return p;
}

}  // namespace

std::string plan_json(const Plan& p) {
  rapidjson::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  const bool ab = p.command == "ab";
  doc.AddMember("schema", ab ? kSchema : kBatchSchema, a);
  doc.AddMember("launcher", "slurm", a);
  if (ab) doc.AddMember("command", "ab", a);
  doc.AddMember("backend", json::str(p.backend, a), a);
  doc.AddMember("shards", p.shards(), a);
  doc.AddMember("ops", json::str_array(p.ops, a), a);
  json::Value asg(rapidjson::kArrayType);
  for (const auto& names : p.assignment) asg.PushBack(json::str_array(names, a), a);
  doc.AddMember("assignment", asg, a);
  if (ab) {
    json::Value args(rapidjson::kObjectType);
    args.AddMember("args", json::str_array(p.ab_args, a), a);
    doc.AddMember("ab", args, a);
  }
  doc.AddMember("batch", options_json(p.options, a), a);
  json::Value subs(rapidjson::kArrayType);
  for (const Submission& s : p.submissions) {
    json::Value v(rapidjson::kObjectType);
    v.AddMember("array_job", json::str(s.array_job, a), a);
    v.AddMember("merge_job", json::str(s.merge_job, a), a);
    json::Value shards(rapidjson::kArrayType);
    for (int i : s.shards) shards.PushBack(i, a);
    v.AddMember("shards", shards, a);
    v.AddMember("submitted", json::str(s.submitted, a), a);
    v.AddMember("submitted_epoch", s.submitted_epoch, a);
    subs.PushBack(v, a);
  }
  doc.AddMember("submissions", subs, a);
  return json::pretty(doc);
}

Plan read_plan(const fs::path& file) {
  if (!fs::exists(file)) {
    throw UsageError(file.parent_path().string() + " has no " + file.filename().string() + ": not a Slurm batch");
  }
  rapidjson::Document doc;
  const std::string why = json::parse(doc, read_file(file.string()));
  if (!why.empty()) throw UsageError(file.string() + " is not a zlcore Slurm plan: " + why);
  try {
    Plan p = plan_from(json::Fields(doc, ""));
    for (size_t i = 0; i < p.assignment.size(); ++i) {
      for (const std::string& name : p.assignment[i]) {
        if (std::find(p.ops.begin(), p.ops.end(), name) == p.ops.end()) {
          throw std::runtime_error("'assignment[" + std::to_string(i) + "]' names '" + name + "', which 'ops' lacks");
        }
      }
    }
    return p;
  } catch (const std::runtime_error& e) {
    throw UsageError(file.string() + " is not a zlcore Slurm plan: " + e.what());
  }
}

// Each OpSpec round-trips (name/op, node, file, dtypes, absolute
// shape_file). yaml-cpp writes it: every value double-quoted, so no name or
// path (a ": ", a " #", a leading '&') is ever read back as something else.
std::string ops_yaml(const std::vector<OpSpec>& ops) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "ops" << YAML::Value << YAML::BeginSeq;
  const auto field = [&out](const char* key, const std::string& value) {
    if (!value.empty()) out << YAML::Key << key << YAML::Value << YAML::DoubleQuoted << value;
  };
  for (const OpSpec& op : ops) {
    out << YAML::Flow << YAML::BeginMap;
    field("name", op.op);
    field("node", op.test_node);
    field("file", op.op_file);
    if (!op.dtypes.empty()) {
      out << YAML::Key << "dtypes" << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (const std::string& d : op.dtypes) out << YAML::DoubleQuoted << d;
      out << YAML::EndSeq;
    }
    field("shape_file", op.shape_file);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return "# written by zlcore batch --launcher slurm\n" + std::string(out.c_str()) + "\n";
}

}  // namespace zl::batch::slurm
