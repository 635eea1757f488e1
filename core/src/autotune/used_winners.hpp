// The LibTuner winners a run used, read back from its cache's SQLite DBs.
// Record mode writes them to autotune_records/ (autotune_record.cpp); every mode
// digests them, with the plugin's plain-autotune winners, into the identity's
// autotune.winners (winners_digest.cpp), which compare matches across runs.
#pragma once

#include <rapidjson/document.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "libtuner_schema.hpp"
#include "zlcore/tuner_cache.hpp"

namespace zl::autotune_internal {

// What the child reported looking up: (table, key) -> found in the DB already.
struct Lookups {
  std::map<WinnerKey, bool> seen;
  bool any_reporter = false;
};

// From the plugin's .child/autotune.json and the example suite's
// .child/suite_tuner.json (either may be an empty object).
Lookups read_lookups(const rapidjson::Value& plugin, const rapidjson::Value& suite);

// <kernel>_<32 hex kernel_hash>[_suffix]-<32 hex md5 of key column names>:
// FlagGems' (and the example suite's) winners table name.
void split_table_name(const std::string& table, std::string* kernel, std::string* kernel_hash);

struct UsedRow {
  std::string key_string;   // the key columns joined by ',' as SQLite spells them
  rapidjson::Value key;     // the key columns' values, in column order
  rapidjson::Value config;  // every other column by name
};

struct UsedTable {
  std::string db_file, db_stem, table, kernel, kernel_hash;
  std::vector<LibTunerColumn> columns;       // as PRAGMA table_info gives them
  std::shared_ptr<rapidjson::Document> doc;  // owns the rows' values
  std::vector<UsedRow> rows;                 // sorted by key_string
};

// Every winners table with rows the run used: all rows of an isolated cache
// (the run made them all); in a shared cache the rows new in this run plus
// those the child looked up. A DB that cannot be read is named on stderr and
// skipped.
std::vector<UsedTable> used_libtuner_tables(const CacheDirs& dirs, const CacheSnapshot& before, const Lookups& lookups);

}  // namespace zl::autotune_internal
