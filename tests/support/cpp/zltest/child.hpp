// A program run as a user would run it, with a time limit, so a test that
// would hang fails instead; its output kept in files for the test to read.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace zltest {

namespace fs = std::filesystem;

struct Ran {
  int exit_code = -1;   // when it exited
  int term_signal = 0;  // when a signal ended it
  bool timed_out = false;
  double seconds = 0;
  std::string out, err;
};

// A command started and not yet waited for (one to interrupt or kill).
struct Started {
  pid_t pid = -1;
  fs::path out, err;
  std::chrono::steady_clock::time_point at;
  std::string spawn_error;
};

// Starts argv (no shell) with `env` added to ours, in a process group of its
// own, stdin from /dev/null, stdout and stderr to files in `scratch`.
Started start(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
              const fs::path& scratch, const fs::path& cwd = {});

// Waits for a started command; kills its group after timeout_s (counted from
// its start), and whatever it left in its group either way.
Ran finish(const Started& s, double timeout_s);

// start, then finish.
Ran run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env, double timeout_s,
        const fs::path& scratch);

// How it ended and what it printed, for a failed expectation's message.
std::string describe(const Ran& r);

// Polls until `done` or the time is up; false when it never came.
bool wait_until(const std::function<bool()>& done, double seconds);

}  // namespace zltest
