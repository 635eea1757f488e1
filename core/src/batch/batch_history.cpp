// History and resume: which ops an earlier session of this batch settled
// (ops_status.csv), the invocations batch_identity.json recorded, and whether
// this --resume runs with the settings the batch was started with.
#include <set>

#include "../util/clock.hpp"
#include "../util/json.hpp"
#include "../util/json_read.hpp"
#include "batch_run.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/process.hpp"

namespace fs = std::filesystem;

namespace zl::batch {

void BatchRun::decide_work() {
  t0_ = monotonic_seconds();
  started_ = utc_now_iso();
  std::set<std::string> passed;
  for (const OpRow& r : read_status_csv((dir_ / kStatusFile).string()).rows) {
    attempts_[r.op]++;
    if (is_settled(r.status)) passed.insert(r.op);
    earlier_rows_.push_back(r);
  }
  for (size_t i = 0; i < o_.ops.size(); ++i) {
    if (!passed.count(o_.ops[i].name)) todo_.push_back(i);
  }
}

// batch_identity.json's invocations so far, oldest first (one, rebuilt
// from the top level, for a file an older zlcore wrote). What could not be
// read is kept in history_gap_ for check_caliber: without the first
// invocation's settings a --resume cannot be checked.
void BatchRun::load_history() {
  history_.SetArray();
  const fs::path file = dir_ / "batch_identity.json";
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(file, ec);
  if (!fs::exists(st)) {
    // Said, not refused: a directory laid out by hand or by another tool
    // has rows and no identity; a damaged one (below) is refused.
    if (o_.resume && has_rows()) {
      say("--resume: " + dir_.string() +
          " has no batch_identity.json; the settings of its rows are not known and not compared");
    }
    return;
  }
  // Rewritten at the end (atomically, by rename): a directory or a device in
  // its place would fail only then, after the ops ran.
  if (!fs::is_regular_file(st)) {
    throw UsageError("--out " + dir_.string() +
                     ": batch_identity.json is not a regular file (a directory, a link or a device); move it "
                     "away and --resume again");
  }
  rapidjson::Document d;
  std::string text;
  try {
    text = read_file(file.string());
  } catch (const std::exception&) {
  }
  if (!json::parse(d, text).empty() || !d.IsObject()) {
    history_gap_ = "batch_identity.json does not read as JSON";
    return;
  }
  auto& a = history_.GetAllocator();
  if (d.HasMember("invocations")) {
    if (d["invocations"].IsArray()) {
      for (const auto& inv : d["invocations"].GetArray()) history_.PushBack(json::Value(inv, a), a);
    }
    // zlcore has written the settings with every invocation since it wrote
    // invocations at all: without them the file was edited or damaged.
    const bool first_has_caliber = !history_.Empty() && history_[0].IsObject() && history_[0].HasMember("caliber") &&
                                   history_[0]["caliber"].IsObject();
    if (!first_has_caliber) history_gap_ = "batch_identity.json records no settings for its first invocation";
    return;
  }
  json::Value inv(rapidjson::kObjectType);
  for (const char* k : {"started", "ended", "status", "pid", "resumed", "options"}) {
    if (d.HasMember(k)) inv.AddMember(json::str(k, a), json::Value(d[k], a), a);
  }
  history_.PushBack(inv, a);
}

// Whether ops_status.csv holds a row: a batch killed before its first
// identity was written has a header at most, and nothing to mix.
bool BatchRun::has_rows() const {
  const fs::path csv = dir_ / kStatusFile;
  std::error_code ec;
  if (!fs::exists(csv, ec)) return false;
  try {
    return !read_status_csv(csv.string()).rows.empty();
  } catch (const std::exception&) {
    return true;  // unreadable rows are still rows
  }
}

// --resume with other settings than the batch was started with would mix
// two calibers in one ops_status.csv: refused (exit 2, naming each
// difference) unless --force-resume, which says so and records it.
void BatchRun::check_caliber() {
  if (!o_.resume) return;
  if (!history_gap_.empty() && has_rows()) {
    // Rows measured with settings nobody can name: continuing could mix two
    // calibers in one ops_status.csv, and nothing would say so afterwards.
    if (!o_.force_resume) {
      throw UsageError("--resume: " + history_gap_ + " in " + dir_.string() +
                       ", so the settings its rows were measured with cannot be compared; restore it, or pass "
                       "--force-resume to continue without the check");
    }
    say("--force-resume: " + history_gap_ + "; the settings of the rows before are not compared");
    differs_.push_back("earlier settings unknown (" + history_gap_ + ")");
    return;
  }
  if (history_.Empty()) return;
  const json::Value& first = history_[0];
  if (!first.IsObject() || !first.HasMember("caliber") || !first["caliber"].IsObject()) {
    say("--resume: batch_identity.json does not record the settings this batch was started with (an older "
        "zlcore); they are not compared");
    return;
  }
  std::map<std::string, std::string> then;
  for (const auto& m : first["caliber"].GetObject()) {
    then[m.name.GetString()] = m.value.IsString() ? m.value.GetString() : "(not text)";
  }
  std::set<std::string> keys;
  for (const auto& [k, v] : then) keys.insert(k);
  for (const auto& [k, v] : o_.caliber) keys.insert(k);
  for (const std::string& k : keys) {
    auto was = then.find(k);
    auto now = o_.caliber.find(k);
    const std::string a = was == then.end() ? "unset" : was->second;
    const std::string b = now == o_.caliber.end() ? "unset" : now->second;
    if (a != b) differs_.push_back((k.rfind("env:", 0) == 0 ? k.substr(4) : k) + " " + a + " (now " + b + ")");
  }
  if (differs_.empty()) return;
  std::string list;
  for (const std::string& d : differs_) list += (list.empty() ? "" : "; ") + d;
  if (!o_.force_resume) {
    throw UsageError("--resume: " + dir_.string() + " was started with other settings that change numbers: " + list +
                     "; pass the same ones, or --force-resume to mix them in this batch");
  }
  say("--force-resume: this batch's rows now mix settings: " + list);
}

}  // namespace zl::batch
