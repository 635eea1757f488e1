// One zlcore process per output directory at a time: an exclusive flock(2)
// on a file in it. The kernel drops the lock when its process ends, SIGKILL
// included, so an owner that was killed never leaves the directory locked.
#pragma once

#include <string>

namespace zl {

class DirLock {
 public:
  DirLock() = default;
  ~DirLock();
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;
  // Locks the file at `path` (created 0644 when missing; a symbolic link is
  // refused) and holds it until destruction. False when another process
  // holds it; throws WriteError naming the file when it cannot be opened.
  bool acquire(const std::string& path);

 private:
  int fd_ = -1;
};

}  // namespace zl
