// The Slurm launcher: one batch sharded over a Slurm cluster, with one result
// as if it had run on one host. Three roles, one per way it is called:
//
//   submit  `zlcore batch --launcher slurm ...` writes the plan into the batch
//           directory (a filesystem every node sees), submits one job array
//           (one task per shard) and a merge job that depends on it (afterany).
//   shard   `zlcore batch --launcher slurm --shard i/K` (the array task) runs
//           its share of the ops with the local launcher on the devices Slurm
//           allocated, into <batch>/shards/<i>/.
//   merge   `zlcore batch --launcher slurm --merge` (the final job) merges the
//           shards' ops_status.csv into <batch>/ops_status.csv and writes the
//           summary.
//
// Only this file knows Slurm. It never goes through a shell itself: sbatch,
// squeue run from an argv; the job script exists because sbatch requires one,
// and it only `exec`s zlcore by absolute path.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "../util/clock.hpp"
#include "../util/json.hpp"
#include "../util/json_checked.hpp"
#include "../util/json_read.hpp"
#include "../util/text.hpp"
#include "outcome.hpp"
#include "progress.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/process.hpp"
#include "zlcore/signals.hpp"

namespace fs = std::filesystem;

namespace zl::batch {
namespace {

constexpr const char* kPlanFile = "plan.json";
constexpr const char* kStatusFile = "ops_status.csv";
constexpr const char* kMergeFile = "merge.json";
// The array task's index, as the job script expands it.
constexpr const char* kTaskVar = "\"$SLURM_ARRAY_TASK_ID\"";

std::string opt(const BatchOptions& o, const std::string& key) {
  auto it = o.launcher_options.find(key);
  return it == o.launcher_options.end() ? "" : it->second;
}

int positive(const std::string& text, const std::string& what) {
  try {
    size_t used = 0;
    int v = std::stoi(text, &used);
    if (used == text.size() && v > 0) return v;
  } catch (const std::exception&) {
  }
  throw UsageError(what + ": '" + text + "' is not a positive integer");
}

// POSIX shell single quoting: sbatch runs a script (Slurm has no argv form
// for a job command), which must pass every argument verbatim.
std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string yaml_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// An ops file the shard reads back with --ops-file: each OpSpec round-trips
// (name/op, node, dtypes, absolute shape_file).
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

void log_line(const fs::path& dir, const std::string& line) {
  append_log_line_or_warn((dir / "batch.log").string(), utc_now_iso() + " " + text::one_line(line) + "\n",
                          "zlcore batch");
}

// ---- the plan ---------------------------------------------------------------

struct Submission {
  std::string array_job, merge_job, submitted;
  std::vector<int> shards;
  double submitted_epoch = 0;
};

struct Plan {
  std::string backend;
  std::vector<std::string> ops;                      // names, in batch order
  std::vector<std::vector<std::string>> assignment;  // shard -> op names
  std::vector<Submission> submissions;
  int shards() const { return static_cast<int>(assignment.size()); }
};

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

// The plan is ours, but a file on a shared disk: every field is checked, and
// a wrong one is a one-line usage error, not a crash.
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

fs::path shard_dir(const fs::path& dir, int i) { return dir / "shards" / std::to_string(i); }

// Every row a shard wrote, run_dir made relative to the batch directory.
std::vector<OpRow> shard_rows(const fs::path& dir, int i) {
  const fs::path csv = shard_dir(dir, i) / kStatusFile;
  if (!fs::exists(csv)) return {};
  std::vector<OpRow> rows = read_status_csv(csv.string()).rows;
  for (OpRow& r : rows) {
    if (!r.run_dir.empty()) r.run_dir = "shards/" + std::to_string(i) + "/" + r.run_dir;
  }
  return rows;
}

// ---- merge ------------------------------------------------------------------

// Rebuilds <batch>/ops_status.csv from every shard's rows (history included,
// in start order) and writes the summary; returns the batch's exit code.
int merge(const fs::path& dir, const Plan& plan, const std::string& merge_job) {
  std::vector<OpRow> rows;
  std::map<std::string, int> shard_of;
  for (int i = 0; i < plan.shards(); ++i) {
    for (const std::string& name : plan.assignment[i]) shard_of[name] = i;
    for (OpRow& r : shard_rows(dir, i)) rows.push_back(r);
  }
  // ISO 8601 in one zone sorts as text; stable keeps a shard's own order.
  std::stable_sort(rows.begin(), rows.end(), [](const OpRow& a, const OpRow& b) { return a.started < b.started; });
  std::string csv = csv_header();
  for (const OpRow& r : rows) csv += csv_record(r);
  // Rewritten whole, atomically: the shards hold the append-only truth.
  write_file_atomic((dir / kStatusFile).string(), csv);

  std::map<std::string, OpRow> last;
  for (const OpRow& r : rows) last[r.op] = r;
  std::vector<OpRow> latest;
  std::vector<std::string> not_run;
  for (const std::string& name : plan.ops) {
    auto it = last.find(name);
    if (it == last.end()) {
      not_run.push_back(name);
    } else {
      latest.push_back(it->second);
    }
  }
  const bool all_passed =
      not_run.empty() && std::all_of(latest.begin(), latest.end(), [](const OpRow& r) { return is_settled(r.status); });
  const double since =
      plan.submissions.empty() ? 0 : static_cast<double>(std::time(nullptr)) - plan.submissions.back().submitted_epoch;
  std::string summary = summary_table(latest, not_run, since);
  std::set<int> to_resume;
  for (const std::string& name : plan.ops) {
    if (!last.count(name) || !is_settled(last[name].status)) to_resume.insert(shard_of[name]);
  }
  if (!to_resume.empty()) {
    std::vector<std::string> s;
    for (int i : to_resume) s.push_back(std::to_string(i));
    summary += "shards with ops not passed: " + text::join(s, ",") + " (--resume resubmits only these)\n";
  }
  summary += "ops_status.csv: " + (dir / kStatusFile).string() + "\n";
  write_file_atomic((dir / "summary.txt").string(), summary);

  const int code = all_passed ? kExitOk : kExitFailed;
  rapidjson::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  doc.AddMember("merge_job", json::str(merge_job, a), a);
  doc.AddMember("ended", json::str(utc_now_iso(), a), a);
  doc.AddMember("exit_code", code, a);
  std::map<std::string, int> counts;
  for (const OpRow& r : latest) counts[to_string(r.status)]++;
  json::Value c(rapidjson::kObjectType);
  for (const auto& [k, v] : counts) c.AddMember(json::str(k, a), json::Value(v), a);
  c.AddMember("not_run", static_cast<int>(not_run.size()), a);
  doc.AddMember("counts", c, a);
  doc.AddMember("rows", static_cast<int>(rows.size()), a);
  write_file_atomic((dir / kMergeFile).string(), json::pretty(doc));
  log_line(dir, "merged " + std::to_string(rows.size()) + " rows from " + std::to_string(plan.shards()) +
                    " shards: " + (all_passed ? "all passed" : "not all passed"));
  std::cout << summary << std::flush;
  return code;
}

// ---- shard ------------------------------------------------------------------

// The devices Slurm gave this shard. The backend's own visibility variable
// as Slurm set it wins (zlcore strips it from what sbatch inherits, so here it
// can only come from Slurm's GRES); else the GPU ids Slurm lists, mapped
// through the backend; else (no GPU allocation, e.g. the host backend) every
// device the backend reports.
std::vector<int> allocated_devices(const Backend& backend, std::string* how) {
  DeviceQuery q = backend.enumerate();
  if (q.devices.empty()) {
    throw PreflightError("devices", backend.name() + " reports no devices: " + (q.reason.empty() ? q.error : q.reason));
  }
  auto match = [&](const std::string& token, bool physical_index) -> int {
    for (const Device& d : q.devices) {
      if (d.visibility_value == token || d.id == token || std::to_string(d.index) == token) return d.index;
    }
    (void)physical_index;
    throw PreflightError("devices",
                         "Slurm allocated device '" + token + "' but " + backend.name() + " reports no such device");
  };
  std::vector<std::pair<std::string, bool>> sources;
  for (const std::string& key : backend.visibility_env()) sources.emplace_back(key, false);
  sources.emplace_back("SLURM_STEP_GPUS", true);
  sources.emplace_back("SLURM_JOB_GPUS", true);
  for (const auto& [key, physical] : sources) {
    const char* v = std::getenv(key.c_str());
    if (v == nullptr || *v == '\0') continue;
    std::vector<int> out;
    for (const std::string& token : text::split(v, ",")) out.push_back(match(token, physical));
    *how = key + "=" + v;
    return out;
  }
  std::vector<int> all;
  for (const Device& d : q.devices) all.push_back(d.index);
  *how = "no GPU allocation: every device " + backend.name() + " reports";
  return all;
}

int run_shard(const BatchOptions& o, const Backend& backend) {
  const std::string spec = opt(o, "shard");
  const size_t slash = spec.find('/');
  if (slash == std::string::npos) throw UsageError("--shard: '" + spec + "' is not i/K");
  const int k = positive(spec.substr(slash + 1), "--shard K");
  const int i = spec.substr(0, slash) == "0" ? 0 : positive(spec.substr(0, slash), "--shard i");
  if (i >= k) throw UsageError("--shard: " + spec + ": i must be below K");
  std::string how;
  BatchOptions shard = o;
  shard.device_indices = allocated_devices(backend, &how);
  shard.resume = true;  // a shard directory only ever grows; a rerun continues it
  shard.recorded_options["shard"] = spec;
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  std::vector<std::string> devs;
  for (int d : shard.device_indices) devs.push_back(std::to_string(d));
  std::cout << "shard " << spec << " on " << host << ": devices " << text::join(devs, ",") << " (" << how << ")\n"
            << std::flush;
  return make_local_launcher()->launch(shard, backend);
}

// ---- submit -----------------------------------------------------------------

// Runs a Slurm client from an argv. The backend's visibility variable is
// removed so that inside the job it can only be Slurm's (see above).
Captured run_tool(const std::vector<std::string>& argv, const Backend& backend) {
  CaptureOptions opts;
  opts.timeout_s = 120;
  opts.env_unset = backend.visibility_env();
  opts.with_stderr = true;
  Captured c = capture(argv, opts);
  if (!c.started) c.output = c.spawn_error;
  return c;
}

// `sbatch --parsable` prints "jobid" or "jobid;cluster" as its last line.
std::string parse_job_id(const std::string& output) {
  std::string id;
  for (const std::string& line : text::split(output, "\n")) {
    std::string head = line.substr(0, line.find(';'));
    if (!head.empty() && std::all_of(head.begin(), head.end(), ::isdigit)) id = head;
  }
  return id;
}

class SlurmSubmit {
 public:
  SlurmSubmit(const BatchOptions& o, const Backend& b) : o_(o), backend_(b), dir_(fs::absolute(o.out_dir)) {
    exe_ = fs::read_symlink("/proc/self/exe").string();
  }

