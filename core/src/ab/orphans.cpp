// Runs an earlier ab left running. A cold run is a `zlcore run` that leads
// its own process group, so a SIGKILL of ab (the OOM killer, a lost session)
// leaves it measuring on the device; a resumed A/B would time its rounds
// beside that load. Each run in flight holds a lease, batch's format
// (lease.hpp), in <out>/leases/; --resume kills what a lease still names
// before anything starts. That run's round has no round line, so it runs
// again anyway: nothing of it is worth waiting for. Warm workers need none:
// they die with ab (PR_SET_PDEATHSIG). A lease that names another directory
// (copied from another A/B) is not this A/B's to act on: its processes are
// left alone.
#include <filesystem>
#include <ostream>

#include "../batch/lease.hpp"
#include "../util/printable.hpp"
#include "runner_parts.hpp"

namespace fs = std::filesystem;

namespace zl::ab {

std::string stop_orphan_runs(const std::string& ab_dir, std::ostream& out) {
  for (const std::string& file : batch::lease_files(ab_dir)) {
    std::error_code ec;
    std::string why;
    const std::optional<batch::Lease> lease = batch::read_lease(file, &why);
    if (!lease) {
      out << printable("ignoring " + fs::path(file).filename().string() + " in leases/: " + why) << "\n";
      fs::remove(file, ec);
      continue;
    }
    if (!batch::lease_names_dir(*lease, ab_dir)) {
      out << printable(batch::foreign_lease_line(file, *lease)) << "\n";
      fs::remove(file, ec);
      continue;
    }
    std::vector<pid_t> alive = batch::live_processes(*lease);
    if (!alive.empty()) {
      out << printable(lease->run_dir + ", started " + lease->started + " by an earlier ab, is still running (pid " +
                       std::to_string(lease->pid) + "); killing it: its round runs again")
          << "\n"
          << std::flush;
      alive = batch::kill_and_wait(*lease, alive);
    }
    if (!alive.empty()) {
      // Never measure beside a run that will not die: the lease stays for later.
      return lease->run_dir + " (pid " + std::to_string(alive[0]) +
             ") is still alive after SIGKILL; nothing starts beside it on its device";
    }
    fs::remove(file, ec);
  }
  return "";
}

}  // namespace zl::ab
