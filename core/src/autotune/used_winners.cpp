#include "used_winners.hpp"

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <regex>

#include "../util/json.hpp"
#include "record_fields.hpp"

namespace zl::autotune_internal {
namespace {

namespace fs = std::filesystem;
using json::Alloc;
using json::Value;

Value sqlite_value(const SQLite::Column& c, Alloc& a) {
  if (c.isInteger()) return Value(static_cast<int64_t>(c.getInt64()));
  if (c.isFloat()) return Value(c.getDouble());
  if (c.isNull()) return Value(rapidjson::kNullType);
  return json::str(c.getString(), a);
}

}  // namespace

void split_table_name(const std::string& table, std::string* kernel, std::string* kernel_hash) {
  static const std::regex re("^(.*?)_([0-9a-f]{32})(_.*)?-([0-9a-f]{32})$");
  std::smatch m;
  if (std::regex_match(table, m, re)) {
    *kernel = m[1];
    *kernel_hash = m[2];
  } else {
    *kernel = table;
    kernel_hash->clear();
  }
}

Lookups read_lookups(const Value& plugin, const Value& suite) {
  Lookups l;
  if (const Value* list = member(plugin, "libtuner_lookups"); list != nullptr && list->IsArray()) {
    l.any_reporter = true;
    for (const Value& e : list->GetArray()) {
      WinnerKey k{str_member(e, "table"), str_member(e, "key")};
      const Value* hit = member(e, "hit");
      l.seen.emplace(k, hit != nullptr && hit->IsBool() && hit->GetBool());
    }
  }
  // The example suite's tuner reports its keys per kernel with where each
  // winner came from (tuned | cache | pinned).
  if (const Value* kernels = member(suite, "kernels"); kernels != nullptr && kernels->IsObject()) {
    l.any_reporter = true;
    for (auto it = kernels->MemberBegin(); it != kernels->MemberEnd(); ++it) {
      std::string table = str_member(it->value, "table");
      const Value* sources = member(it->value, "sources");
      if (table.empty() || sources == nullptr || !sources->IsObject()) continue;
      for (auto s = sources->MemberBegin(); s != sources->MemberEnd(); ++s) {
        bool hit = s->value.IsString() && std::string(s->value.GetString()) == "cache";
        l.seen.emplace(WinnerKey{table, s->name.GetString()}, hit);
      }
    }
  }
  return l;
}

std::vector<UsedTable> used_libtuner_tables(const CacheDirs& dirs, const CacheSnapshot& before,
                                            const Lookups& lookups) {
  std::vector<UsedTable> out;
  for (const std::string& db_path : libtuner_db_files(dirs.flaggems)) {
    const std::string db_file = fs::path(db_path).filename().string();
    const std::string db_stem = fs::path(db_path).stem().string();
    try {
      SQLite::Database db(db_path, SQLite::OPEN_READONLY);
      db.exec("PRAGMA busy_timeout = 5000");
      std::vector<std::string> tables;
      SQLite::Statement list(db, "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name");
      while (list.executeStep()) tables.push_back(list.getColumn(0).getString());
      for (const std::string& table : tables) {
        if (is_libtuner_timing_table(table)) continue;
        UsedTable t;
        std::vector<std::string> keys;
        SQLite::Statement info(db, "PRAGMA table_info(" + quote_ident(table) + ")");
        while (info.executeStep()) {
          LibTunerColumn c{info.getColumn(1).getString(), info.getColumn(2).getString(), info.getColumn(5).getInt()};
          if (c.name.rfind("key_", 0) == 0) keys.push_back(c.name);
          t.columns.push_back(c);
        }
        if (keys.empty()) continue;
        // The key spelled exactly as snapshot_cache spells it (SQLite's own
        // text conversion), so "new in this run" and lookups compare equal.
        std::string key_expr;
        for (const std::string& k : keys) key_expr += (key_expr.empty() ? "" : " || ',' || ") + quote_ident(k);
        SQLite::Statement rows(db, "SELECT " + key_expr + ", * FROM " + quote_ident(table));
        t.doc = std::make_shared<rapidjson::Document>();
        Alloc& a = t.doc->GetAllocator();
        while (rows.executeStep()) {
          std::string ks = rows.getColumn(0).getString();
          WinnerKey wk{table, ks};
          bool used = dirs.isolated || !before.winners.count(wk) || lookups.seen.count(wk);
          if (!used) continue;
          UsedRow r{ks, Value(rapidjson::kArrayType), Value(rapidjson::kObjectType)};
          for (size_t i = 0; i < t.columns.size(); ++i) {
            Value v = sqlite_value(rows.getColumn(static_cast<int>(i + 1)), a);
            if (t.columns[i].name.rfind("key_", 0) == 0) {
              r.key.PushBack(v, a);
            } else {
              r.config.AddMember(json::str(t.columns[i].name, a), v, a);
            }
          }
          t.rows.push_back(std::move(r));
        }
        if (t.rows.empty()) continue;
        std::sort(t.rows.begin(), t.rows.end(),
                  [](const UsedRow& x, const UsedRow& y) { return x.key_string < y.key_string; });
        t.db_file = db_file;
        t.db_stem = db_stem;
        t.table = table;
        split_table_name(table, &t.kernel, &t.kernel_hash);
        out.push_back(std::move(t));
      }
    } catch (const std::exception& e) {
      std::cerr << "zlcore: autotune: cannot read " << db_path << ": " << e.what() << "\n";
    }
  }
  return out;
}

}  // namespace zl::autotune_internal
