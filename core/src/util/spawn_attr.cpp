#include "spawn_attr.hpp"

#include <signal.h>

namespace zl {

SpawnAttr::SpawnAttr(bool new_group) {
  posix_spawnattr_init(&attr_);
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr_, &all);
  posix_spawnattr_setsigmask(&attr_, &none);
  short flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
  if (new_group) {
    posix_spawnattr_setpgroup(&attr_, 0);
    flags |= POSIX_SPAWN_SETPGROUP;
  }
  posix_spawnattr_setflags(&attr_, flags);
}

SpawnAttr::~SpawnAttr() { posix_spawnattr_destroy(&attr_); }

}  // namespace zl
