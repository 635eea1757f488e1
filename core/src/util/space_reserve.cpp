#include "space_reserve.hpp"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>

namespace zl {

SpaceReserve::SpaceReserve(std::string path, long bytes) : path_(std::move(path)) {
  // O_EXCL | O_NOFOLLOW: a name planted in a shared directory is not ours to
  // fill; a reserve a killed process left behind is taken over.
  ::unlink(path_.c_str());
  const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;
  // posix_fallocate gives real blocks where the file system can; elsewhere it
  // writes them, which is just as good.
  held_ = ::posix_fallocate(fd, 0, bytes) == 0 && ::fsync(fd) == 0;
  ::close(fd);
  if (!held_) ::unlink(path_.c_str());
}

bool SpaceReserve::release() {
  if (!held_) return false;
  held_ = false;
  return ::unlink(path_.c_str()) == 0;
}

bool little_room_left(const std::string& dir) {
  struct statvfs st {};
  if (statvfs(dir.c_str(), &st) != 0) return false;
  const unsigned long long blocks = geteuid() == 0 ? st.f_bfree : st.f_bavail;
  return blocks * st.f_frsize < 64 * 1024;
}

}  // namespace zl