  int run() {
    const bool dry = !opt(o_, "dry-run").empty();
    Plan plan = o_.resume ? resume_plan() : new_plan();
    std::vector<int> shards = o_.resume ? shards_to_rerun(plan) : all_shards(plan);

    const std::string array_script = shard_script(plan.shards());
    const std::string merge_script = merge_script_text();
    const std::vector<std::string> array_argv = array_sbatch(shards);
    const std::vector<std::string> merge_argv = merge_sbatch("<array job id>");
    if (dry) {
      std::cout << "# plan (" << (dir_ / kPlanFile).string() << ")\n" << plan_json(plan, o_);
      for (int i = 0; i < plan.shards(); ++i) {
        std::cout << "# shard " << i << " ops: " << text::join(plan.assignment[i], ",") << "\n";
      }
      std::cout << "# shards to submit: " << text::join(to_strings(shards), ",") << "\n";
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
      return merge(dir_, plan, "");
    }
    write_file_atomic((dir_ / "plan" / "shard.sbatch").string(), array_script);
    write_file_atomic((dir_ / "plan" / "merge.sbatch").string(), merge_script);
    fs::permissions(dir_ / "plan" / "shard.sbatch", fs::perms::owner_exec, fs::perm_options::add);
    fs::permissions(dir_ / "plan" / "merge.sbatch", fs::perms::owner_exec, fs::perm_options::add);

    std::vector<std::string> argv = array_argv;
    argv.push_back((dir_ / "plan" / "shard.sbatch").string());
    const std::string array_job = submit(argv, "job array");
    argv = merge_sbatch(array_job);
    argv.push_back((dir_ / "plan" / "merge.sbatch").string());
    const std::string merge_job = submit(argv, "merge job");

    Submission s;
    s.array_job = array_job;
    s.merge_job = merge_job;
    s.shards = shards;
    s.submitted = utc_now_iso();
    s.submitted_epoch = static_cast<double>(std::time(nullptr));
    plan.submissions.push_back(s);
    write_file_atomic((dir_ / kPlanFile).string(), plan_json(plan, o_));
    log_line(dir_, "submitted shards " + text::join(to_strings(shards), ",") + " of " + std::to_string(plan.shards()) +
                       " as job array " + array_job + ", merge job " + merge_job);

    std::cout << "batch " << dir_.string() << ": " << plan.ops.size() << " ops in " << plan.shards() << " shards\n"
              << "submitted shards " << text::join(to_strings(shards), ",") << " as job array " << array_job
              << ", merge job " << merge_job << " (afterany)\n";
    if (opt(o_, "wait").empty()) {
      std::cout << "follow:  squeue -j " << array_job << "," << merge_job << "\n"
                << "logs:    " << (dir_ / "slurm").string() << "/shard-<i>.log, merge.log\n"
                << "result:  " << (dir_ / "summary.txt").string() << " and " << (dir_ / kStatusFile).string()
                << " once job " << merge_job << " ends\n";
      return kExitOk;
    }
    return wait_for(merge_job);
  }

