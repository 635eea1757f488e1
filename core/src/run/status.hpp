// A run's status, decided from what its child left behind: the exit status,
// the outcomes plugin's per-test facts (.child/outcomes.json), the rows in
// results.jsonl and the log's last words. docs/run-directory.md, "Statuses",
// states the rules; docs/cli.md the exit code of each status.
#pragma once

#include <rapidjson/document.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "zlcore/process.hpp"

namespace zl {

// Exit codes of `zlcore run` for the statuses pytest has no code for.
constexpr int kExitUnsupported = 6;
constexpr int kExitEmpty = 7;
constexpr int kExitHarnessError = 8;
constexpr int kExitNoTests = 5;  // pytest's own "no tests collected"
constexpr int kExitTimeout = 124;

struct RowCounts {
  int total = 0;
  std::map<std::string, int> by_test;  // test node id -> rows
};

struct ChildFacts {
  ChildResult child;
  const rapidjson::Value* outcomes = nullptr;  // the plugin's JSON, or null when it wrote none
  RowCounts rows;
  std::string log_tail;            // the end of pytest.log
  bool interrupted_after = false;  // an interrupt reached zlcore after the child ended
  bool compile_only = false;       // --compile-only: tests that passed wrote no row by design
};

struct RunStatus {
  std::string status;  // passed, unsupported, partial, failed, no_tests, empty, harness_error,
                       // preflight_failed, timeout, interrupted, crashed
  int exit_code = 0;
  std::string reason;                       // one line; for passed, a note (tests the suite declined) or empty
  std::vector<std::string> failed_tests;    // "node: message"
  std::vector<std::string> declined_tests;  // node ids
  int passed_tests = 0;
  int skipped_tests = 0;
};

inline RunStatus make_status(std::string status, int exit_code, std::string reason) {
  RunStatus r;
  r.status = std::move(status);
  r.exit_code = exit_code;
  r.reason = std::move(reason);
  return r;
}

// `declined(message)` says whether a failure message is the suite refusing the
// dtype or level (FlagGemsProvider::is_decline).
RunStatus decide_status(const ChildFacts& facts, const std::function<bool(const std::string&)>& declined);

// Rows of results.jsonl per test node (lines that do not parse are skipped).
RowCounts count_rows(const std::string& results_path);
// The last `bytes` of a file (whole when shorter); empty when unreadable.
std::string file_tail(const std::string& path, size_t bytes);

}  // namespace zl
