// Where a run's seconds went: the parts every run records in its identity
// (`time.*`), every batch row in ops_status.csv (`t_*`) and every batch sums
// at its end. docs/run-directory.md, "Where the time goes", defines each part.
#pragma once

#include <string>
#include <vector>

namespace zl {

struct TimeBreakdown {
  double zlcore = 0;          // zlcore run's own work before and after its child
  double start = 0;           // the child's life its session clock did not see: interpreter and pytest start, exit
  double imports = 0;         // the suite's conftest and what it imports
  double collection = 0;      // collecting the tests
  double compiling = 0;       // kernel compilation (JIT, code generation, cache loads)
  double autotuning = 0;      // configurations benchmarked by autotuners
  double suite = 0;           // the suite's own per-shape work: inputs, reference calls
  double measuring_base = 0;  // the timer on the reference side
  double measuring_gems = 0;  // the timer on the measured side
  double teardown = 0;        // the plugins' reports at the session's end
  bool known = false;         // false: the run recorded no breakdown (an older zlcore, a run that never started)

  double total() const;
  TimeBreakdown& operator+=(const TimeBreakdown& other);
};

struct TimePart {
  const char* name;  // identity key `time.<name>_s`, ops_status.csv column `t_<name>`
  double TimeBreakdown::*field;
  const char* what;
};
// Every part, in the order a session passes through them.
const std::vector<TimePart>& time_parts();

// The table a batch prints at its end: each part summed over `ops` runs, its
// share, and its mean per op; `wall` is the batch's own wall time.
std::string time_summary(const TimeBreakdown& sum, size_t ops, double wall);

}  // namespace zl