 private:
  static std::vector<std::string> to_strings(const std::vector<int>& v) {
    std::vector<std::string> out;
    for (int i : v) out.push_back(std::to_string(i));
    return out;
  }

  static std::vector<int> all_shards(const Plan& p) {
    std::vector<int> out;
    for (int i = 0; i < p.shards(); ++i) out.push_back(i);
    return out;
  }

  Plan new_plan() {
    if (fs::exists(dir_ / kPlanFile) || fs::exists(dir_ / kStatusFile)) {
      throw UsageError("--out " + dir_.string() +
                       " already holds a batch; pass --resume to continue it, or another --out");
    }
    int k = 1;
    if (!opt(o_, "shards").empty()) {
      k = positive(opt(o_, "shards"), "--shards");
    } else if (!opt(o_, "nodes").empty()) {
      k = positive(opt(o_, "nodes"), "--nodes");
    }
    k = std::min<int>(k, static_cast<int>(o_.ops.size()));
    Plan p;
    p.backend = backend_.name();
    p.assignment.resize(static_cast<size_t>(k));
    // Round robin in op order: neighbours (often alike in cost) spread out.
    for (size_t j = 0; j < o_.ops.size(); ++j) {
      p.ops.push_back(o_.ops[j].name);
      p.assignment[j % static_cast<size_t>(k)].push_back(o_.ops[j].name);
    }
    return p;
  }

