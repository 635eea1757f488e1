// What the hostile batch tests share: a batch on the host backend over the
// fault suite (tests/fixtures/fault_suite), its rows, waiting for a file to
// say something, and killing what a killed batch left behind.
#pragma once

#include <dirent.h>
#include <signal.h>

#include <chrono>
#include <functional>
#include <random>
#include <thread>

#include "hostile_util.hpp"
#include "zlcore/batch.hpp"

namespace hostile {

// Marks every process a test starts (through the environment its children
// inherit), so the test can find and kill orphans of a batch it killed.
inline std::string new_tag() {
  std::random_device rd;
  return "hostile-" + std::to_string(rd()) + "-" + std::to_string(rd());
}

inline std::map<std::string, std::string> batch_env(const TempDir& tmp, const std::string& tag,
                                                    std::map<std::string, std::string> more = {}) {
  more["HOME"] = (tmp / "home").string();
  more["ZL_HOSTILE_TAG"] = tag;
  return more;
}

// `zlcore batch` on the host backend's one device over the fault suite.
inline std::vector<std::string> batch_args(const fs::path& out, const std::string& ops,
                                           const std::vector<std::string>& extra = {}) {
  std::vector<std::string> a{"--backend-dir",    ZL_BUILD_PLUGIN_DIR, "batch", "--backend", "host",
                             "--flaggems-dir",   ZL_FAULT_SUITE,      "--ops", ops,         "--python",
                             "/usr/bin/python3", "--no-idle-check",   "--out", out.string()};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

inline std::vector<zl::batch::OpRow> rows_of(const fs::path& out) {
  return zl::batch::read_status_csv((out / "ops_status.csv").string()).rows;
}

// Polls until `done` or the time is up; false when it never came.
inline bool wait_until(const std::function<bool()>& done, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

inline bool file_has(const fs::path& p, const std::string& text) {
  std::error_code ec;
  return fs::exists(p, ec) && slurp(p).find(text) != std::string::npos;
}

// Processes whose environment carries ZL_HOSTILE_TAG=tag.
inline std::vector<pid_t> tagged(const std::string& tag) {
  std::vector<pid_t> pids;
  const std::string want = "ZL_HOSTILE_TAG=" + tag;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string env = slurp(e.path() / "environ");
    size_t at = 0;
    while (at < env.size()) {
      const size_t end = env.find('\0', at);
      if (env.compare(at, (end == std::string::npos ? env.size() : end) - at, want) == 0) {
        pids.push_back(static_cast<pid_t>(std::stol(name)));
        break;
      }
      if (end == std::string::npos) break;
      at = end + 1;
    }
  }
  return pids;
}

inline void kill_tagged(const std::string& tag) {
  for (pid_t p : tagged(tag)) ::kill(p, SIGKILL);
}

// Kills the tagged processes when a test ends, however it ends.
class TagGuard {
 public:
  explicit TagGuard(std::string tag) : tag_(std::move(tag)) {}
  ~TagGuard() { kill_tagged(tag_); }
  const std::string& tag() const { return tag_; }

 private:
  std::string tag_;
};

}  // namespace hostile
