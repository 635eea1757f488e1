// What Linux's /proc says about other processes: the few fields of
// /proc/<pid>/stat that process bookkeeping needs, and every pid there is.
#pragma once

#include <sys/types.h>

#include <optional>
#include <vector>

namespace zl {

struct ProcStat {
  pid_t ppid = -1;                     // field 4: its parent (1, or a subreaper, once orphaned)
  pid_t pgid = -1;                     // field 5: its process group
  unsigned long long start_ticks = 0;  // field 22: when it started, in clock ticks since boot
  bool zombie = false;                 // state Z or X: exited, not yet reaped
};

// Nullopt when the process is gone (or the file does not parse).
std::optional<ProcStat> proc_stat(pid_t pid);

// The pids /proc lists now, in its order (rising, as Linux lists them).
std::vector<pid_t> proc_pids();

}  // namespace zl