  Plan resume_plan() {
    Plan p = read_plan(dir_);
    std::set<std::string> given, planned(p.ops.begin(), p.ops.end());
    for (const OpSpec& op : o_.ops) given.insert(op.name);
    if (given != planned) {
      throw UsageError("--resume: the ops differ from the plan's (" + text::join(p.ops, ",") + "); pass the same list");
    }
    // A shard still queued or running would race its resubmission.
    if (!p.submissions.empty()) {
      const Submission& s = p.submissions.back();
      auto out = capture_output({"squeue", "-h", "-o", "%i", "-j", s.array_job + "," + s.merge_job});
      if (out && out->find_first_not_of(" \n") != std::string::npos) {
        throw UsageError("--resume: jobs " + s.array_job + "/" + s.merge_job +
                         " of this batch are still queued or running; wait for them or scancel them");
      }
    }
    return p;
  }

  // Shards with an op that has no passed row; passed ops are never rerun
  // (the shard's own --resume skips them too).
  std::vector<int> shards_to_rerun(const Plan& p) {
    std::vector<int> out;
    for (int i = 0; i < p.shards(); ++i) {
      std::set<std::string> passed;
      for (const OpRow& r : shard_rows(dir_, i)) {
        if (is_settled(r.status)) passed.insert(r.op);
      }
      for (const std::string& name : p.assignment[i]) {
        if (!passed.count(name)) {
          out.push_back(i);
          break;
        }
      }
    }
    return out;
  }

