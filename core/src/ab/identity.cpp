// ab_identity.json: what the A/B was last asked to do, where it stands, and the
// settings --resume must find unchanged (a round measured one way cannot be
// pooled with a round measured another).
#include <rapidjson/document.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <optional>
#include <set>

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

namespace {

// Settings written only when they differ from what an A/B begun before they
// existed did: absent means that older behaviour, and this asks for it.
const std::map<std::string, std::string> kAbsentMeans = {
    {"warm", "resume without --warm"},
    {"sustained", "resume with --sustained per-run"},
};
// Switches: "1" when given.
const std::set<std::string> kSwitches = {"calibrate", "warm", "force-replay"};

// A value as one word to type: quoted unless it is plain. A quote inside
// is closed, escaped and reopened, so that a value taken from the file
// (which anyone may edit) stays one word when the line is pasted.
std::string word(const std::string& v) {
  const bool plain = !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || std::strchr("_./,:=+-@", c) != nullptr;
  });
  if (plain) return v;
  std::string quoted = "'";
  for (char c : v) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// How to ask for `old` again (nullopt: the rounds' identity lacks the
// key). The caller escapes the whole message: a value may hold anything.
std::string how_to_resume(const std::string& key, const std::optional<std::string>& old) {
  if (!old) {
    auto it = kAbsentMeans.find(key);
    return it != kAbsentMeans.end() ? it->second : "resume with the settings those rounds were measured with";
  }
  if (kSwitches.count(key) != 0) return (*old == "1" ? "resume with --" : "resume without --") + key;
  if (old->empty()) return "resume without --" + key;
  if (key == "a-env" || key == "b-env") return "resume with --" + key + " for each of " + word(*old);
  return "resume with --" + key + " " + word(*old);
}

}  // namespace

void check_resume_settings(const Options& o, const std::string& identity_path, const std::set<std::string>& unchecked) {
  rapidjson::Document d;
  std::string text;
  try {
    text = read_file(identity_path);
  } catch (const std::exception& e) {
    throw UsageError("ab --resume: " + std::string(e.what()));  // too large, not a file: one line
  }
  const std::string why = json::parse(d, text);
  if (!why.empty() || !d.IsObject() || !d.HasMember("settings") || !d["settings"].IsObject()) {
    throw UsageError("ab --resume: " + identity_path + " is not an A/B identity this zlcore reads" +
                     (why.empty() ? "" : " (" + why + ")"));
  }
  std::map<std::string, std::string> before;
  for (const auto& m : d["settings"].GetObject()) {
    if (m.value.IsString()) before[m.name.GetString()] = m.value.GetString();
  }
  const std::string or_new = " or start a new --out";
  for (const auto& [key, value] : o.settings) {
    if (unchecked.count(key)) continue;
    auto it = before.find(key);
    const std::optional<std::string> old = it == before.end() ? std::nullopt : std::optional<std::string>(it->second);
    if (old != value) {
      throw UsageError("ab --resume: " + key + " is '" + value + "' now but '" + old.value_or("(unset)") +
                       "' in the rounds already measured; " + how_to_resume(key, old) + or_new);
    }
  }
  for (const auto& [key, value] : before) {
    if (!o.settings.count(key) && !unchecked.count(key)) {
      throw UsageError("ab --resume: " + key + " was '" + value +
                       "' in the rounds already measured and is unset now; " + how_to_resume(key, value) + or_new);
    }
  }
}

}  // namespace zl::ab
