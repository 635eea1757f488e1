// Runs a vendor command-line tool with an argv (never a shell) and captures
// what it printed, so every backend parses text the same way and the tests
// can point a backend at a recorded-output script instead of the real tool.
#pragma once

#include <string>
#include <vector>

namespace zl_kit {

struct ToolResult {
  bool started = false;  // false: not found or not executable
  int exit_code = -1;    // valid when started and not signalled
  int term_signal = 0;   // non-zero when the tool died of a signal
  bool timed_out = false;
  std::string out;          // stdout
  std::string err;          // stderr
  std::string spawn_error;  // why it did not start
};

// True when the tool started, was not killed, and exited 0.
inline bool ran_ok(const ToolResult& r) { return r.started && !r.timed_out && r.term_signal == 0 && r.exit_code == 0; }

// argv[0] is resolved on PATH unless it contains a '/'. The tool is killed
// after timeout_ms.
ToolResult run_tool(const std::vector<std::string>& argv, int timeout_ms = 10000);

// The value of an environment variable, or fallback when unset or empty.
std::string env_or(const char* name, const std::string& fallback);

// A boolean switch: 1/0, true/false, yes/no, on/off in any case, as zlcore
// reads its own (zl_kit_bool_word, zl/backend_kit.h); unset, empty or another word is false.
bool env_flag(const char* name);

// One line describing a failed tool run: "nvidia-smi exited 6: No devices were found".
std::string describe_failure(const std::string& tool, const ToolResult& r);

}  // namespace zl_kit
