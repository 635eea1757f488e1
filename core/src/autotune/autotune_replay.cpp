// Replay's first step: the records of --replay-from, every one read and
// checked before any is applied, then the LibTuner tables rebuilt in the
// isolated cache (docs/autotune.md, "Replay rules").
#include <SQLiteCpp/SQLiteCpp.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>

#include "../util/json.hpp"
#include "../util/json_read.hpp"
#include "libtuner_schema.hpp"
#include "record_fields.hpp"
#include "records.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/errors.hpp"
#include "zlcore/provider.hpp"

namespace zl::autotune_internal {
namespace {

namespace fs = std::filesystem;
using json::Value;

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

void prepare_replay(const std::string& replay_from, bool force, const CacheDirs& dirs, bool in_cache,
                    AutotuneSetup& s) {
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
}

}  // namespace zl::autotune_internal
