#include "zlcore/tuner_cache.hpp"
#include "../util/csv.hpp"
#include "zlcore/provider.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <rapidjson/document.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>

#include "../util/json_read.hpp"
#include "zlcore/atomic_file.hpp"

namespace zl {
namespace {

namespace fs = std::filesystem;

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? std::string(v) : fallback;
}

std::string home() { return env_or("HOME", "/root"); }

}  // namespace

bool is_libtuner_timing_table(const std::string& table) {
  static const std::regex timing("_benchmark_v[0-9]+(-[0-9a-f]+)?$");
  return std::regex_search(table, timing);
}

CacheDirs resolve_cache_dirs(bool isolate, const std::string& run_dir) {
  CacheDirs d;
  d.isolated = isolate;
  if (isolate) {
    d.flaggems = (fs::path(run_dir) / ".tuner_cache" / "flaggems").string();
    d.triton = (fs::path(run_dir) / ".tuner_cache" / "triton").string();
  } else {
    // Absolute already: zlcore's main anchors a relative value (anchor_cache_env).
    d.flaggems = env_or(FlagGemsProvider::tuner_cache_env(), FlagGemsProvider::default_tuner_cache_dir(home()));
    d.triton = env_or("TRITON_CACHE_DIR", home() + "/.triton/cache");
  }
  return d;
}

void anchor_cache_env() {
  for (const char* var : {FlagGemsProvider::tuner_cache_env(), "TRITON_CACHE_DIR"}) {
    const char* v = std::getenv(var);
    if (v == nullptr || *v == '\0' || *v == '/') continue;
    std::error_code ec;
    const fs::path absolute = fs::absolute(v, ec);
    if (!ec) ::setenv(var, absolute.c_str(), 1);
  }
}

std::vector<std::string> libtuner_db_files(const std::string& flaggems_cache_dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(fs::path(flaggems_cache_dir) / FlagGemsProvider::tuner_db_subdir(), ec), end;
       !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".db") out.push_back(it->path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

CacheSnapshot snapshot_cache(const CacheDirs& dirs) {
  CacheSnapshot s;
  std::error_code ec;
  for (fs::directory_iterator it(dirs.triton, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec)) s.triton_entries.insert(it->path().filename().string());
  }
  for (const std::string& db_path : libtuner_db_files(dirs.flaggems)) {
    try {
      SQLite::Database db(db_path, SQLite::OPEN_READONLY);
      db.exec("PRAGMA busy_timeout = 2000");
      std::vector<std::string> tables;
      SQLite::Statement list(db, "SELECT name FROM sqlite_master WHERE type='table'");
      while (list.executeStep()) tables.push_back(list.getColumn(0).getString());
      for (const std::string& table : tables) {
        if (is_libtuner_timing_table(table)) continue;
        std::vector<std::string> keys;
        SQLite::Statement info(db, "PRAGMA table_info(\"" + table + "\")");
        while (info.executeStep()) {
          std::string col = info.getColumn(1).getString();
          if (col.rfind("key_", 0) == 0) keys.push_back(col);
        }
        if (keys.empty()) continue;
        std::string select;
        for (const std::string& k : keys)
          select += (select.empty() ? "" : " || ',' || ") + std::string("\"") + k + "\"";
        SQLite::Statement rows(db, "SELECT " + select + " FROM \"" + table + "\"");
        while (rows.executeStep()) s.winners.insert({table, rows.getColumn(0).getString()});
      }
    } catch (const std::exception&) {
      // A DB being written by another run, or not LibTuner's: counted as empty
      // rather than failing the run over bookkeeping.
    }
  }
  return s;
}

std::vector<KernelInfo> new_kernels(const CacheDirs& dirs, const CacheSnapshot& before, const CacheSnapshot& after) {
  std::vector<KernelInfo> out;
  for (const std::string& entry : after.triton_entries) {
    if (before.triton_entries.count(entry)) continue;
    std::error_code ec;
    for (fs::directory_iterator it(fs::path(dirs.triton) / entry, ec), end; !ec && it != end; it.increment(ec)) {
      const fs::path& p = it->path();
      if (p.extension() != ".json" || p.filename().string().rfind("__grp__", 0) == 0) continue;
      rapidjson::Document doc;
      try {
        if (!json::parse(doc, read_file(p.string())).empty()) continue;
      } catch (const std::exception&) {
        continue;
      }
      if (!doc.IsObject() || !doc.HasMember("name")) continue;
      KernelInfo k;
      k.name = doc["name"].IsString() ? doc["name"].GetString() : p.stem().string();
      if (doc.HasMember("num_warps") && doc["num_warps"].IsInt()) k.num_warps = doc["num_warps"].GetInt();
      if (doc.HasMember("num_stages") && doc["num_stages"].IsInt()) k.num_stages = doc["num_stages"].GetInt();
      if (doc.HasMember("shared") && doc["shared"].IsInt64()) k.shared = doc["shared"].GetInt64();
      if (doc.HasMember("hash") && doc["hash"].IsString()) k.hash = doc["hash"].GetString();
      if (k.hash.empty()) k.hash = entry;
      for (const char* field : {"constants", "constexprs"}) {
        if (doc.HasMember(field)) {
          rapidjson::StringBuffer buf;
          rapidjson::Writer<rapidjson::StringBuffer> w(buf);
          doc[field].Accept(w);
          k.constexprs = buf.GetString();
          break;
        }
      }
      out.push_back(std::move(k));
    }
  }
  std::sort(out.begin(), out.end(), [](const KernelInfo& a, const KernelInfo& b) {
    return a.name != b.name ? a.name < b.name : a.hash < b.hash;
  });
  return out;
}

std::string kernels_csv(const std::vector<KernelInfo>& kernels) {
  std::string out = "kernel,num_warps,num_stages,shared_bytes,constexprs,binary_hash\n";
  auto num = [](int64_t v) { return v < 0 ? std::string() : std::to_string(v); };
  for (const KernelInfo& k : kernels) {
    out += csv::field(k.name) + "," + num(k.num_warps) + "," + num(k.num_stages) + "," + num(k.shared) + "," +
           csv::field(k.constexprs) + "," + csv::field(k.hash) + "\n";
  }
  return out;
}

}  // namespace zl
