#include "status.hpp"

#include <cstring>
#include <fstream>
#include <sstream>

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

std::string one_line(std::string s, size_t limit = 300) {
  for (char& c : s) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  if (s.size() > limit) s = s.substr(0, limit - 3) + "...";
  return s;
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

std::string list_text(const std::vector<std::string>& items, size_t max_items) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < max_items; ++i) out += (i ? "; " : "") + items[i];
  if (items.size() > max_items) out += "; and " + std::to_string(items.size() - max_items) + " more";
  return out;
}

}  // namespace

RunStatus decide_status(const ChildFacts& f, const std::function<bool(const std::string&)>& declined) {
  RunStatus r;
  const ChildResult& c = f.child;
  if (!c.started) return make_status("failed", 1, "could not start pytest: " + c.spawn_error);
  if (c.timed_out) return make_status("timeout", kExitTimeout, "ran past --timeout; its process group was killed");
  if (c.interrupted) return make_status("interrupted", 130, "interrupted");
  if (c.term_signal != 0) return make_status("crashed", 128 + c.term_signal, "pytest died of " + signal_text(c.term_signal));
  if (const std::string pf = preflight_line(f.log_tail); !pf.empty() && c.exit_code != 0) {
    return make_status("preflight_failed", 3, one_line(pf));
  }

  const rapidjson::Value* o = f.outcomes;
  if (o == nullptr) {
    // Our plugins never reported: pytest stopped before them (a usage error,
    // an import error in a conftest), or the interpreter is not pytest at all.
    if (c.exit_code == 0) {
      return make_status("empty", kExitEmpty,
              f.rows.total == 0 ? "exit 0 but no test ran under zlcore's plugins and no row was written"
                                : "exit 0 but zlcore's outcome plugin did not report");
    }
    const std::string why = last_error_line(f.log_tail);
    return make_status("failed", c.exit_code, one_line("pytest exit " + std::to_string(c.exit_code) + (why.empty() ? "" : ": " + why)));
  }

  if (const rapidjson::Value* ie = member(o, "internal_error"); ie != nullptr && ie->IsObject()) {
    const std::string what = string_of(ie, "message");
    if (bool_of(ie, "harness")) return make_status("harness_error", kExitHarnessError, one_line("zlcore plugin error: " + what));
    return make_status("failed", c.exit_code == 0 ? 1 : c.exit_code, one_line("pytest internal error: " + what));
  }

  std::vector<std::string> collect_errors;
  if (const rapidjson::Value* ce = member(o, "collect_errors"); ce != nullptr && ce->IsArray()) {
    for (const auto& e : ce->GetArray()) collect_errors.push_back(string_of(&e, "node") + ": " + string_of(&e, "message"));
  }

  int passed_with_rows = 0;
  std::vector<std::string> harness, real_failures, skip_reasons;
  if (const rapidjson::Value* tests = member(o, "tests"); tests != nullptr && tests->IsArray()) {
    for (const auto& t : tests->GetArray()) {
      const std::string node = string_of(&t, "node");
      const std::string outcome = string_of(&t, "outcome");
      const std::string message = string_of(&t, "message");
      auto rows = f.rows.by_test.find(node);
      const int n_rows = rows == f.rows.by_test.end() ? 0 : rows->second;
      if (outcome == "passed") {
        ++r.passed_tests;
        if (n_rows > 0) ++passed_with_rows;
      } else if (outcome == "skipped") {
        ++r.skipped_tests;
        if (skip_reasons.empty()) skip_reasons.push_back(message);
      } else if (outcome == "failed") {
        if (bool_of(&t, "harness")) {
          harness.push_back(node + ": " + message);
        } else if (declined(message)) {
          r.declined_tests.push_back(node);
        } else {
          real_failures.push_back(node + ": " + message);
        }
      }
    }
  }
  r.failed_tests = harness;
  r.failed_tests.insert(r.failed_tests.end(), real_failures.begin(), real_failures.end());
  const int selected = int_of(o, "selected", 0);

  if (!harness.empty()) {
    r.status = "harness_error";
    r.exit_code = kExitHarnessError;
    r.reason = one_line("zlcore's plugins raised in " + list_text(harness, 1), 400);
    return r;
  }
  if (!real_failures.empty() || !collect_errors.empty()) {
    std::vector<std::string> all = collect_errors;
    all.insert(all.end(), real_failures.begin(), real_failures.end());
    const size_t failing = all.size();
    if (passed_with_rows > 0) {
      r.status = "partial";
      r.exit_code = 1;
      r.reason = one_line(std::to_string(failing) + " of " + std::to_string(failing + r.passed_tests) +
                              " tests failed (the others produced rows): " + list_text(all, 3),
                          600);
    } else {
      r.status = "failed";
      r.exit_code = c.exit_code == 0 ? 1 : c.exit_code;
      r.reason = one_line((collect_errors.empty() ? "" : "collection error: ") + list_text(all, 2), 600);
    }
    return r;
  }
  const std::string declined_note =
      r.declined_tests.empty() ? ""
                               : std::to_string(r.declined_tests.size()) + " test(s) declined by the suite: " +
                                     list_text(r.declined_tests, 3);
  if (r.passed_tests > 0) {
    if (f.rows.total == 0) {
      r.status = "empty";
      r.exit_code = kExitEmpty;
      r.reason = std::to_string(r.passed_tests) + " test(s) passed but wrote no result row";
      return r;
    }
    r.status = "passed";
    r.exit_code = 0;
    r.reason = one_line(declined_note, 400);
    return r;
  }
  if (!r.declined_tests.empty()) {
    r.status = "unsupported";
    r.exit_code = kExitUnsupported;
    // The suite's own words, from the first test it declined.
    std::string message;
    if (const rapidjson::Value* tests = member(o, "tests"); tests != nullptr && tests->IsArray()) {
      for (const auto& t : tests->GetArray()) {
        if (string_of(&t, "node") == r.declined_tests.front()) message = string_of(&t, "message");
      }
    }
    r.reason = one_line(message + (r.declined_tests.size() > 1
                                       ? " (and " + std::to_string(r.declined_tests.size() - 1) + " more test(s))"
                                       : ""),
                        400);
    return r;
  }
  r.status = "no_tests";
  r.exit_code = kExitNoTests;
  if (r.skipped_tests > 0) {
    r.reason = one_line("all " + std::to_string(r.skipped_tests) + " test(s) skipped: " + skip_reasons.front(), 400);
  } else if (selected == 0) {
    const int deselected = int_of(o, "deselected", 0);
    r.reason = deselected > 0 ? "no test carries the mark: " + std::to_string(deselected) + " collected, all deselected"
                              : "pytest collected no test";
  } else {
    r.reason = std::to_string(selected) + " test(s) selected but none ran";
  }
  return r;
}

RowCounts count_rows(const std::string& results_path) {
  RowCounts counts;
  std::ifstream in(results_path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    rapidjson::Document d;
    d.Parse<rapidjson::kParseIterativeFlag>(line.c_str(), line.size());
    if (d.HasParseError() || !d.IsObject()) continue;
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
