#include "dir_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

#include "zlcore/atomic_file.hpp"

namespace zl {

DirLock::~DirLock() {
  if (fd_ >= 0) ::close(fd_);
}

bool DirLock::acquire(const std::string& path) {
  if (fd_ < 0) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd_ < 0) throw WriteError("cannot open " + path, errno);
  }
  return ::flock(fd_, LOCK_EX | LOCK_NB) == 0;
}

}  // namespace zl
