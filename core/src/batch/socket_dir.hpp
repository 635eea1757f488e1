// Where a batch's warm workers listen: a private directory under /tmp (a Unix
// socket's path is limited to 108 bytes; a batch directory's is not). A
// batch killed by SIGKILL or a lost node cannot remove its own, and its
// workers die with it, so the next batch on the machine removes it instead.
//
// Whether a directory's batch is gone is decided by a lock, not a pid: each
// holds <dir>/owner locked (flock) for its whole life, and the kernel drops
// the lock when the process dies. A pid would mislead where /tmp is shared
// between pid namespaces (containers) or hosts; a lock does not.
#pragma once

#include <string>

namespace zl::batch {

// A socket directory, 0700, held for as long as this object lives; removed
// by its destructor.
class SocketDir {
 public:
  // Removes what killed batches left in `parent`, then makes this one. On
  // failure path() is "" (the batch then runs its ops cold).
  explicit SocketDir(const std::string& parent = "/tmp");
  ~SocketDir();
  SocketDir(const SocketDir&) = delete;
  SocketDir& operator=(const SocketDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int owner_fd_ = -1;
};

// The sweep alone: removes every zlw-* directory in `parent` owned by this
// user whose owner lock nobody holds; the number removed. A directory
// without an owner file (a zlcore before the lock, or one being made) and
// anything that is not a directory of ours are left alone.
int remove_abandoned_socket_dirs(const std::string& parent);

}  // namespace zl::batch
