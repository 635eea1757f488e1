#include "zltest/tagged.hpp"

#include <signal.h>

#include <filesystem>
#include <random>

#include "zltest/files.hpp"

namespace zltest {

namespace fs = std::filesystem;

std::string new_tag() {
  std::random_device rd;
  return "zltest-" + std::to_string(rd()) + "-" + std::to_string(rd());
}

std::vector<pid_t> tagged(const std::string& tag) {
  std::vector<pid_t> pids;
  const std::string want = std::string(kTagVariable) + "=" + tag;
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

void kill_tagged(const std::string& tag) {
  for (pid_t p : tagged(tag)) ::kill(p, SIGKILL);
}

}  // namespace zltest
