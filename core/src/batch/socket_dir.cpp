#include "socket_dir.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

namespace fs = std::filesystem;

namespace zl::batch {
namespace {

constexpr const char* kPrefix = "zlw-";
constexpr const char* kOwner = "owner";

}  // namespace

int remove_abandoned_socket_dirs(const std::string& parent) {
  int removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename().string().rfind(kPrefix, 0) != 0) continue;
    // O_NOFOLLOW: a link named like ours is somebody's plant, not our directory.
    const int dir = ::open(it->path().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir < 0) continue;
    struct stat st {};
    const int owner = ::fstat(dir, &st) == 0 && st.st_uid == ::geteuid()
                          ? ::openat(dir, kOwner, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
                          : -1;
    ::close(dir);
    if (owner < 0) continue;
    // Held: its batch is alive. Taken: it is gone, and while we hold the
    // lock no batch can be using the directory.
    if (::flock(owner, LOCK_EX | LOCK_NB) == 0) {
      std::error_code rm;
      if (fs::remove_all(it->path(), rm) > 0 && !rm) ++removed;
    }
    ::close(owner);
  }
  return removed;
}

SocketDir::SocketDir(const std::string& parent) {
  remove_abandoned_socket_dirs(parent);
  std::string dir = parent + "/" + kPrefix + "XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) return;
  // Locked under another name and then renamed, so that a sweep never finds
  // an owner file before its lock is held.
  const std::string locking = dir + "/.owner", owner = dir + "/" + kOwner;
  const int fd = ::open(locking.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 || ::flock(fd, LOCK_EX) != 0 || std::rename(locking.c_str(), owner.c_str()) != 0) {
    if (fd >= 0) ::close(fd);
    std::error_code ec;
    fs::remove_all(dir, ec);
    return;
  }
  path_ = dir;
  owner_fd_ = fd;
}

SocketDir::~SocketDir() {
  std::error_code ec;
  if (!path_.empty()) fs::remove_all(path_, ec);
  if (owner_fd_ >= 0) ::close(owner_fd_);
}

}  // namespace zl::batch
