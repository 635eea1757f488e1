// Autotune modes, in one place:
//   tune    normal tuning against the cache in use (shared or isolated);
//   record  tune, then write every winner the run used to autotune_records/
//           (the default when the run isolates its cache);
//   replay  use exactly the winners of a recorded run and tune nothing: a
//           kernel or key without a record fails that shape with replay_miss.
// A fair A/B records on side A and replays A's records on side B.
#pragma once

#include <map>
#include <string>

#include "zlcore/tuner_cache.hpp"

namespace zl {

struct AutotuneSetup {
  std::string mode;                           // tune | record | replay
  std::string records_dir;                    // replay: the source records
  std::string source_run_id;                  // replay: the recorded run's id
  std::string records_hash;                   // replay: hash of the source records
  std::map<std::string, std::string> child_env;
};

// Chooses the mode (explicit, else replay when replay_from is set, record
// when the cache is isolated, tune otherwise), validates a replay source
// against this run (refusing a Triton or kernel-source mismatch unless
// forced) and prepares the caches and the child's environment.
AutotuneSetup prepare_autotune(const std::string& requested_mode, const std::string& replay_from, bool force,
                               const CacheDirs& dirs, const std::string& run_dir);

struct AutotuneResult {
  int records_written = 0;
  std::string records_hash;  // record: hash of what was written
  int tuning_benchmarks = -1;  // -1: unknown
  int replay_misses = 0;
};

// After the child: record mode writes autotune_records/; every mode counts.
AutotuneResult finish_autotune(const AutotuneSetup& setup, const CacheDirs& dirs, const CacheSnapshot& before,
                               const std::string& run_dir);

}  // namespace zl
