#include "socket_dir.hpp"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string_view>

namespace fs = std::filesystem;

namespace zl::batch {
namespace {

constexpr std::string_view kPrefix = "zlw-";

// The pid in "zlw-<pid>-XXXXXX", or -1 for any other name.
pid_t owner_pid(const std::string& name) {
  if (name.compare(0, kPrefix.size(), kPrefix) != 0) return -1;
  const size_t dash = name.find('-', kPrefix.size());
  if (dash == std::string::npos || dash == kPrefix.size() || dash > kPrefix.size() + 9 || name.size() != dash + 7) {
    return -1;
  }
  pid_t pid = 0;
  for (size_t i = kPrefix.size(); i < dash; ++i) {
    if (name[i] < '0' || name[i] > '9') return -1;
    pid = pid * 10 + (name[i] - '0');
  }
  return pid > 0 ? pid : -1;
}

}  // namespace

int remove_abandoned_socket_dirs(const std::string& parent) {
  int removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const pid_t pid = owner_pid(name);
    if (pid <= 0 || pid == ::getpid()) continue;
    struct stat st {};
    // lstat: a link named like ours is somebody's plant, not our directory.
    if (::lstat(it->path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) continue;
    // A live process, or one we may not signal, may still be using it.
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;
    std::error_code rm;
    if (fs::remove_all(it->path(), rm) > 0 && !rm) ++removed;
  }
  return removed;
}

std::string make_socket_dir(const std::string& parent) {
  remove_abandoned_socket_dirs(parent);
  std::string tmpl = parent + "/" + std::string(kPrefix) + std::to_string(::getpid()) + "-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) return "";
  return tmpl;
}

}  // namespace zl::batch
