// batch_identity.json: what ran, where, with which settings, how far it got,
// and every invocation of the batch so far. Rewritten atomically at each
// change of status.
#include <unistd.h>

#include "../util/clock.hpp"
#include "../util/json.hpp"
#include "batch_run.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/process.hpp"

namespace fs = std::filesystem;

namespace zl::batch {

// How many ops ended in each status so far, and how many never ran.
json::Value BatchRun::status_counts(json::Alloc& a) const {
  std::map<std::string, int> counts;
  for (const OpRow& r : latest_rows()) counts[to_string(r.status)]++;
  json::Value c(rapidjson::kObjectType);
  for (Status s : all_statuses()) {
    c.AddMember(json::str(to_string(s), a), json::Value(counts[to_string(s)]), a);
  }
  c.AddMember("not_run", static_cast<int>(o_.ops.size() - latest_rows().size()), a);
  return c;
}

// Every invocation, oldest first, this one last: a resume with other
// settings stays on record beside the first.
json::Value BatchRun::invocations(const std::string& status, json::Alloc& a) const {
  json::Value invocations(rapidjson::kArrayType);
  for (const auto& inv : history_.GetArray()) invocations.PushBack(json::Value(inv, a), a);
  json::Value now(rapidjson::kObjectType);
  now.AddMember("started", json::str(started_, a), a);
  if (status != "running") now.AddMember("ended", json::str(utc_now_iso(), a), a);
  now.AddMember("status", json::str(status, a), a);
  now.AddMember("pid", static_cast<int>(getpid()), a);
  now.AddMember("resumed", o_.resume, a);
  now.AddMember("force_resume", o_.force_resume, a);
  now.AddMember("differs", json::str_array(differs_, a), a);
  now.AddMember("options", json::str_map(o_.recorded_options, a), a);
  now.AddMember("caliber", json::str_map(o_.caliber, a), a);
  invocations.PushBack(now, a);
  return invocations;
}

// Written at the start ("running") and at the end of each invocation; a
// full disk gets one warning, not a half file.
void BatchRun::write_identity(const std::string& status) {
  rapidjson::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  doc.AddMember("schema", 1, a);
  doc.AddMember("zlcore_version", json::str(ZL_VERSION, a), a);
  doc.AddMember("status", json::str(status, a), a);
  doc.AddMember("started", json::str(started_, a), a);
  if (status != "running") doc.AddMember("ended", json::str(utc_now_iso(), a), a);
  doc.AddMember("seconds", monotonic_seconds() - t0_, a);
  doc.AddMember("resumed", o_.resume && !earlier_rows_.empty(), a);
  doc.AddMember("pid", static_cast<int>(getpid()), a);
  json::Value backend(rapidjson::kObjectType);
  backend.AddMember("name", json::str(backend_.name(), a), a);
  backend.AddMember("abi", json::str(backend_.abi(), a), a);
  backend.AddMember("version", json::str(backend_.backend_version(), a), a);
  backend.AddMember("path", json::str(backend_.path(), a), a);
  doc.AddMember("backend", backend, a);
  json::Value devices(rapidjson::kArrayType);
  for (const Device& d : devices_) {
    json::Value dv(rapidjson::kObjectType);
    dv.AddMember("index", d.index, a);
    dv.AddMember("id", json::str(d.id, a), a);
    dv.AddMember("name", json::str(d.name, a), a);
    devices.PushBack(dv, a);
  }
  doc.AddMember("devices", devices, a);
  doc.AddMember("launcher", "local", a);
  doc.AddMember("executor", json::str(executor_ ? executor_->kind() : "cold", a), a);
  doc.AddMember("standby_worker", executor_ && std::string(executor_->kind()) == "warm" && o_.standby, a);
  doc.AddMember("warmup_devices", o_.warmup_devices, a);
  doc.AddMember("compile_ahead", compile_report(a), a);
  doc.AddMember("timeout_s", o_.timeout_s, a);
  doc.AddMember("options", json::str_map(o_.recorded_options, a), a);
  std::vector<std::string> ops;
  for (const OpSpec& op : o_.ops) ops.push_back(op.name);
  doc.AddMember("ops", json::str_array(ops, a), a);
  doc.AddMember("counts", status_counts(a), a);
  if (disk_full_) doc.AddMember("reason", json::str(disk_full_what_, a), a);
  doc.AddMember("caliber", json::str_map(o_.caliber, a), a);
  doc.AddMember("invocations", invocations(status, a), a);
  const std::string text = json::pretty(doc);
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      write_file_atomic((dir_ / "batch_identity.json").string(), text);
      return;
    } catch (const std::exception& e) {
      if (!is_out_of_space(e)) throw;
      out_of_space(e.what());
    }
  }
  warn_once("no space left to write batch_identity.json (status " + status + ")");
}

}  // namespace zl::batch
