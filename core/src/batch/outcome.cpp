#include "outcome.hpp"

#include <csignal>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "../util/json.hpp"
#include "../util/json_read.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/signals.hpp"

namespace zl::batch {
namespace {

std::string member_string(const rapidjson::Value& obj, const char* key) {
  if (!obj.IsObject()) return "";
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || !it->value.IsString()) return "";
  return it->value.GetString();
}

// The identity's time.* object; unknown (all zero) when it has none.
TimeBreakdown time_of(const rapidjson::Value& obj) {
  TimeBreakdown t;
  if (!obj.IsObject()) return t;
  for (const TimePart& p : time_parts()) {
    auto it = obj.FindMember((std::string(p.name) + "_s").c_str());
    if (it == obj.MemberEnd() || !it->value.IsNumber()) continue;
    t.*p.field = it->value.GetDouble();
    t.known = true;
  }
  return t;
}

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

}  // namespace

Status status_from_exit(int exit_code, int* signal) {
  if (signal) *signal = 0;
  switch (exit_code) {
    case 0: return Status::passed;
    case 3: return Status::preflight_failed;
    case 5: return Status::no_tests;
    case 6: return Status::unsupported;
    case 7: return Status::empty;
    case 8: return Status::harness_error;
    case 124: return Status::timeout;
    case 130: return Status::interrupted;
    default: break;
  }
  if (exit_code > 128 && exit_code < 128 + 65) {
    if (signal) *signal = exit_code - 128;
    return Status::crashed;
  }
  return Status::failed;
}

OpOutcome make_outcome(const ExitFacts& facts, const std::string& run_dir) {
  OpOutcome out;
  out.exit_code = facts.exit_code;
  out.seconds = facts.seconds;
  out.started = facts.started_at;

  if (!facts.started) {
    out.status = Status::failed;
    out.reason = "could not start: " + facts.spawn_error;
    return out;
  }

  // What the exit status alone says; the identity refines it below.
  if (facts.killed_for_timeout) {
    out.status = Status::timeout;
    out.reason = "no result after the timeout; the batch killed its process group";
  } else if (facts.term_signal != 0) {
    out.signal = facts.term_signal;
    out.status = facts.interrupted ? Status::interrupted : Status::crashed;
    out.reason = "zlcore run died of " + signal_name(facts.term_signal);
    // scancel or `kill` of the whole tree reaches a just-started run before
    // it has its handlers, and before the batch has handled its own copy.
    if (signals::is_stop_signal(facts.term_signal)) {
      out.status = Status::interrupted;
      out.reason = "zlcore run was stopped by " + signal_name(facts.term_signal) + " from outside the batch";
    }
  } else {
    out.status = status_from_exit(facts.exit_code, &out.signal);
    if (out.status == Status::crashed) out.reason = "pytest died of " + signal_name(out.signal);
    if (out.status == Status::failed) out.reason = "exit code " + std::to_string(facts.exit_code);
  }

  const std::string identity_path = run_dir + "/run_identity.json";
  if (std::filesystem::exists(identity_path)) {
    rapidjson::Document doc;
    std::string text;
    try {
      text = read_file(identity_path);
    } catch (const std::exception&) {
    }
    if (json::parse(doc, text).empty() && doc.IsObject()) {
      out.test_node = member_string(doc, "test_node");
      out.bench_level = member_string(doc, "bench_level");
      if (doc.HasMember("started")) out.started = member_string(doc, "started");
      if (doc.HasMember("timer")) out.timer = member_string(doc["timer"], "name");
      if (doc.HasMember("device")) out.device_id = member_string(doc["device"], "id");
      if (doc.HasMember("seconds") && doc["seconds"].IsNumber()) out.seconds = doc["seconds"].GetDouble();
      if (doc.HasMember("time")) out.time = time_of(doc["time"]);
      const std::string status = member_string(doc, "status");
      auto parsed = parse_status(status);
      // A final status the run wrote itself is the most precise account,
      // except when the batch had to kill it: then the run never finished
      // its own bookkeeping and the identity still says "running".
      if (parsed && !facts.killed_for_timeout) {
        out.status = *parsed;
        if (doc.HasMember("exit_code") && doc["exit_code"].IsInt()) out.exit_code = doc["exit_code"].GetInt();
        if (out.status == Status::crashed && out.signal == 0 && out.exit_code > 128) out.signal = out.exit_code - 128;
      }
      // The run's own reason (for passed: a note, e.g. tests the suite
      // declined); an older run wrote only "error".
      if (doc.HasMember("disk_full") && doc["disk_full"].IsBool()) out.disk_full = doc["disk_full"].GetBool();
      std::string reason = member_string(doc, "reason");
      if (reason.empty() && out.status != Status::passed) reason = member_string(doc, "error");
      if (!reason.empty()) out.reason = reason;
    }
  } else if (out.status == Status::passed) {
    // Exit 0 without an identity is not a result anyone can defend.
    out.status = Status::failed;
    out.reason = "exit 0 but no run_identity.json";
  }
  if (!facts.log_reason.empty() && out.status != Status::passed && out.status != Status::interrupted &&
      (out.status == Status::preflight_failed || out.reason.rfind("exit code", 0) == 0)) {
    out.reason = facts.log_reason;
  }
  // A crash by a stop signal is somebody stopping it (an older run's identity
  // said crashed for a pytest that died of SIGTERM).
  if (out.status == Status::crashed && signals::is_stop_signal(out.signal)) out.status = Status::interrupted;
  // The batch sent this op SIGINT: whatever else it became on the way down
  // (pytest's exit 2 "interrupted", a run killed mid-preflight), it did not
  // finish, and --resume must rerun it as interrupted.
  if (facts.interrupted && out.status != Status::passed && out.status != Status::interrupted) {
    out.reason = std::string("stopped by the batch (the run said ") + to_string(out.status) + ", exit " +
                 std::to_string(out.exit_code) + ")";
    out.status = Status::interrupted;
  }
  // A run that died of a full disk before it could say so in its identity
  // said it on its last line (the reason, from the op's log).
  if (out.reason.find("No space left on device") != std::string::npos) out.disk_full = true;
  if (out.status == Status::interrupted && out.reason.empty()) out.reason = "the batch was interrupted";
  if (out.status == Status::timeout && out.reason.empty()) out.reason = "ran past --timeout; killed";
  if (out.status == Status::preflight_failed && out.reason.empty()) out.reason = "preflight failed (see the op's log)";
  return out;
}

}  // namespace zl::batch
