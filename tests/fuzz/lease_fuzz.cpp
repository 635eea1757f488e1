// A lease a killed batch or A/B left in leases/ (docs/batch.md, "Ops still
// running after a kill"), as --resume reads it before deciding what to wait
// for or kill. Only the deciding is exercised: whether it names this
// directory and which live processes it means; nothing is signalled.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <rapidjson/document.h>

#include "batch/lease.hpp"
#include "fuzz_util.hpp"
#include "util/json_read.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const zl_fuzz::fs::path dir = zl_fuzz::fresh("batch");
  const zl_fuzz::fs::path file = dir / "leases" / "op.json";
  zl_fuzz::put(file, zl_fuzz::text(data, size));
  std::string why;
  const std::optional<zl::batch::Lease> lease = zl::batch::read_lease(file.string(), &why);
  if (!lease) {
    if (why.empty()) std::abort();  // a refusal says why
    return 0;
  }
  // Processes are named by pid_t: the pid read is the number written (not
  // one it wraps to), and never init, 0 (the caller's process group) or -1
  // (every process the caller may signal).
  rapidjson::Document d;
  if (lease->pid <= 1 || lease->pgid <= 1 || !zl::json::parse(d, zl_fuzz::text(data, size)).empty() || !d.IsObject() ||
      !d["pid"].IsInt64() || !d["pgid"].IsInt64() || d["pid"].GetInt64() != lease->pid ||
      d["pgid"].GetInt64() != lease->pgid) {
    std::abort();
  }
  (void)zl::batch::lease_names_dir(*lease, dir.string());
  (void)zl::batch::foreign_lease_line(file.string(), *lease);
  // Reads /proc only. Its answer must be processes of the lease's group.
  for (pid_t p : zl::batch::live_processes(*lease)) {
    if (p <= 1) std::abort();
  }
  return 0;
}
