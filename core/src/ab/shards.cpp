// A Slurm A/B (docs/ab.md, "Slurm"): its ops split over shards, each shard a
// whole A/B in <dir>/shards/<i>/ on one allocation. Here: which shards are
// complete, and the merge, which pools every shard's rounds and recomputes
// the one report from them exactly as an A/B on one host does (write_report
// over rounds.csv lines), never by joining the shards' report texts.
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "../util/clock.hpp"
#include "../util/json.hpp"
#include "../util/json_read.hpp"
#include "../util/text.hpp"
#include "runner_parts.hpp"
#include "zlcore/ab.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"

namespace fs = std::filesystem;

namespace zl::ab {
namespace {

// ab_identity.json's status and caliber line; "" when there is none yet.
std::pair<std::string, std::string> identity_of(const fs::path& shard) {
  const fs::path file = shard / "ab_identity.json";
  if (!fs::is_regular_file(file)) return {"", ""};
  rapidjson::Document d;
  if (!json::parse(d, read_file(file.string())).empty() || !d.IsObject()) return {"unreadable", ""};
  const auto text = [&d](const char* key) {
    return d.HasMember(key) && d[key].IsString() ? std::string(d[key].GetString()) : std::string();
  };
  return {text("status"), text("caliber")};
}

RoundsFile rounds_file_of(const fs::path& shard) {
  const fs::path csv = shard / "rounds.csv";
  return fs::exists(csv) ? parse_rounds_text(read_file(csv.string()), csv.string()) : RoundsFile{};
}

std::vector<RoundLine> rounds_of(const fs::path& shard) { return rounds_file_of(shard).lines; }

// The lines of a shard's rounds.csv the merge leaves out, one warning each, as
// a resume of the shard would name them: its rounds are then unfinished, and
// that resume repairs the file and runs them again.
void say_left_out(std::ostream& said, const RoundsFile& f, int shard) {
  const std::string file = "shards/" + std::to_string(shard) + "/rounds.csv";
  const std::string then = "; left out of the merge, and run again by a resume of the shard\n";
  for (const std::string& why : f.unreadable) said << "warning: " << file << " " << why << then;
  if (f.dropped_tail) said << "warning: " << file << ": a torn last line" << then;
}

}  // namespace

std::vector<std::string> unfinished_ops(const std::vector<RoundLine>& lines, const std::vector<std::string>& ops,
                                        int rounds) {
  std::set<std::string> given_up;
  std::map<std::string, std::set<int>> done;
  for (const RoundLine& l : lines) {
    if (l.side != "*") continue;
    if (l.status == "failed" || l.status == "unsupported") given_up.insert(l.op);
    if (l.status == "done" && l.round > 0) done[l.op].insert(l.round);
  }
  std::vector<std::string> out;
  for (const std::string& op : ops) {
    if (given_up.count(op)) continue;
    for (int r = 1; r <= rounds; ++r) {
      if (!done[op].count(r)) {
        out.push_back(op);
        break;
      }
    }
  }
  return out;
}

std::vector<RoundLine> lines_of_shard(std::vector<RoundLine> lines, int shard) {
  for (RoundLine& l : lines) {
    if (!l.run_dir.empty()) l.run_dir = "shards/" + std::to_string(shard) + "/" + l.run_dir;
  }
  return lines;
}

std::string ab_shard_dir(const std::string& dir, int shard) {
  return (fs::path(dir) / "shards" / std::to_string(shard)).string();
}

std::vector<int> shards_to_rerun(const Options& o, const std::string& dir,
                                 const std::vector<std::vector<std::string>>& ops_by_shard,
                                 const std::set<std::string>& settled_on_node) {
  std::vector<int> out;
  for (size_t i = 0; i < ops_by_shard.size(); ++i) {
    const fs::path shard = ab_shard_dir(dir, static_cast<int>(i));
    if (fs::is_regular_file(shard / "ab_identity.json")) {
      try {
        check_resume_settings(o, (shard / "ab_identity.json").string(), settled_on_node);
      } catch (const UsageError& e) {
        throw UsageError("shard " + std::to_string(i) + ": " + e.what());
      }
    }
    if (!unfinished_ops(rounds_of(shard), ops_by_shard[i], o.rounds).empty()) out.push_back(static_cast<int>(i));
  }
  return out;
}

ShardsMerged merge_shards(const Options& o, const std::string& dir,
                          const std::vector<std::vector<std::string>>& ops_by_shard) {
  std::ostringstream said;
  std::vector<RoundLine> lines;
  std::vector<std::string> refused, incomplete, calibers;
  for (size_t i = 0; i < ops_by_shard.size(); ++i) {
    const int n = static_cast<int>(i);
    const fs::path shard = ab_shard_dir(dir, n);
    const auto [status, caliber] = identity_of(shard);
    const RoundsFile file = rounds_file_of(shard);
    const std::vector<RoundLine>& mine = file.lines;
    const std::vector<std::string> left = unfinished_ops(mine, ops_by_shard[i], o.rounds);
    said << "shard " << n << " (" << text::join(ops_by_shard[i], ",")
         << "): " << (status.empty() ? "not started" : status);
    if (!left.empty()) said << ", ops with rounds to run: " << text::join(left, ",");
    said << "\n";
    say_left_out(said, file, n);
    if (status == "refused") refused.push_back(std::to_string(n));
    if (!left.empty()) incomplete.push_back(std::to_string(n));
    if (!caliber.empty()) calibers.push_back("shard " + std::to_string(n) + ": " + caliber);
    for (RoundLine& l : lines_of_shard(mine, n)) lines.push_back(std::move(l));
  }
  // Rewritten whole each merge; the shards' rounds.csv are the truth.
  std::string csv = rounds_csv_header();
  for (const RoundLine& l : lines) csv += rounds_csv_record(l);
  write_file_atomic((fs::path(dir) / "rounds.csv").string(), csv);

  const std::string caliber = text::join(calibers, "; ");
  const std::string started = utc_now_iso();
  const std::string identity = (fs::path(dir) / "ab_identity.json").string();
  write_ab_identity(o, identity, "reporting", started, caliber);
  ShardsMerged m;
  m.exit_code = write_report(o, dir, lines, said);
  if (m.exit_code == kExitFailed) {
    // write_report said why on stderr (the merge job's log); --wait prints this text.
    said << "exit 1: an op failed a round (AB_FAILED; the FAILED lines say why) or, with "
            "--fail-on-regression, a row is SLOWER (REGRESSION)\n";
  }
  if (!refused.empty()) {
    said << "CALIBER_MISMATCH: the caliber check refused the pair in shard(s) " << text::join(refused, ",")
         << " (see slurm/shard-<i>.log); declare the difference with --expect-diff KEY and continue with --resume\n";
    m.exit_code = kExitCaliber;
  } else if (!incomplete.empty()) {
    said << "AB_INCOMPLETE: shard(s) " << text::join(incomplete, ",")
         << " did not finish their rounds (--resume resubmits only these)\n";
    if (m.exit_code == kExitOk) m.exit_code = kExitFailed;
  }
  write_ab_identity(o, identity,
                    !refused.empty()      ? "refused"
                    : !incomplete.empty() ? "incomplete"
                                          : "done",
                    started, caliber);
  m.text = said.str();
  return m;
}

}  // namespace zl::ab
