// The two ends of autotune records (docs/autotune.md): a record run writes
// what it used to autotune_records/ with a manifest (autotune_record.cpp); a
// replay checks those records and rebuilds its isolated cache from them
// before the child starts (autotune_replay.cpp).
#pragma once

#include <rapidjson/document.h>

#include <filesystem>
#include <string>
#include <vector>

#include "used_winners.hpp"
#include "zlcore/autotune.hpp"
#include "zlcore/tuner_cache.hpp"

namespace zl::autotune_internal {

// The layout version of every record file and the manifest.
inline constexpr int kRecordSchema = 1;

// Writes the record run's records under `out` (libtuner/, the plugin's
// triton_autotune/ summarized) and its manifest.json last; fills the counts
// and records_hash of `r`.
void write_records(const AutotuneSetup& setup, const CacheDirs& dirs, const rapidjson::Value& plugin,
                   const std::vector<UsedTable>& tables, const std::filesystem::path& out, AutotuneResult& r);

// The replay side of prepare_autotune: the records of --replay-from found and
// checked (manifest, every record), and the LibTuner tables rebuilt in the
// isolated cache. Throws UsageError or PreflightError with one line.
void prepare_replay(const std::string& replay_from, bool force, const CacheDirs& dirs, bool in_cache, AutotuneSetup& s);

}  // namespace zl::autotune_internal
