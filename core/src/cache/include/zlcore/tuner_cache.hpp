// The tuner caches a run reads and writes: FlagGems' LibTuner SQLite DB under
// FLAGGEMS_CACHE_DIR and Triton's compile cache under TRITON_CACHE_DIR. A
// shared cache hands one run's winners to the next; an isolated one lives in
// the run directory and is dropped after the harvest. Either way the identity
// says which, and what the run found and compiled.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace zl {

struct CacheDirs {
  bool isolated = false;
  std::string flaggems;  // FLAGGEMS_CACHE_DIR
  std::string triton;    // TRITON_CACHE_DIR
};

// Isolated: both under <run_dir>/.tuner_cache. Shared: the caller's
// FLAGGEMS_CACHE_DIR / TRITON_CACHE_DIR, else the tools' own defaults.
CacheDirs resolve_cache_dirs(bool isolate, const std::string& run_dir);

// FLAGGEMS_CACHE_DIR and TRITON_CACHE_DIR made absolute in this process's
// environment, against its working directory: every child (a run's pytest,
// a warm worker, which keeps the first value it reads) runs in the suite's
// directory, where a relative value would name another cache.
void anchor_cache_env();

// One LibTuner winner: the table it lives in (one per kernel) and its key.
struct WinnerKey {
  std::string table;
  std::string key;  // key_0..key_n values joined by ','
  bool operator<(const WinnerKey& o) const { return table != o.table ? table < o.table : key < o.key; }
};

struct CacheSnapshot {
  // Cache subdirectories: compiled kernels, and the C launcher and driver
  // stubs Triton builds per signature (a lone .so). Only names are read here,
  // so a shared cache of many thousand entries costs one directory listing;
  // new_kernels() looks inside the new ones.
  std::set<std::string> triton_entries;
  std::set<WinnerKey> winners;  // every LibTuner row, over every DB file
};

CacheSnapshot snapshot_cache(const CacheDirs& dirs);

// LibTuner keeps per-config timings in tables named
// <kernel>_<cache key>_benchmark_v<N>[-<md5>]; winners live in the others. A
// winners table may itself contain "_benchmark_<protocol hash>" (a non-default
// timing protocol), so only the versioned suffix marks a timing table.
bool is_libtuner_timing_table(const std::string& table);

// The LibTuner DB files under <flaggems>/config_cache.
std::vector<std::string> libtuner_db_files(const std::string& flaggems_cache_dir);

struct KernelInfo {
  std::string name;
  int num_warps = -1;
  int num_stages = -1;
  int64_t shared = -1;
  std::string constexprs;  // JSON object text
  std::string hash;
};

// Metadata of the compiled variants that appeared between two snapshots, read
// from Triton's per-kernel <name>.json: one per new kernel entry, none for a
// launcher stub. Its size is the run's compile count.
std::vector<KernelInfo> new_kernels(const CacheDirs& dirs, const CacheSnapshot& before, const CacheSnapshot& after);
std::string kernels_csv(const std::vector<KernelInfo>& kernels);

}  // namespace zl