  void write_inputs(const Plan& p) {
    fs::create_directories(dir_ / "plan");
    fs::create_directories(dir_ / "slurm");
    std::map<std::string, const OpSpec*> by_name;
    for (const OpSpec& op : o_.ops) by_name[op.name] = &op;
    std::vector<OpSpec> all;
    for (int i = 0; i < p.shards(); ++i) {
      std::vector<OpSpec> mine;
      for (const std::string& name : p.assignment[i]) mine.push_back(*by_name.at(name));
      all.insert(all.end(), mine.begin(), mine.end());
      fs::create_directories(shard_dir(dir_, i));
      write_file_atomic((dir_ / "plan" / ("shard-" + std::to_string(i) + ".yaml")).string(), ops_yaml(mine));
    }
    write_file_atomic((dir_ / "plan" / "ops.yaml").string(), ops_yaml(all));
    if (!o_.resume) write_file_atomic((dir_ / kPlanFile).string(), plan_json(p, o_));
  }

  std::vector<std::string> zlcore_head() const {
    return {exe_,         "--backend-dir", fs::absolute(o_.backend_dir).string(), "batch", "--backend", backend_.name(),
            "--launcher", "slurm"};
  }

  // The batch options every shard runs with, as flags.
  std::vector<std::string> shard_flags() const {
    std::vector<std::string> f;
    std::ostringstream t;
    t << o_.timeout_s;
    f.insert(f.end(), {"--timeout", t.str()});
    if (o_.cold) f.push_back("--cold");
    if (o_.warmup_devices > 0) f.insert(f.end(), {"--parallel-warmup-gpus", std::to_string(o_.warmup_devices)});
    if (!o_.idle.check) {
      f.push_back("--no-idle-check");
    } else {
      std::ostringstream r, g;
      r << o_.idle.recheck_s;
      g << o_.idle.give_up_s;
      f.insert(f.end(),
               {"--idle-util", std::to_string(o_.idle.max_util_percent), "--idle-mem-mib",
                std::to_string(o_.idle.max_mem_used_mib), "--busy-recheck", r.str(), "--busy-give-up", g.str()});
    }
    for (const auto& [flag, value] : o_.run.flags) {
      f.push_back(flag);
      if (!value.empty()) f.push_back(value);  // empty: a switch (--force-replay)
    }
    if (!o_.run.dtypes.empty()) f.insert(f.end(), {"--dtypes", text::join(o_.run.dtypes, ",")});
    if (!o_.run.replay_from.empty()) f.insert(f.end(), {"--replay-from", fs::absolute(o_.run.replay_from).string()});
    return f;
  }

  static std::string script_line(const std::vector<std::string>& argv) {
    std::string s;
    for (const std::string& a : argv) s += (s.empty() ? "" : " ") + shell_quote(a);
    return s;
  }

  std::string shard_script(int k) const {
    const std::string d = dir_.string();
    std::string s =
        "#!/bin/sh\n"
        "# zlcore batch shard: one task of the job array runs shard $SLURM_ARRAY_TASK_ID of " +
        std::to_string(k) +
        ".\n# Written by zlcore; the sbatch options are on its command line (plan.json).\n"
        "exec " +
        script_line(zlcore_head()) + " --shard " + kTaskVar + "'/" + std::to_string(k) + "'" + " --ops-file " +
        shell_quote(d + "/plan/shard-") + kTaskVar + "'.yaml'" + " --out " + shell_quote(d + "/shards/") + kTaskVar +
        " " + script_line(shard_flags()) + "\n";
    return s;
  }

