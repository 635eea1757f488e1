// A finished op's outcome: its exit status read together with the
// run_identity.json its run directory holds (when the run got to write one).
#pragma once

#include <string>

#include "zlcore/batch.hpp"

namespace zl::batch {

struct ExitFacts {
  bool started = false;
  std::string spawn_error;
  int exit_code = -1;               // when it exited
  int term_signal = 0;              // when a signal ended the `zlcore run` process itself
  bool killed_for_timeout = false;  // the batch's backstop killed it
  bool interrupted = false;         // the batch asked it to stop
  double seconds = 0;
  std::string started_at;  // ISO 8601, the batch's clock
  // The line a failing `zlcore run` left last in its log ("PREFLIGHT_FAILED
  // check=...", "zlcore: ..."): it says more than an exit code.
  std::string log_reason;
};

// zlcore run's exit code alone (docs/cli.md): 0 passed, 3 preflight_failed,
// 5 no_tests, 6 unsupported, 7 empty, 8 harness_error, 124 timeout, 130
// interrupted, 128+N crashed with N, anything else failed.
Status status_from_exit(int exit_code, int* signal);

OpOutcome make_outcome(const ExitFacts& facts, const std::string& run_dir);

}  // namespace zl::batch
