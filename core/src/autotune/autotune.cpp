// Record and replay of autotune winners (docs/autotune.md). The core owns the
// LibTuner side: it reads FlagGems' SQLite winners tables after a recorded run
// and rebuilds them before a replay. Plain @triton.autotune winners live only
// in the child's memory, so the Python plugin (zlcore_pytest.autotune) records
// and pins those; the core hashes its files with the rest. This file is the
// run's side of it (the mode, the counts, the winners digest); records.hpp
// names the files that write a record and rebuild a replay's cache.
#include "zlcore/autotune.hpp"
#include "zlcore/provider.hpp"

#include <rapidjson/document.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "../util/json.hpp"
#include "../util/json_read.hpp"
#include "record_fields.hpp"
#include "records.hpp"
#include "used_winners.hpp"
#include "winners_digest.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/sha256.hpp"

namespace zl {
namespace {

namespace fs = std::filesystem;
using autotune_internal::int_member;
using autotune_internal::load_json;
using autotune_internal::Lookups;
using autotune_internal::member;
using autotune_internal::read_lookups;
using autotune_internal::str_member;
using autotune_internal::UsedTable;
using json::Value;

constexpr size_t kMissExamples = 5;

}  // namespace

std::string records_hash(const std::string& records_dir, std::map<std::string, std::string>* files) {
  std::map<std::string, std::string> hashes;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(records_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    std::string rel = fs::relative(it->path(), records_dir, ec).generic_string();
    if (rel == "manifest.json" || it->path().filename().string().rfind('.', 0) == 0) continue;
    hashes[rel] = sha256_hex(read_file(it->path().string()));
  }
  std::string lines;
  for (const auto& [rel, h] : hashes) lines += h + "  " + rel + "\n";
  if (files != nullptr) *files = hashes;
  return sha256_hex(lines);
}

std::map<std::string, std::string> autotune_import_env() {
  // Plain @triton.autotune keeps its winners in memory, so every process
  // re-tunes and may pick another config: on a real device, two default batches on
  // one tuner cache ran different batch_norm and layer_norm kernels, and all
  // 11 false FASTER/SLOWER rows of the A/A came from those two ops. Triton's
  // own switch keeps the winners in TRITON_CACHE_DIR (the cache this run
  // uses, isolated or shared), so one cache means one set of winners. A value
  // in zlcore's environment (0 included) is the user's and is left alone.
  if (std::getenv("TRITON_CACHE_AUTOTUNING") != nullptr) return {};
  return {{"TRITON_CACHE_AUTOTUNING", "1"}};
}

std::map<std::string, std::string> compile_only_env() {
  return {{"ZL_COMPILE_ONLY", "1"},
          {FlagGemsProvider::tuner_db_url_env(), FlagGemsProvider::tuner_db_in_memory()},
          {FlagGemsProvider::tuner_disk_cache_env(), "0"},
          {"TRITON_CACHE_AUTOTUNING", "0"}};
}

bool autotune_replays(const std::string& requested_mode, const std::string& replay_from) {
  return requested_mode == "replay" || (requested_mode.empty() && !replay_from.empty());
}

AutotuneSetup prepare_autotune(const std::string& requested_mode, const std::string& replay_from, bool force,
                               const CacheDirs& dirs, const std::string& run_dir, bool in_cache) {
  AutotuneSetup s;
  s.mode = requested_mode;
  s.force = force;
  s.in_cache = in_cache;
  if (s.mode.empty()) s.mode = !replay_from.empty() ? "replay" : (dirs.isolated ? "record" : "tune");
  if (s.mode != "tune" && s.mode != "record" && s.mode != "replay") {
    throw UsageError("--autotune must be tune, record or replay, not '" + s.mode + "'");
  }
  if (s.mode == "replay" && replay_from.empty()) {
    throw UsageError("--autotune replay needs --replay-from / REPLAY_FROM");
  }
  if (s.mode != "replay" && !replay_from.empty()) {
    throw UsageError("--replay-from / REPLAY_FROM implies --autotune replay, not '" + s.mode + "'");
  }
  s.child_env["ZL_AUTOTUNE_MODE"] = s.mode;
  for (const auto& [k, v] : autotune_import_env()) s.child_env[k] = v;
  if (s.mode == "record") {
    fs::path records = fs::path(run_dir) / "autotune_records";
    fs::create_directories(records);
    s.child_env["ZL_AUTOTUNE_RECORD_DIR"] = records.string();
  }
  if (s.mode != "replay") return s;

  autotune_internal::prepare_replay(replay_from, force, dirs, in_cache, s);
  return s;
}

AutotuneResult finish_autotune(const AutotuneSetup& setup, const CacheDirs& dirs, const CacheSnapshot& before,
                               const std::string& run_dir) {
  AutotuneResult r;
  const fs::path rd(run_dir);
  rapidjson::Document plugin = load_json(rd / ".child" / "autotune.json");
  rapidjson::Document suite = load_json(rd / ".child" / "suite_tuner.json");

  // Benchmarks of configs, from whoever counted them.
  bool counted = false;
  int benchmarks = 0;
  for (const Value* v : {member(plugin, "tuning_benchmarks"), member(suite, "tuning_benchmarks")}) {
    if (v != nullptr && v->IsInt()) {
      counted = true;
      benchmarks += v->GetInt();
    }
  }
  r.tuning_benchmarks = counted ? benchmarks : -1;

  // Winners used and inherited. In a replay the cache was built from the
  // records, so nothing in it is inherited from another run's cache.
  Lookups lookups = read_lookups(plugin, suite);
  if (lookups.any_reporter) {
    r.used_winners = static_cast<int>(lookups.seen.size());
    r.inherited_winners = 0;
    if (setup.mode != "replay" && !dirs.isolated) {
      for (const auto& [k, hit] : lookups.seen) r.inherited_winners += (hit && before.winners.count(k)) ? 1 : 0;
    }
  }

  // Shapes that a replay could not serve, from the rows the child wrote.
  std::ifstream results(rd / "results.jsonl");
  for (std::string line; std::getline(results, line);) {
    bool miss = line.find("replay_miss:") != std::string::npos;
    bool refused = line.find("replay_refused:") != std::string::npos;
    if (!miss && !refused) continue;
    rapidjson::Document row;
    std::string error = json::parse(row, line).empty() ? str_member(row, "error") : std::string();
    if (error.find("replay_miss:") != std::string::npos) {
      r.replay_misses++;
    } else if (error.find("replay_refused:") != std::string::npos) {
      r.replay_refused++;
    } else {
      continue;
    }
    if (r.replay_miss_examples.size() < kMissExamples) r.replay_miss_examples.push_back(error.substr(0, 300));
  }

  // Suites whose shapes leave no rows still fail loudly: the plugin counts
  // every miss and refusal it raised.
  r.replay_misses = std::max(r.replay_misses, int_member(plugin, "replay_misses", 0));
  r.replay_refused = std::max(r.replay_refused, int_member(plugin, "replay_refused", 0));
  if (r.replay_miss_examples.empty()) {
    for (const char* list : {"replay_miss_list", "replay_refused_list"}) {
      const Value* l = member(plugin, list);
      if (l == nullptr || !l->IsArray()) continue;
      for (const Value& e : l->GetArray()) {
        if (r.replay_miss_examples.size() >= kMissExamples) break;
        std::string reason = str_member(e, "reason");
        r.replay_miss_examples.push_back(std::string(reason.empty() ? "replay_miss: " : "replay_refused: ") +
                                         "kernel=" + str_member(e, "kernel") +
                                         (reason.empty() ? " key=" + str_member(e, "key") : " " + reason));
      }
    }
  }

  // The winners this run used, in every mode, for compare (winners_digest.hpp).
  // Without the plugin's report nothing says what the child tuned: unknown.
  const std::vector<UsedTable> tables = autotune_internal::used_libtuner_tables(dirs, before, lookups);
  if (member(plugin, "schema") != nullptr) {
    const autotune_internal::WinnersDigest digest = autotune_internal::winners_digest(tables, plugin);
    r.winners_hash = digest.hash;
    for (const auto& [name, k] : digest.kernels) r.winners[name] = {k.kind, k.entries, k.sha256};
  }

  if (setup.mode != "record") return r;

  autotune_internal::write_records(setup, dirs, plugin, tables, rd / "autotune_records", r);
  return r;
}

}  // namespace zl
