// Autotune modes, in one place (docs/autotune.md):
//   tune    normal tuning against the cache in use (shared or isolated);
//   record  tune, then write every winner the run used to autotune_records/
//           (the default when the run isolates its cache);
//   replay  use exactly the winners of a recorded run and tune nothing: a
//           kernel or key without a record fails that shape with replay_miss.
//           Replay always runs on an isolated cache, rebuilt from the records.
// A fair A/B records on side A and replays A's records on side B.
//
// Record layout (autotune_records/):
//   libtuner/<db file stem>/<table>.json   LibTuner rows, harvested by the core
//                                          from FLAGGEMS_CACHE_DIR's SQLite DBs
//   triton_autotune/<module.kernel>.json   plain @triton.autotune winners,
//                                          written by the Python plugin
//   manifest.json                          run id, Triton version, counts, the
//                                          sha256 of every file and records_hash
#pragma once

#include <map>
#include <string>
#include <vector>

#include "zlcore/tuner_cache.hpp"

namespace zl {

struct AutotuneSetup {
  std::string mode;           // tune | record | replay
  std::string run_id;         // this run's id (set by run_operator once known)
  std::string records_dir;    // replay: the source records
  std::string source_run_id;  // replay: the recorded run's id
  std::string records_hash;   // replay: hash of the source records as found
  std::string manifest_hash;  // replay: the hash the source manifest states
  std::string source_triton;  // replay: the Triton version the records were made with
  bool force = false;
  bool in_cache = false;   // replay: into the cache in use, not an isolated one
  int replay_rows = 0;     // replay: LibTuner rows rebuilt into the cache
  int replay_kernels = 0;  // replay: plain-autotune kernels in the records
  std::map<std::string, std::string> child_env;
};

// Chooses the mode (explicit, else replay when replay_from is set, record
// when the cache is isolated, tune otherwise) and prepares the child's
// environment. Replay reads the source manifest, fills source_run_id and
// records_hash, and rebuilds the LibTuner DBs from the records into the
// run's (isolated) FLAGGEMS_CACHE_DIR; the Python plugin refuses a Triton
// version mismatch at session start and a kernel source mismatch per kernel,
// unless forced. Throws UsageError for a bad mode or a source without a
// manifest, PreflightError (check replay_from) for a record that is not valid
// JSON or names a table, column or type LibTuner never writes. in_cache: the
// replay goes into the cache in use (not isolated; the caller owns it), and
// a recorded row replaces the row of the same key that is already there.
AutotuneSetup prepare_autotune(const std::string& requested_mode, const std::string& replay_from, bool force,
                               const CacheDirs& dirs, const std::string& run_dir, bool in_cache = false);

// What a Python process must find in its environment before it imports the
// suite, because Triton reads it when each @triton.autotune is decorated,
// not when the kernel runs: TRITON_CACHE_AUTOTUNING=1 (winners kept in
// TRITON_CACHE_DIR), unless zlcore's own environment sets it. A cold child
// gets it through prepare_autotune; a warm worker, which imports flag_gems
// once and serves many ops, must be started with it.
std::map<std::string, std::string> autotune_import_env();

// What a compile-only process (`zlcore run --compile-only`, a batch's
// compile-ahead lanes) must find before its imports: ZL_COMPILE_ONLY=1, and
// every tuner store it could write a winner to kept out of the shared
// caches (LibTuner's database in memory, its older disk cache off, Triton's
// autotune disk cache off).
std::map<std::string, std::string> compile_only_env();

// True when this request will replay: run_operator isolates the cache for it.
bool autotune_replays(const std::string& requested_mode, const std::string& replay_from);

struct AutotuneResult {
  int records_written = 0;                        // record: entries written (LibTuner rows + plain winners)
  int record_files = 0;                           // record: files under autotune_records/ (manifest excluded)
  std::string records_hash;                       // record: hash of what was written
  int tuning_benchmarks = -1;                     // configs benchmarked; -1: nobody counted
  int replay_misses = 0;                          // shapes that failed with replay_miss
  int replay_refused = 0;                         // shapes refused (kernel source changed)
  int inherited_winners = -1;                     // LibTuner winners found in the DB before the run; -1: unknown
  int used_winners = -1;                          // distinct (table, key) lookups the run made; -1: unknown
  std::vector<std::string> replay_miss_examples;  // the first few replay_miss messages
  // The winners the run used, in every mode (LibTuner rows read from the
  // cache, plain-autotune winners the plugin saw): a digest per kernel and
  // one over all, which compare matches. Empty hash: unknown (no plugin report).
  struct Kernel {
    std::string kind;  // libtuner | triton
    int entries = 0;
    std::string sha256;
  };
  std::map<std::string, Kernel> winners;
  std::string winners_hash;
};

// After the child, before an isolated cache is dropped: record mode writes
// autotune_records/ (LibTuner rows the run used + the plugin's plain-autotune
// files + manifest.json); every mode counts tuning benchmarks and misses from
// the child's side files (.child/autotune.json, .child/suite_tuner.json) and
// results.jsonl.
AutotuneResult finish_autotune(const AutotuneSetup& setup, const CacheDirs& dirs, const CacheSnapshot& before,
                               const std::string& run_dir);

// sha256 over "<sha256>  <relative path>\n" lines of every file under dir
// except manifest.json, sorted by path: `sha256sum` of the sorted list
// reproduces it. Fills files with relpath -> sha256.
std::string records_hash(const std::string& records_dir, std::map<std::string, std::string>* files = nullptr);

}  // namespace zl
