// Typed errors and the exit codes they map to (docs/cli.md, "Exit codes").
#pragma once

#include <stdexcept>
#include <string>

namespace zl {

// Process exit codes. pytest's own codes (1, 2, 4, 5) pass through from a run;
// 2 is also a bad zlcore command line; 3 is ours alone.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailed = 1,
  kExitUsage = 2,
  kExitPreflight = 3,
  kExitCaliber = 3,          // `compare --strict`: the sides were not measured the same way
  kExitNothingCompared = 5,  // compare, ab: no row in common (pytest's 5 is "no tests collected")
  kExitInterrupted = 130,
};

// Bad input on the command line or in the environment: one line naming the
// input and what is allowed; exit 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A preflight check failed before any child started: exit 3, printed as
// `PREFLIGHT_FAILED check=<name> <detail>`.
class PreflightError : public std::runtime_error {
 public:
  PreflightError(std::string check, const std::string& detail) : std::runtime_error(detail), check_(std::move(check)) {}
  const std::string& check() const { return check_; }

 private:
  std::string check_;
};

}  // namespace zl