  std::string merge_script_text() const {
    std::vector<std::string> argv = zlcore_head();
    argv.insert(argv.end(), {"--merge", "--ops-file", (dir_ / "plan" / "ops.yaml").string(), "--out", dir_.string()});
    return "#!/bin/sh\n# zlcore batch merge: the shards' ops_status.csv into the batch's, and the summary.\nexec " +
           script_line(argv) + "\n";
  }

  std::vector<std::string> common_sbatch(const std::string& name) const {
    std::vector<std::string> a = {"sbatch", "--parsable", "--job-name=" + name, "--open-mode=append"};
    if (!opt(o_, "partition").empty()) a.push_back("--partition=" + opt(o_, "partition"));
    return a;
  }

  std::vector<std::string> array_sbatch(const std::vector<int>& shards) const {
    std::vector<std::string> a = common_sbatch("zlcore-" + dir_.filename().string());
    a.push_back("--array=" + text::join(to_strings(shards), ","));
    a.insert(a.end(), {"--nodes=1", "--ntasks=1"});
    a.push_back("--output=" + (dir_ / "slurm" / "shard-%a.log").string());
    if (!opt(o_, "time").empty()) a.push_back("--time=" + opt(o_, "time"));
    if (!opt(o_, "gpus-per-shard").empty()) {
      a.push_back("--gres=gpu:" + std::to_string(positive(opt(o_, "gpus-per-shard"), "--gpus-per-shard")));
    }
    // Pass-through last: the user's word wins over ours.
    a.insert(a.end(), o_.launcher_args.begin(), o_.launcher_args.end());
    return a;
  }

  std::vector<std::string> merge_sbatch(const std::string& array_job) const {
    std::vector<std::string> a = common_sbatch("zlcore-merge-" + dir_.filename().string());
    // afterany: the merge runs even when a shard failed or was killed, so the
    // batch always gets its one ops_status.csv.
    a.insert(a.end(), {"--dependency=afterany:" + array_job, "--nodes=1", "--ntasks=1"});
    a.push_back("--output=" + (dir_ / "slurm" / "merge.log").string());
    a.insert(a.end(), o_.launcher_args.begin(), o_.launcher_args.end());
    return a;
  }

  std::string submit(const std::vector<std::string>& argv, const std::string& what) {
    Captured r = run_tool(argv, backend_);
    const std::string id = r.exit_code == 0 ? parse_job_id(r.output) : "";
    if (id.empty()) {
      log_line(dir_, what + ": sbatch failed: " + r.output);
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
    doc.Parse(read_file((dir_ / kMergeFile).string()).c_str());
    return doc.IsObject() && doc.HasMember("exit_code") ? doc["exit_code"].GetInt() : kExitFailed;
  }

  bool merged_by(const std::string& job) const {
    try {
      rapidjson::Document doc;
      doc.Parse(read_file((dir_ / kMergeFile).string()).c_str());
      return doc.IsObject() && doc.HasMember("merge_job") && job == doc["merge_job"].GetString();
    } catch (const std::exception&) {
      return false;
    }
  }

  const BatchOptions& o_;
  const Backend& backend_;
  fs::path dir_;
  std::string exe_;
};

class SlurmLauncher : public Launcher {
 public:
  const char* name() const override { return "slurm"; }

  // Only a shard runs ops here; submitting and merging touch no device.
  bool uses_local_devices(const BatchOptions& o) const override { return !opt(o, "shard").empty(); }

  int launch(const BatchOptions& o, const Backend& backend) override {
    if (!opt(o, "shard").empty()) return run_shard(o, backend);
    if (!opt(o, "merge").empty()) {
      const fs::path dir = fs::absolute(o.out_dir);
      const char* job = std::getenv("SLURM_JOB_ID");
      return merge(dir, read_plan(dir), job ? job : "");
    }
    return SlurmSubmit(o, backend).run();
  }
};

}  // namespace

std::unique_ptr<Launcher> make_slurm_launcher() { return std::make_unique<SlurmLauncher>(); }

}  // namespace zl::batch
