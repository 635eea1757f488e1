// The posix_spawn attributes every child of zlcore gets: default signal
// dispositions and an empty signal mask, whatever zlcore set for itself (it
// ignores SIGPIPE and counts SIGINT/SIGTERM; a child inheriting that would not
// die of a closed pipe or a Ctrl-C), and optionally a process group of its own.
#pragma once

#include <spawn.h>

namespace zl {

class SpawnAttr {
 public:
  explicit SpawnAttr(bool new_group);
  ~SpawnAttr();
  SpawnAttr(const SpawnAttr&) = delete;
  SpawnAttr& operator=(const SpawnAttr&) = delete;
  const posix_spawnattr_t* get() const { return &attr_; }

 private:
  posix_spawnattr_t attr_;
};

}  // namespace zl
