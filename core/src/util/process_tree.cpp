#include "process_tree.hpp"

#include <signal.h>
#include <unistd.h>

#include <optional>
#include <set>

#include "proc_stat.hpp"

namespace zl {
namespace {

// A walk that still finds new processes after this many passes is racing a
// fork bomb; what it found by then is killed all the same.
constexpr int kMaxPasses = 8;

void signal_member(const TreeMember& m, int sig) {
  // A process that leads a group takes its group along; the caller's own
  // group is never one of them.
  if (m.pgid == m.pid && m.pgid != ::getpgrp()) ::kill(-m.pgid, sig);
  ::kill(m.pid, sig);
}

std::optional<TreeMember> member(pid_t pid) {
  const auto st = proc_stat(pid);
  if (!st || st->zombie) return std::nullopt;
  return TreeMember{pid, st->pgid, st->start_ticks};
}

// The walk behind both descendants() and kill_tree(): `on_found` runs on
// each process as it joins the tree, before its own children are looked for.
template <class OnFound>
std::vector<TreeMember> walk(pid_t root, OnFound on_found) {
  std::set<pid_t> tree = {root};
  std::vector<TreeMember> found;
  for (int pass = 0; pass < kMaxPasses; ++pass) {
    bool grew = false;
    // /proc lists parents before the children they started since, so one
    // pass mostly finds the whole tree; the next one confirms it.
    for (pid_t pid : proc_pids()) {
      if (tree.count(pid) != 0) continue;
      const auto st = proc_stat(pid);
      if (!st || st->zombie || tree.count(st->ppid) == 0) continue;
      const TreeMember m{pid, st->pgid, st->start_ticks};
      on_found(m);
      tree.insert(pid);
      found.push_back(m);
      grew = true;
    }
    if (!grew) break;
  }
  return found;
}

}  // namespace

std::vector<TreeMember> descendants(pid_t root) {
  if (root <= 0) return {};
  return walk(root, [](const TreeMember&) {});
}

void kill_survivors(const std::vector<TreeMember>& members) {
  for (const TreeMember& m : members) {
    const auto now = member(m.pid);
    if (now && now->start_ticks == m.start_ticks) signal_member(m, SIGKILL);
  }
}

void kill_tree(pid_t root) {
  if (root <= 0 || root == ::getpid()) return;
  const TreeMember top = member(root).value_or(TreeMember{root, -1, 0});
  signal_member(top, SIGSTOP);
  const std::vector<TreeMember> below = walk(root, [](const TreeMember& m) { signal_member(m, SIGSTOP); });
  for (const TreeMember& m : below) signal_member(m, SIGKILL);
  signal_member(top, SIGKILL);
}

}  // namespace zl
