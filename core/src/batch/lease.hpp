// Leases: how a batch knows, after it was killed, which of its ops are still
// running. Each op in flight has <batch>/leases/<op dir>.json, written
// atomically when its `zlcore run` starts (again if a rerun replaces that
// process) and removed once its row is written. A lease names the process
// and its group, the process's start time (so a reused pid is not mistaken
// for it) and the boot; --resume asks each lease left behind whether its
// run is still alive, and waits for it or kills it (docs/batch.md, "Ops still
// running after a kill").
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace zl::batch {

struct Lease {
  std::string op;         // the op's name
  std::string run_dir;    // relative to the batch directory
  std::string batch_dir;  // absolute: the orphan's own argv and environment name it
  // Which pass started it: "run" (the op's row), "warm-up" or "compile"
  // (compiling ahead). Only a run's result is adopted after a kill; for
  // zlcore before "pass" existed, "warmup": true says "not a run".
  std::string pass = "run";
  int device_index = -1;
  std::string device_id;
  pid_t pid = -1;                      // the op's `zlcore run`
  pid_t pgid = -1;                     // its process group (the cold executor makes it lead one)
  unsigned long long start_ticks = 0;  // /proc/<pid>/stat field 22
  std::string boot_id;                 // /proc/sys/kernel/random/boot_id
  std::string host;
  std::string started;  // ISO 8601, for people
};

std::string lease_path(const std::string& batch_dir, const std::string& op_dir_name);
// Fills pid, pgid, start time, boot and host for a process just started.
// False when the process is already gone.
bool describe_process(pid_t pid, Lease* lease);
void write_lease(const std::string& path, const Lease& lease);
// Nullopt (with `why`) for a file that is not a lease.
std::optional<Lease> read_lease(const std::string& path, std::string* why);
// "its run", "its warm-up" or "its compile-ahead run": what a resume waits for.
std::string lease_words(const Lease& lease);
std::vector<std::string> lease_files(const std::string& batch_dir);

// Whether the lease is one of `own_dir`'s: its batch_dir is that directory or
// one inside it (ab's warm sides run with <ab dir>/sides/<side>). A lease
// copied from another batch, or left by one the directory was renamed from,
// names processes that are not this directory's to wait for or kill.
bool lease_names_dir(const Lease& lease, const std::string& own_dir);
// The one line a resume says for a lease of another directory, whose
// processes it leaves alone.
std::string foreign_lease_line(const std::string& lease_file, const Lease& lease);

// The processes still alive that belong to the lease's run: its `zlcore run`
// (same pid and start time) and whatever else is left in its process group
// that carries this batch in its argv or environment. Empty when the run is
// over, when the lease is from another boot or host, or when a process with
// the lease's pid or group id is not the one the lease describes (another
// start time: the id was reused).
std::vector<pid_t> live_processes(const Lease& lease);
// SIGKILL to those processes (to the group when its leader is among them).
void kill_processes(const Lease& lease, const std::vector<pid_t>& pids);
// kill_processes, then up to 10 s for them to go; returns the lease's
// processes still alive after that (one in uninterruptible sleep).
std::vector<pid_t> kill_and_wait(const Lease& lease, const std::vector<pid_t>& pids);

}  // namespace zl::batch
