// plan.json: what a Slurm batch is (its ops, their shards, its options, every
// submission), written by the submit and read back by --resume and the merge.
// It lives on a shared disk that people edit, so reading it checks every
// field: a wrong one is one line naming the file, not a crash.
#include <filesystem>

#include "../util/json.hpp"
#include "../util/json_checked.hpp"
#include "../util/json_read.hpp"
#include "../util/text.hpp"
#include "slurm.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"

namespace zl::batch::slurm {
namespace {

std::string yaml_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string plan_json(const Plan& p, const BatchOptions& o) {
  rapidjson::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  doc.AddMember("schema", 1, a);
  doc.AddMember("launcher", "slurm", a);
  doc.AddMember("backend", json::str(p.backend, a), a);
  doc.AddMember("shards", p.shards(), a);
  doc.AddMember("ops", json::str_array(p.ops, a), a);
  json::Value asg(rapidjson::kArrayType);
  for (const auto& names : p.assignment) asg.PushBack(json::str_array(names, a), a);
  doc.AddMember("assignment", asg, a);
  doc.AddMember("options", json::str_map(o.recorded_options, a), a);
  doc.AddMember("launcher_options", json::str_map(o.launcher_options, a), a);
  doc.AddMember("sbatch_args", json::str_array(o.launcher_args, a), a);
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

Plan read_plan(const fs::path& dir) {
  const fs::path path = dir / kPlanFile;
  if (!fs::exists(path)) throw UsageError(dir.string() + " has no " + kPlanFile + ": not a Slurm batch");
  rapidjson::Document doc;
  const std::string why = json::parse(doc, read_file(path.string()));
  if (!why.empty() || !doc.IsObject()) throw UsageError(path.string() + " is not a zlcore Slurm plan");
  Plan p;
  try {
    p.backend = doc.HasMember("backend") ? json::string_at(doc, "backend") : "";
    p.ops = json::strings(json::array_at(doc, "ops"), "'ops'");
    for (const auto& names : json::array_at(doc, "assignment").GetArray()) {
      p.assignment.push_back(json::strings(names, "an 'assignment' entry"));
    }
    if (doc.HasMember("submissions")) {
      for (const auto& v : json::array_at(doc, "submissions").GetArray()) {
        Submission s;
        s.array_job = json::string_at(v, "array_job");
        s.merge_job = json::string_at(v, "merge_job");
        s.submitted = json::string_at(v, "submitted");
        s.submitted_epoch = json::number_at(v, "submitted_epoch");
        for (const auto& i : json::array_at(v, "shards").GetArray()) {
          if (!i.IsInt()) throw std::runtime_error("a submission's 'shards' holds a value that is not an integer");
          s.shards.push_back(i.GetInt());
        }
        p.submissions.push_back(s);
      }
    }
  } catch (const std::runtime_error& e) {
    throw UsageError(path.string() + " is not a zlcore Slurm plan: " + e.what());
  }
  return p;
}

// Each OpSpec round-trips (name/op, node, dtypes, absolute shape_file).
std::string ops_yaml(const std::vector<OpSpec>& ops) {
  std::string y = "# written by zlcore batch --launcher slurm\nops:\n";
  for (const OpSpec& op : ops) {
    y += "  - {";
    std::vector<std::string> fields;
    if (!op.op.empty()) fields.push_back("name: " + yaml_quote(op.op));
    if (!op.test_node.empty()) fields.push_back("node: " + yaml_quote(op.test_node));
    if (!op.op_file.empty()) fields.push_back("file: " + yaml_quote(op.op_file));
    if (!op.dtypes.empty()) {
      std::vector<std::string> q;
      for (const std::string& d : op.dtypes) q.push_back(yaml_quote(d));
      fields.push_back("dtypes: [" + text::join(q, ", ") + "]");
    }
    if (!op.shape_file.empty()) fields.push_back("shape_file: " + yaml_quote(op.shape_file));
    y += text::join(fields, ", ") + "}\n";
  }
  return y;
}

}  // namespace zl::batch::slurm
