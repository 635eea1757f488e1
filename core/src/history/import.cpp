// Reading a directory to import: run and batch directories through compare's
// reader (the same rows and identity keys a comparison reads), ab
// directories as their B side's rounds pooled per op.
#include <algorithm>
#include <filesystem>
#include <sstream>

#include "row_summary.hpp"
#include "zlcore/compare.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/history.hpp"
#include "zlcore/identity_schema.hpp"
#include "zlcore/sha256.hpp"

namespace fs = std::filesystem;

namespace zl::history {
namespace {

namespace key = identity::key;

std::string segment_text(const compare::RunInfo& info) {
  std::string out;
  for (const std::string& k : segment_keys()) {
    auto it = info.caliber.find(k);
    out += k + "=" + (it == info.caliber.end() ? "" : it->second) + "\n";
  }
  // A cold run never sits in one level with a warm one. Said only when
  // cold, so that a warm run's segment is the text a run imported before
  // the policy existed has in the store (compare reads those as warm).
  if (auto l2 = info.caliber.find(key::timer_l2); l2 != info.caliber.end() && l2->second == "cold") {
    out += std::string(key::timer_l2) + "=cold\n";
  }
  return out;
}

// What a report may name as changed: every caliber key (segment keys
// included, for a break's reason), the env knobs, the winners, and where the
// suite was (a copy of FlagGems without git has no commit to differ).
std::map<std::string, std::string> identity_of(const compare::RunInfo& info) {
  std::map<std::string, std::string> out = info.caliber;
  if (auto dir = info.provenance.find(key::flaggems_dir); dir != info.provenance.end()) out[dir->first] = dir->second;
  for (const auto& [k, v] : info.env) out["env." + k] = v;
  if (!info.autotune_mode.empty()) out["autotune.mode"] = info.autotune_mode;
  if (!info.autotune_winners_hash.empty()) out["autotune.winners_hash"] = info.autotune_winners_hash;
  return out;
}

Run to_run(const compare::RunInfo& info, const std::vector<compare::ResultRow>& rows) {
  Run run;
  run.op = info.op;
  run.dir = info.dir;
  run.run_id = info.run_id;
  run.status = info.status;
  run.started = info.started;
  run.segment = segment_text(info);
  run.identity = identity_of(info);
  for (const compare::ResultRow& r : rows) {
    for (Row& row : summarize(r)) run.rows.push_back(std::move(row));
  }
  return run;
}

// "compare: X" from compare's reader becomes "history add: X".
std::string reworded(const std::string& what) {
  const std::string prefix = "compare: ";
  return "history add: " + (what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what);
}

// The B side of every round of every op (docs/ab.md, "The directory"):
// what the A/B measured as the candidate, pooled over its rounds.
void read_ab(const fs::path& root, Entry& e) {
  if (!fs::is_directory(root / "runs")) return;
  std::vector<fs::path> ops;
  for (const auto& d : fs::directory_iterator(root / "runs"))
    if (d.is_directory()) ops.push_back(d.path());
  std::sort(ops.begin(), ops.end());
  for (const fs::path& op_dir : ops) {
    std::vector<fs::path> rounds;
    for (const auto& d : fs::directory_iterator(op_dir))
      if (fs::is_regular_file(d.path() / "B" / "run_identity.json")) rounds.push_back(d.path() / "B");
    if (rounds.empty()) continue;
    std::sort(rounds.begin(), rounds.end());
    std::vector<std::vector<compare::ResultRow>> rows;
    compare::RunInfo first;
    for (const fs::path& r : rounds) {
      compare::Side side = compare::load_side("B", r.string());
      for (std::string& w : side.warnings) e.warnings.push_back(std::move(w));
      if (rows.empty()) first = side.runs.front();
      rows.push_back(side.runs.front().rows);
    }
    first.dir = op_dir.lexically_relative(root).generic_string();
    e.runs.push_back(to_run(first, pool_rows(rows)));
  }
}

}  // namespace

const std::vector<std::string>& segment_keys() {
  static const std::vector<std::string> keys = {key::backend_name,
                                                key::device_name,
                                                key::timer_name,
                                                key::bench_level,
                                                key::mode,
                                                key::shapes_sha256,
                                                "device.attributes.clocks_policy",
                                                "device.attributes.clock_sm_application_mhz",
                                                "device.attributes.power_limit_w",
                                                "device.attributes.ecc_enabled"};
  return keys;
}

Entry read_entry(const std::string& given) {
  std::string dir = given;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (!fs::is_directory(dir)) throw UsageError("history add: " + dir + " is not a directory");
  Entry e;
  e.path = fs::weakly_canonical(fs::absolute(dir)).string();
  try {
    if (fs::is_regular_file(fs::path(dir) / "ab_identity.json")) {
      e.kind = "ab";
      read_ab(dir, e);
    } else {
      compare::Side side = compare::load_side("A", dir);
      e.kind = side.batch ? "batch" : "run";
      e.warnings = std::move(side.warnings);
      for (const compare::RunInfo& info : side.runs) e.runs.push_back(to_run(info, info.rows));
    }
  } catch (const UsageError& err) {
    throw UsageError(reworded(err.what()));
  }
  size_t rows = 0;
  for (const Run& r : e.runs) {
    rows += r.rows.size();
    if (!r.started.empty() && (e.started.empty() || r.started < e.started)) e.started = r.started;
  }
  if (rows == 0) {
    throw UsageError("history add: " + dir + " (" + (e.kind.empty() ? "unknown" : e.kind) +
                     " directory) holds no measured row; nothing added");
  }
  if (e.started.empty())
    throw UsageError("history add: " + dir + ": no run_identity.json says when it started; nothing added");
  return e;
}

std::string fingerprint(const Entry& e) {
  std::ostringstream s;
  s.precision(17);
  s << e.kind << '\n';
  for (const Run& r : e.runs) {
    s << r.op << '\t' << r.dir << '\t' << r.run_id << '\t' << r.status << '\t' << r.started << '\n' << r.segment;
    for (const auto& [k, v] : r.identity) s << k << '=' << v << '\n';
    for (const Row& w : r.rows) {
      s << w.op << '\t' << w.dtype << '\t' << w.shape << '\t' << w.side << '\t' << w.median_ms << '\t' << w.lo_ms
        << '\t' << w.hi_ms << '\t' << w.n << '\t' << w.timer << '\n';
    }
  }
  return sha256_hex(s.str());
}

}  // namespace zl::history
