#include "status.hpp"

#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include "../util/json_read.hpp"
#include "../util/text.hpp"
#include "zlcore/signals.hpp"

namespace zl {
namespace {

const rapidjson::Value* member(const rapidjson::Value* v, const char* key) {
  if (v == nullptr || !v->IsObject()) return nullptr;
  auto it = v->FindMember(key);
  return it == v->MemberEnd() ? nullptr : &it->value;
}

std::string string_of(const rapidjson::Value* v, const char* key) {
  const rapidjson::Value* m = member(v, key);
  return m != nullptr && m->IsString() ? m->GetString() : "";
}

bool bool_of(const rapidjson::Value* v, const char* key) {
  const rapidjson::Value* m = member(v, key);
  return m != nullptr && m->IsBool() && m->GetBool();
}

int int_of(const rapidjson::Value* v, const char* key, int fallback) {
  const rapidjson::Value* m = member(v, key);
  return m != nullptr && m->IsInt() ? m->GetInt() : fallback;
}

std::string signal_text(int sig) {
  const char* d = strsignal(sig);
  return "signal " + std::to_string(sig) + (d != nullptr ? std::string(" (") + d + ")" : "");
}

// The log's own account of a refusal before anything ran: a plugin's
// "PREFLIGHT_FAILED check=<name>: <detail>" line.
std::string preflight_line(const std::string& log) {
  const size_t at = log.rfind("PREFLIGHT_FAILED check=");
  if (at == std::string::npos) return "";
  const size_t end = log.find('\n', at);
  std::string line = log.substr(at, end == std::string::npos ? std::string::npos : end - at);
  // pytest.exit() repeats it inside a banner: "!!! ... PREFLIGHT_FAILED ... !!!".
  while (!line.empty() && (line.back() == '!' || line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return line;
}

// The last line of the log that looks like the reason pytest stopped.
std::string last_error_line(const std::string& log) {
  std::istringstream in(log);
  std::string line, found;
  while (std::getline(in, line)) {
    if (line.rfind("E ", 0) == 0 || line.find("error:") != std::string::npos ||
        line.find("Error") != std::string::npos || line.rfind("ERROR", 0) == 0) {
      found = line;
    }
  }
  return found;
}

// What the exit status alone decides, before any test is looked at.
std::optional<RunStatus> from_exit(const ChildFacts& f) {
  const ChildResult& c = f.child;
  if (!c.started) return make_status("failed", 1, "could not start pytest: " + c.spawn_error);
  if (c.timed_out) return make_status("timeout", kExitTimeout, "ran past --timeout; its process group was killed");
  if (c.interrupted) return make_status("interrupted", 130, "interrupted");
  // A stop signal zlcore did not send (scancel, `kill` of the tree) can reach
  // pytest before zlcore: it was stopped, and a batch reruns it.
  if (signals::is_stop_signal(c.term_signal))
    return make_status("interrupted", 130, "pytest was stopped by " + signal_text(c.term_signal) + " from outside");
  if (c.term_signal != 0)
    return make_status("crashed", 128 + c.term_signal, "pytest died of " + signal_text(c.term_signal));
  if (const std::string pf = preflight_line(f.log_tail); !pf.empty() && c.exit_code != 0) {
    return make_status("preflight_failed", 3, text::one_line(pf, 300));
  }
  return std::nullopt;
}

// Our plugins never reported: pytest stopped before them (a usage error, an
// import error in a conftest), or the interpreter is not pytest at all.
RunStatus without_report(const ChildFacts& f) {
  if (f.child.exit_code == 0) {
    return make_status("empty", kExitEmpty,
                       f.rows.total == 0 ? "exit 0 but no test ran under zlcore's plugins and no row was written"
                                         : "exit 0 but zlcore's outcome plugin did not report");
  }
  const std::string why = last_error_line(f.log_tail);
  return make_status(
      "failed", f.child.exit_code,
      text::one_line("pytest exit " + std::to_string(f.child.exit_code) + (why.empty() ? "" : ": " + why), 300));
}

// The selected tests, sorted by what happened to them.
struct Tally {
  int passed = 0, passed_with_rows = 0, skipped = 0;
  std::vector<std::string> harness, failures, declined, collect_errors;
  std::string first_skip, first_decline;
};

Tally tally(const rapidjson::Value* o, const RowCounts& rows, const std::function<bool(const std::string&)>& declined) {
  Tally t;
  if (const rapidjson::Value* ce = member(o, "collect_errors"); ce != nullptr && ce->IsArray()) {
    for (const auto& e : ce->GetArray())
      t.collect_errors.push_back(string_of(&e, "node") + ": " + string_of(&e, "message"));
  }
  const rapidjson::Value* tests = member(o, "tests");
  if (tests == nullptr || !tests->IsArray()) return t;
  for (const auto& test : tests->GetArray()) {
    const std::string node = string_of(&test, "node");
    const std::string outcome = string_of(&test, "outcome");
    const std::string message = string_of(&test, "message");
    if (outcome == "passed") {
      ++t.passed;
      auto it = rows.by_test.find(node);
      if (it != rows.by_test.end() && it->second > 0) ++t.passed_with_rows;
    } else if (outcome == "skipped") {
      if (t.skipped++ == 0) t.first_skip = message;
    } else if (outcome == "xfailed") {
      // The suite's own word that the test fails here: declined, as pytest
      // itself counts it (exit 0), not a failure of zlcore's run.
      if (t.declined.empty()) t.first_decline = message;
      t.declined.push_back(node);
    } else if (outcome == "failed") {
      if (bool_of(&test, "harness")) {
        t.harness.push_back(node + ": " + message);
      } else if (declined(message)) {
        if (t.declined.empty()) t.first_decline = message;
        t.declined.push_back(node);
      } else {
        t.failures.push_back(node + ": " + message);
      }
    }
  }
  return t;
}

RunStatus from_tally(const Tally& t, const rapidjson::Value* o, const ChildFacts& f) {
  RunStatus r;
  r.passed_tests = t.passed;
  r.skipped_tests = t.skipped;
  r.declined_tests = t.declined;
  r.failed_tests = t.harness;
  r.failed_tests.insert(r.failed_tests.end(), t.failures.begin(), t.failures.end());
  if (!t.harness.empty()) {
    r.status = "harness_error";
    r.exit_code = kExitHarnessError;
    r.reason = text::one_line("zlcore's plugins raised in " + text::join_some(t.harness, 1), 400);
  } else if (!t.failures.empty() || !t.collect_errors.empty()) {
    std::vector<std::string> all = t.collect_errors;
    all.insert(all.end(), t.failures.begin(), t.failures.end());
    if (t.passed_with_rows > 0) {
      r.status = "partial";
      r.exit_code = 1;
      r.reason = text::one_line(std::to_string(all.size()) + " of " + std::to_string(all.size() + t.passed) +
                                    " tests failed (the others produced rows): " + text::join_some(all, 3),
                                600);
    } else {
      r.status = "failed";
      r.exit_code = f.child.exit_code == 0 ? 1 : f.child.exit_code;
      r.reason = text::one_line((t.collect_errors.empty() ? "" : "collection error: ") + text::join_some(all, 2), 600);
    }
  } else if (t.passed > 0 && f.compile_only) {
    r.status = "passed";
    r.exit_code = 0;
    r.reason = "compile only: " + std::to_string(t.passed) + " test(s) ran, nothing measured";
  } else if (t.passed > 0 && f.rows.total == 0) {
    r.status = "empty";
    r.exit_code = kExitEmpty;
    r.reason = std::to_string(t.passed) + " test(s) passed but wrote no result row";
  } else if (t.passed > 0) {
    r.status = "passed";
    r.exit_code = 0;
    if (!t.declined.empty()) {
      r.reason = text::one_line(
          std::to_string(t.declined.size()) + " test(s) declined by the suite: " + text::join_some(t.declined, 3), 400);
    }
  } else if (!t.declined.empty()) {
    // The suite's own words, from the first test it declined.
    r.status = "unsupported";
    r.exit_code = kExitUnsupported;
    r.reason = text::one_line(
        t.first_decline +
            (t.declined.size() > 1 ? " (and " + std::to_string(t.declined.size() - 1) + " more test(s))" : ""),
        400);
  } else {
    r.status = "no_tests";
    r.exit_code = kExitNoTests;
    const int selected = int_of(o, "selected", 0);
    const int deselected = int_of(o, "deselected", 0);
    if (t.skipped > 0) {
      r.reason = text::one_line("all " + std::to_string(t.skipped) + " test(s) skipped: " + t.first_skip, 400);
    } else if (selected == 0) {
      r.reason = deselected > 0
                     ? "no test carries the mark: " + std::to_string(deselected) + " collected, all deselected"
                     : "pytest collected no test";
    } else {
      r.reason = std::to_string(selected) + " test(s) selected but none ran";
    }
  }
  return r;
}

}  // namespace

RunStatus decide_status(const ChildFacts& f, const std::function<bool(const std::string&)>& declined) {
  if (std::optional<RunStatus> r = from_exit(f)) return *r;
  const rapidjson::Value* o = f.outcomes;
  if (o == nullptr) return without_report(f);
  if (const rapidjson::Value* ie = member(o, "internal_error"); ie != nullptr && ie->IsObject()) {
    const std::string what = string_of(ie, "message");
    if (bool_of(ie, "harness"))
      return make_status("harness_error", kExitHarnessError, text::one_line("zlcore plugin error: " + what, 300));
    return make_status("failed", f.child.exit_code == 0 ? 1 : f.child.exit_code,
                       text::one_line("pytest internal error: " + what, 300));
  }
  return from_tally(tally(o, f.rows, declined), o, f);
}

RowCounts count_rows(const std::string& results_path) {
  RowCounts counts;
  std::ifstream in(results_path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    rapidjson::Document d;
    if (!json::parse(d, line).empty() || !d.IsObject()) continue;
    ++counts.total;
    auto it = d.FindMember("test_node");
    if (it != d.MemberEnd() && it->value.IsString()) counts.by_test[it->value.GetString()]++;
  }
  return counts;
}

std::string file_tail(const std::string& path, size_t bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const std::streamoff size = in.tellg();
  const std::streamoff from = size > static_cast<std::streamoff>(bytes) ? size - static_cast<std::streamoff>(bytes) : 0;
  in.seekg(from);
  std::string out(static_cast<size_t>(size - from), '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  return out;
}

}  // namespace zl
