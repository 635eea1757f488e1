// ab_identity.json: what the A/B was last asked to do, where it stands, and the
// settings --resume must find unchanged (a round measured one way cannot be
// pooled with a round measured another).
#include <rapidjson/document.h>

#include "../util/clock.hpp"
#include "../util/json.hpp"
#include "../util/json_read.hpp"
#include "runner_parts.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"

namespace zl::ab {

void write_ab_identity(const Options& o, const std::string& path, const std::string& status, const std::string& started,
                       const std::string& caliber, const std::string& reason) {
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  d.AddMember("kind", "zlcore-ab", a);
  d.AddMember("version", 1, a);
  d.AddMember("status", json::str(status, a), a);
  d.AddMember("started", json::str(started, a), a);
  d.AddMember("updated", json::str(utc_now_iso(), a), a);
  d.AddMember("caliber", json::str(caliber, a), a);
  if (!reason.empty()) d.AddMember("reason", json::str(reason, a), a);
  // What `status` is about: --ops and --rounds may change on --resume, so a
  // "done" is done for these ops and rounds, not for every op the directory
  // has seen (a report of some ops made on another machine says done too).
  rapidjson::Value ops(rapidjson::kArrayType);
  for (const batch::OpSpec& op : o.ops) ops.PushBack(json::str(op.name, a), a);
  d.AddMember("ops", ops, a);
  d.AddMember("rounds", o.rounds, a);
  d.AddMember("settings", json::str_map(o.settings, a), a);
  write_file_atomic(path, json::pretty(d));
}

void check_resume_settings(const Options& o, const std::string& identity_path, const std::set<std::string>& unchecked) {
  rapidjson::Document d;
  const std::string why = json::parse(d, read_file(identity_path));
  if (!why.empty() || !d.IsObject() || !d.HasMember("settings") || !d["settings"].IsObject()) {
    throw UsageError("ab --resume: " + identity_path + " is not an A/B identity this zlcore reads" +
                     (why.empty() ? "" : " (" + why + ")"));
  }
  std::map<std::string, std::string> before;
  for (const auto& m : d["settings"].GetObject()) {
    if (m.value.IsString()) before[m.name.GetString()] = m.value.GetString();
  }
  for (const auto& [key, value] : o.settings) {
    if (unchecked.count(key)) continue;
    auto it = before.find(key);
    const std::string old = it == before.end() ? "(unset)" : it->second;
    if (old != value) {
      // The one setting an older zlcore never wrote: its A/Bs decided per run.
      const std::string how = key == "sustained" && it == before.end() ? "resume with --sustained per-run"
                                                                       : "resume with the same settings";
      throw UsageError("ab --resume: " + key + " is '" + value + "' now but '" + old +
                       "' in the rounds already measured; " + how + " or start a new --out");
    }
  }
  for (const auto& [key, value] : before) {
    if (!o.settings.count(key) && !unchecked.count(key)) {
      throw UsageError("ab --resume: " + key + " was '" + value + "' in the rounds already measured and is unset now" +
                       (key == "sustained" ? " (resume without --sustained per-run)" : ""));
    }
  }
}

}  // namespace zl::ab
