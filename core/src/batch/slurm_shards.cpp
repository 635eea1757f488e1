// Which op runs in which shard, which shards a resume reruns, and which of
// the backend's devices Slurm gave a shard.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <set>

#include "../util/text.hpp"
#include "slurm.hpp"
#include "zlcore/errors.hpp"

namespace zl::batch::slurm {

std::string option(const BatchOptions& o, const std::string& key) {
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

std::string join_ints(const std::vector<int>& v, const std::string& sep) {
  std::vector<std::string> s;
  for (int i : v) s.push_back(std::to_string(i));
  return text::join(s, sep);
}

int shard_count(const BatchOptions& o) {
  int k = 1;
  if (!option(o, "shards").empty()) {
    k = positive(option(o, "shards"), "--shards");
  } else if (!option(o, "nodes").empty()) {
    k = positive(option(o, "nodes"), "--nodes");
  }
  return std::min<int>(k, static_cast<int>(o.ops.size()));
}

Plan deal_round_robin(const std::string& backend, const std::vector<OpSpec>& ops, int k) {
  Plan p;
  p.backend = backend;
  p.assignment.resize(static_cast<size_t>(k));
  // Round robin in op order: neighbours (often alike in cost) spread out.
  for (size_t j = 0; j < ops.size(); ++j) {
    p.ops.push_back(ops[j].name);
    p.assignment[j % static_cast<size_t>(k)].push_back(ops[j].name);
  }
  return p;
}

std::vector<int> all_shards(const Plan& p) {
  std::vector<int> out;
  for (int i = 0; i < p.shards(); ++i) out.push_back(i);
  return out;
}

// Passed ops are never rerun (the shard's own --resume skips them too).
std::vector<int> shards_to_rerun(const Plan& p, const std::vector<std::vector<OpRow>>& rows_by_shard) {
  std::vector<int> out;
  for (int i = 0; i < p.shards(); ++i) {
    std::set<std::string> passed;
    if (static_cast<size_t>(i) < rows_by_shard.size()) {
      for (const OpRow& r : rows_by_shard[static_cast<size_t>(i)]) {
        if (is_settled(r.status)) passed.insert(r.op);
      }
    }
    for (const std::string& name : p.assignment[static_cast<size_t>(i)]) {
      if (!passed.count(name)) {
        out.push_back(i);
        break;
      }
    }
  }
  return out;
}

int shard_index(const std::string& text, int k) {
  const bool digits = !text.empty() && text.size() < 10 &&
                      std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
  if (!digits || std::stoi(text) >= k) {
    throw UsageError("--shard: '" + text + "' is not a shard of this plan (0 to " + std::to_string(k - 1) + ")");
  }
  return std::stoi(text);
}

BatchOptions shard_options(const Plan& plan, int i, const fs::path& dir) {
  BatchOptions o = plan.options;
  std::map<std::string, const OpSpec*> by_name;
  for (const OpSpec& op : plan.options.ops) by_name[op.name] = &op;
  o.ops.clear();
  for (const std::string& name : plan.assignment.at(static_cast<size_t>(i))) {
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      throw UsageError("the plan assigns op '" + name + "' to shard " + std::to_string(i) +
                       " but 'batch.ops' does not describe it");
    }
    o.ops.push_back(*it->second);
  }
  o.out_dir = shard_dir(dir, i).string();
  o.resume = true;  // a shard directory only ever grows; a rerun continues it
  o.recorded_options["shard"] = std::to_string(i) + "/" + std::to_string(plan.shards());
  return o;
}

// The backend's own visibility variable as Slurm set it wins (zlcore strips
// it from what sbatch inherits, so here it can only come from Slurm's GRES);
// else the GPU ids Slurm lists, mapped through the backend; else (no GPU
// allocation, e.g. the host backend) every device the backend reports.
std::vector<int> allocated_devices(const Backend& backend, std::string* how) {
  DeviceQuery q = backend.enumerate();
  if (q.devices.empty()) {
    throw PreflightError(
        "device", "backend '" + backend.name() + "' reports no devices: " + (q.reason.empty() ? q.error : q.reason));
  }
  auto match = [&](const std::string& token) -> int {
    for (const Device& d : q.devices) {
      if (d.visibility_value == token || d.id == token || std::to_string(d.index) == token) return d.index;
    }
    throw PreflightError("device",
                         "Slurm allocated device '" + token + "' but " + backend.name() + " reports no such device");
  };
  std::vector<std::string> sources = backend.visibility_env();
  sources.emplace_back("SLURM_STEP_GPUS");
  sources.emplace_back("SLURM_JOB_GPUS");
  for (const std::string& key : sources) {
    const char* v = std::getenv(key.c_str());
    if (v == nullptr || *v == '\0') continue;
    std::vector<int> out;
    for (const std::string& token : text::split(v, ",")) out.push_back(match(token));
    *how = key + "=" + v;
    return out;
  }
  std::vector<int> all;
  for (const Device& d : q.devices) all.push_back(d.index);
  *how = "no GPU allocation: every device " + backend.name() + " reports";
  return all;
}

fs::path shard_dir(const fs::path& dir, int i) { return dir / "shards" / std::to_string(i); }

std::vector<OpRow> shard_rows(const fs::path& dir, int i) {
  const fs::path csv = shard_dir(dir, i) / kStatusFile;
  if (!fs::exists(csv)) return {};
  std::vector<OpRow> rows = read_status_csv(csv.string()).rows;
  for (OpRow& r : rows) {
    if (!r.run_dir.empty()) r.run_dir = "shards/" + std::to_string(i) + "/" + r.run_dir;
  }
  return rows;
}

}  // namespace zl::batch::slurm
