// The merge job: every shard's rows into <batch>/ops_status.csv (history
// included, in start order), the summary, and merge.json, which --wait reads
// to know the merge it waited for is done.
#include <algorithm>
#include <ctime>
#include <iostream>
#include <map>
#include <set>

#include "../util/clock.hpp"
#include "../util/json.hpp"
#include "../util/text.hpp"
#include "outcome.hpp"
#include "progress.hpp"
#include "slurm.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"

namespace zl::batch::slurm {

void log_line(const fs::path& dir, const std::string& line, const std::string& log) {
  append_log_line_or_warn((dir / log).string(), utc_now_iso() + " " + text::one_line(line) + "\n",
                          "zlcore " + fs::path(log).stem().string());
}

int merge(const fs::path& dir, const Plan& plan, const std::string& merge_job) {
  std::vector<OpRow> rows;
  std::map<std::string, int> shard_of;
  for (int i = 0; i < plan.shards(); ++i) {
    for (const std::string& name : plan.assignment[static_cast<size_t>(i)]) shard_of[name] = i;
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
    summary += "shards with ops not passed: " + join_ints({to_resume.begin(), to_resume.end()}, ",") +
               " (--resume resubmits only these)\n";
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

}  // namespace zl::batch::slurm
