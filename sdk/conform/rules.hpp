// The conformance kit's rules: each is one statement of docs/backend-abi.md
// (or of the header's own list) checked against one backend file. A rule
// runs in a child process of its own (rule_child.cpp), so a backend that
// crashes or hangs fails that rule and the others still run.
#pragma once

#include <zl/backend.h>

#include <cstddef>
#include <string>
#include <vector>

#include "table_read.hpp"

namespace zl::conform {

struct Outcome {
  enum Kind { kPass, kFail, kSkip } kind = kPass;
  std::string why;  // for kFail and kSkip: one line
};
inline Outcome pass() { return {}; }
inline Outcome fail(std::string why) { return {Outcome::kFail, std::move(why)}; }
inline Outcome skip(std::string why) { return {Outcome::kSkip, std::move(why)}; }

// What a rule gets in its child: a backend the loader's own checks
// (open_backend, negotiate_abi) accepted, and what the child saw of it.
struct Subject {
  const zl_backend_api* api = nullptr;
  loader::TableRead table;
  std::string pin_var;             // the first visibility variable, "" for none
  size_t threads_before_load = 0;  // this process's threads before dlopen
  size_t threads_after_entry = 0;  // ... after the entry call and the table read
  int stdout_capture = -1;         // where fd 1 pointed while the backend ran
  // Tells the parent which call into the backend starts next
  // (open_backend.hpp's stages), so that a crash is named by it.
  void (*stage)(const char*) = nullptr;
};

using RuleFn = Outcome (*)(Subject&);

struct Rule {
  const char* id;
  const char* what;  // the rule, as docs/backend-abi.md states it
  RuleFn run;        // nullptr: run by the parent (loads, exports)
  // The rule calls initialize and shutdown itself; otherwise the child calls
  // them around it as the loader does.
  bool own_lifecycle = false;
};

// Every rule, in the order they are printed.
const std::vector<Rule>& rules();
const Rule* find_rule(const std::string& id);

// Table rules (rules_table.cpp).
Outcome table_size(Subject& s);
Outcome entries(Subject& s);
Outcome strings(Subject& s);
Outcome extensions(Subject& s);
Outcome lifecycle(Subject& s);
// Device rules (rules_devices.cpp).
Outcome devices(Subject& s);
Outcome enumerate_idempotent(Subject& s);
Outcome enumerate_entries_agree(Subject& s);
Outcome visibility_ignored(Subject& s);
Outcome device_state(Subject& s);
// Process rules (rules_process.cpp).
Outcome stdout_silent(Subject& s);
Outcome no_threads_on_load(Subject& s);

// Parent-side: the file's dynamic symbols (elf_exports.cpp). "" when the
// only one defined is the entry point, else why not.
std::string exports_problem(const std::string& file);

// `zlcore-conform __conform-rule RULE FILE`: the child side.
int rule_child_main(const std::string& rule, const std::string& file);

}  // namespace zl::conform
