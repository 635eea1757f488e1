// Killing a process together with everything it started.
//
// A signal to a process group misses what left the group: a tool a child
// started in a group (or session) of its own, as zlcore's own captures are.
// Once its parent is dead such a process is re-parented and nothing links it
// to the op any more, so it lives on (tests/batch saw a preflight's
// `python -c` outlive a batch's second Ctrl-C so). These find such
// processes while the link still holds.
#pragma once

#include <sys/types.h>

#include <vector>

namespace zl {

// One process, told apart from a later one that reuses its pid.
struct TreeMember {
  pid_t pid = -1;
  pid_t pgid = -1;
  unsigned long long start_ticks = 0;
};

// Every live descendant of `root` now (not `root` itself), by /proc's parent
// links. Nothing is signalled: for a stop that lets `root` exit on its own
// and then sees to what it left (kill_survivors).
std::vector<TreeMember> descendants(pid_t root);

// SIGKILL to each of `members` that is still the same process (its start
// time unchanged), with the group it leads.
void kill_survivors(const std::vector<TreeMember>& members);

// SIGKILL to `root`, to every live descendant of it and to each process
// group one of them leads. The tree is frozen first (SIGSTOP to root and its
// group, then to each process as it is found), so nothing forks or exits
// past the walk. Never signals the caller's own group. Reaping stays with
// the caller: `root` is left a zombie.
void kill_tree(pid_t root);

}  // namespace zl
