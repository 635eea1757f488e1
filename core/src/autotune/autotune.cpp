// Record and replay of autotune winners (docs/autotune.md). The core owns the
// LibTuner side: it reads FlagGems' SQLite winners tables after a recorded run
// and rebuilds them before a replay. Plain @triton.autotune winners live only
// in the child's memory, so the Python plugin (zlcore_pytest.autotune) records
// and pins those; the core hashes its files with the rest.
#include "zlcore/autotune.hpp"
#include "zlcore/provider.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>

#include "../util/json.hpp"
#include "../util/json_read.hpp"
#include "libtuner_schema.hpp"
#include "record_fields.hpp"
#include "used_winners.hpp"
#include "winners_digest.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/sha256.hpp"

namespace zl {
namespace {

namespace fs = std::filesystem;
using autotune_internal::int_member;
using autotune_internal::Lookups;
using autotune_internal::member;
using autotune_internal::read_lookups;
using autotune_internal::str_member;
using autotune_internal::UsedRow;
using autotune_internal::UsedTable;
using json::Alloc;
using json::Value;

constexpr int kSchema = 1;
constexpr size_t kMissExamples = 5;

// Parsed JSON of a file, or an empty object when it is missing or unreadable:
// side files are bookkeeping, never a reason to fail a finished run. A file
// that is there but does not parse gets one line naming it.
rapidjson::Document load_json(const fs::path& file) {
  rapidjson::Document d;
  std::error_code ec;
  if (fs::is_regular_file(file, ec)) {
    try {
      const std::string why = json::parse(d, read_file(file.string()));
      if (!why.empty()) std::cerr << "zlcore: " << file.string() << " is not valid JSON (" << why << "); ignored\n";
    } catch (const std::exception&) {
      d.SetNull();
    }
  }
  if (!d.IsObject()) d.SetObject();
  return d;
}

std::string safe_file_name(const std::string& name) {
  std::string out;
  for (char c : name)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '_';
  return out.substr(0, 200);
}

// ------------------------------------------------------------------ record

struct Harvest {
  int files = 0;
  int rows = 0;
  Value kernels{rapidjson::kArrayType};
};

// Writes libtuner/<db stem>/<table>.json for every winners table with rows
// the run used (used_winners.hpp says which).
void harvest_libtuner(const std::vector<UsedTable>& tables, const fs::path& out_dir, Alloc& ma, Harvest* h) {
  for (const UsedTable& t : tables) {
    rapidjson::Document doc;
    doc.SetObject();
    Alloc& a = doc.GetAllocator();
    doc.AddMember("schema", kSchema, a);
    doc.AddMember("kind", "libtuner", a);
    doc.AddMember("db_file", json::str(t.db_file, a), a);
    doc.AddMember("table", json::str(t.table, a), a);
    doc.AddMember("kernel", json::str(t.kernel, a), a);
    doc.AddMember("kernel_hash", json::str(t.kernel_hash, a), a);
    Value columns(rapidjson::kArrayType), key_cols(rapidjson::kArrayType), fields(rapidjson::kArrayType);
    for (const LibTunerColumn& c : t.columns) {
      Value col(rapidjson::kObjectType);
      col.AddMember("name", json::str(c.name, a), a);
      col.AddMember("type", json::str(c.type, a), a);
      col.AddMember("pk", c.pk, a);
      columns.PushBack(col, a);
      (c.name.rfind("key_", 0) == 0 ? key_cols : fields).PushBack(json::str(c.name, a), a);
    }
    doc.AddMember("columns", columns, a);
    doc.AddMember("key_columns", key_cols, a);
    doc.AddMember("config_fields", fields, a);
    Value list_v(rapidjson::kArrayType);
    for (const UsedRow& r : t.rows) {
      Value e(rapidjson::kObjectType);
      e.AddMember("key_string", json::str(r.key_string, a), a);
      e.AddMember("key", Value(r.key, a), a);
      e.AddMember("config", Value(r.config, a), a);
      list_v.PushBack(e, a);
    }
    doc.AddMember("entries", list_v, a);

    fs::path file = out_dir / "libtuner" / safe_file_name(t.db_stem) / (safe_file_name(t.table) + ".json");
    fs::create_directories(file.parent_path());
    write_file_atomic(file.string(), json::pretty(doc));
    h->files++;
    h->rows += static_cast<int>(t.rows.size());
    Value k(rapidjson::kObjectType);
    k.AddMember("kind", "libtuner", ma);
    k.AddMember("kernel", json::str(t.kernel, ma), ma);
    k.AddMember("table", json::str(t.table, ma), ma);
    k.AddMember("db_file", json::str(t.db_file, ma), ma);
    k.AddMember("kernel_hash", json::str(t.kernel_hash, ma), ma);
    k.AddMember("entries", static_cast<int>(t.rows.size()), ma);
    h->kernels.PushBack(k, ma);
  }
}

// Summaries of the plugin's plain-autotune files, for the manifest.
void summarize_triton_records(const fs::path& out_dir, Alloc& ma, Harvest* h) {
  std::error_code ec;
  std::vector<fs::path> files;
  for (fs::directory_iterator it(out_dir / "triton_autotune", ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".json") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    rapidjson::Document d = load_json(f);
    const Value* entries = member(d, "entries");
    int n = entries != nullptr && entries->IsArray() ? static_cast<int>(entries->Size()) : 0;
    Value k(rapidjson::kObjectType);
    k.AddMember("kind", "triton_autotune", ma);
    k.AddMember("id", json::str(str_member(d, "id"), ma), ma);
    k.AddMember("kernel", json::str(str_member(d, "kernel"), ma), ma);
    k.AddMember("source_hash", json::str(str_member(d, "source_hash"), ma), ma);
    k.AddMember("entries", n, ma);
    h->kernels.PushBack(k, ma);
    h->files++;
    h->rows += n;
  }
}

// ------------------------------------------------------------------ replay

// Recreates one recorded table in the replay's LibTuner DB, with the recorded
// column types and primary key, so FlagGems' SQLAlchemy automap finds it as
// if LibTuner had written it. The SQL is built from `t` alone, whose names
// and types checked_libtuner_table has checked and spelled canonically; every
// value is bound, and each statement is prepared on its own, so nothing in a
// record is ever run as SQL text.
// replace: a recorded row wins over one of the same key already in the DB (a
// cache that outlives one replay holds other records' rows).
int rebuild_table(const LibTunerTable& t, const Value& entries, const fs::path& config_cache, bool replace) {
  fs::create_directories(config_cache);
  SQLite::Database db((config_cache / t.db_file).string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  db.exec("PRAGMA busy_timeout = 5000");
  std::map<int, std::string> pks;  // PRAGMA table_info's pk: the column's place in the primary key
  std::string defs;
  for (const LibTunerColumn& c : t.columns) {
    if (c.pk > 0) pks[c.pk] = c.name;
    defs += (defs.empty() ? "" : ", ") + quote_ident(c.name) + (c.type.empty() ? "" : " " + c.type) +
            (c.pk > 0 ? " NOT NULL" : "");
  }
  std::string pk;
  for (const auto& [place, p] : pks) pk += (pk.empty() ? "" : ", ") + quote_ident(p);
  SQLite::Transaction tx(db);
  SQLite::Statement create(db, "CREATE TABLE IF NOT EXISTS " + quote_ident(t.table) + " (" + defs +
                                   (pk.empty() ? "" : ", PRIMARY KEY (" + pk + ")") + ")");
  create.exec();
  std::string marks, cols;
  for (const LibTunerColumn& c : t.columns) {
    marks += marks.empty() ? "?" : ", ?";
    cols += (cols.empty() ? "" : ", ") + quote_ident(c.name);
  }
  SQLite::Statement ins(db, std::string(replace ? "INSERT OR REPLACE" : "INSERT OR IGNORE") + " INTO " +
                                quote_ident(t.table) + " (" + cols + ") VALUES (" + marks + ")");
  int rows = 0;
  for (const Value& e : entries.GetArray()) {
    const Value* key = member(e, "key");
    const Value* config = member(e, "config");
    if (key == nullptr || !key->IsArray() || config == nullptr || !config->IsObject()) continue;
    size_t ki = 0;
    ins.reset();
    ins.clearBindings();
    for (size_t i = 0; i < t.columns.size(); ++i) {
      const std::string& name = t.columns[i].name;
      const Value* v = nullptr;
      if (name.rfind("key_", 0) == 0) {
        v = ki < key->Size() ? &(*key)[static_cast<rapidjson::SizeType>(ki)] : nullptr;
        ++ki;
      } else {
        v = member(*config, name.c_str());
      }
      int idx = static_cast<int>(i + 1);
      if (v == nullptr || v->IsNull()) {
        ins.bind(idx);
      } else if (v->IsBool()) {
        ins.bind(idx, v->GetBool() ? 1 : 0);
      } else if (v->IsInt64()) {
        ins.bind(idx, static_cast<int64_t>(v->GetInt64()));
      } else if (v->IsNumber()) {
        ins.bind(idx, v->GetDouble());
      } else if (v->IsString()) {
        ins.bind(idx, std::string(v->GetString(), v->GetStringLength()));
      } else {
        ins.bind(idx, json::compact(*v));
      }
    }
    rows += ins.exec();
  }
  tx.commit();
  return rows;
}

std::vector<fs::path> json_files_under(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ".json") out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

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

  // Replay: the source, its manifest, and a cache holding nothing but it.
  fs::path r = fs::absolute(replay_from).lexically_normal();
  if (r.filename().empty()) r = r.parent_path();
  fs::path records = r.filename() == "autotune_records" ? r : r / "autotune_records";
  s.records_dir = records.string();
  std::error_code ec;
  if (!fs::is_regular_file(records / "manifest.json", ec)) {
    throw UsageError(records.string() +
                     " has no manifest.json: not the records of a zlcore run in record mode "
                     "(--replay-from / REPLAY_FROM)");
  }
  // A manifest that does not read is no record of a run: refused, like a
  // record that does not read, rather than replayed on trust.
  rapidjson::Document manifest;
  {
    const fs::path file = records / "manifest.json";
    std::string why;
    try {
      why = json::parse(manifest, read_file(file.string()));
    } catch (const std::exception& e) {
      why = e.what();
    }
    if (!why.empty())
      throw PreflightError("replay_from", "cannot replay " + file.string() + ": not valid JSON (" + why + ")");
    if (!manifest.IsObject())
      throw PreflightError("replay_from", "cannot replay " + file.string() + ": not a JSON object");
  }
  s.source_run_id = str_member(manifest, "run_id");
  s.manifest_hash = str_member(manifest, "records_hash");
  s.source_triton = str_member(manifest, "triton_version");
  s.records_hash = records_hash(s.records_dir);
  if (!s.manifest_hash.empty() && s.manifest_hash != s.records_hash) {
    std::cerr << "zlcore: the records in " << s.records_dir << " changed since they were written (records_hash "
              << s.records_hash.substr(0, 12) << ", manifest says " << s.manifest_hash.substr(0, 12)
              << "); replaying them as they are now\n";
  }
  if (!dirs.isolated && !in_cache) {
    // run_operator isolates every replay; a shared cache would mix stale winners in.
    throw UsageError("autotune replay needs an isolated tuner cache");
  }

  // LibTuner: its winners tables, rebuilt from the records. A key not in
  // them reaches LibTuner's tuning path, where the plugin's prune hook turns
  // it into replay_miss.
  const fs::path config_cache = fs::path(dirs.flaggems) / FlagGemsProvider::tuner_db_subdir();
  // Every record is read and checked before any is applied: a bad one
  // stops the replay with nothing of it written.
  struct Record {
    fs::path file;
    rapidjson::Document doc;
    LibTunerTable table;
  };
  std::vector<Record> libtuner;
  for (const fs::path& f : json_files_under(records / "libtuner")) {
    Record r;
    r.file = f;
    try {
      const std::string why = json::parse(r.doc, read_file(f.string()));
      if (!why.empty()) throw std::runtime_error("not valid JSON (" + why + ")");
      r.table = checked_libtuner_table(r.doc);
    } catch (const std::exception& e) {
      throw PreflightError("replay_from", "cannot replay " + f.string() + ": " + e.what());
    }
    libtuner.push_back(std::move(r));
  }
  for (const Record& r : libtuner) {
    try {
      s.replay_rows += rebuild_table(r.table, r.doc["entries"], config_cache, in_cache);
    } catch (const std::exception& e) {
      throw PreflightError("replay_from", "cannot replay " + r.file.string() + ": " + e.what());
    }
  }
  s.replay_kernels = static_cast<int>(json_files_under(records / "triton_autotune").size());
  s.child_env["ZL_REPLAY_RECORDS"] = s.records_dir;
  if (force) s.child_env["ZL_REPLAY_FORCE"] = "1";
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

  const fs::path out = rd / "autotune_records";
  fs::create_directories(out);
  rapidjson::Document manifest;
  manifest.SetObject();
  Alloc& a = manifest.GetAllocator();
  Harvest h;
  harvest_libtuner(tables, out, a, &h);
  summarize_triton_records(out, a, &h);
  r.records_written = h.rows;
  r.record_files = h.files;

  std::map<std::string, std::string> files;
  r.records_hash = records_hash(out.string(), &files);
  manifest.AddMember("schema", kSchema, a);
  manifest.AddMember("run_id", json::str(setup.run_id, a), a);
  const Value* tv = member(plugin, "triton_version");
  if (tv != nullptr && tv->IsString()) {
    manifest.AddMember("triton_version", json::str(tv->GetString(), a), a);
  } else {
    manifest.AddMember("triton_version", Value(rapidjson::kNullType), a);
  }
  manifest.AddMember("cache_kind", json::str(dirs.isolated ? "isolated" : "shared", a), a);
  manifest.AddMember("records_hash", json::str(r.records_hash, a), a);
  manifest.AddMember("records_hash_rule",
                     "sha256 of the lines '<sha256>  <path>' of every file but manifest.json, sorted by path", a);
  Value counts(rapidjson::kObjectType);
  counts.AddMember("files", h.files, a);
  counts.AddMember("entries", h.rows, a);
  counts.AddMember("tuning_benchmarks", r.tuning_benchmarks, a);
  manifest.AddMember("counts", counts, a);
  manifest.AddMember("kernels", h.kernels, a);
  manifest.AddMember("files", json::str_map(files, a), a);
  write_file_atomic((out / "manifest.json").string(), json::pretty(manifest));
  return r;
}

}  // namespace zl
