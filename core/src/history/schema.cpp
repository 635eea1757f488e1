// The store's schema (docs/history.md, "The store"), versioned in `meta`: a
// file of another version, or an SQLite file that is not a history, is
// refused rather than written into.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "store_impl.hpp"
#include "zlcore/errors.hpp"

namespace zl::history {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE entries(
  id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, kind TEXT NOT NULL,
  started TEXT NOT NULL, fingerprint TEXT NOT NULL, added TEXT NOT NULL);
CREATE TABLE runs(
  id INTEGER PRIMARY KEY, entry INTEGER NOT NULL REFERENCES entries(id),
  op TEXT NOT NULL, dir TEXT NOT NULL, run_id TEXT NOT NULL, status TEXT NOT NULL,
  started TEXT NOT NULL, segment TEXT NOT NULL);
CREATE TABLE identity(
  run INTEGER NOT NULL REFERENCES runs(id), key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY(run, key));
CREATE TABLE rows(
  run INTEGER NOT NULL REFERENCES runs(id), op TEXT NOT NULL, dtype TEXT NOT NULL,
  shape TEXT NOT NULL, side TEXT NOT NULL, median_ms REAL NOT NULL, lo_ms REAL NOT NULL,
  hi_ms REAL NOT NULL, n INTEGER NOT NULL, timer TEXT NOT NULL);
CREATE INDEX runs_entry ON runs(entry);
CREATE INDEX rows_run ON rows(run);
)sql";

// The tables of version 1, each as "name: its columns in order", from `db`
// as it stands. The names come from the schema (never from the file), so
// they can be spelled into the PRAGMA, which every SQLite version reads.
std::vector<std::vector<std::string>> schema_tables(SQLite::Database& db, const std::vector<std::string>& names) {
  std::vector<std::vector<std::string>> out;
  for (const std::string& name : names) {
    std::vector<std::string> table{name};
    SQLite::Statement c(db, "PRAGMA table_info(\"" + name + "\")");
    while (c.executeStep()) table.push_back(c.getColumn(1).getString());
    out.push_back(std::move(table));
  }
  return out;
}

// The first table of version 1 that `db` lacks or holds with other columns,
// as version 1 has it ("rows: run op ..."); "" when every one is as written.
// Tables the schema does not name are left alone.
std::string schema_difference(SQLite::Database& db) {
  SQLite::Database want(":memory:", SQLite::OPEN_READWRITE);
  want.exec(kSchema);
  std::vector<std::string> names;
  SQLite::Statement t(want, "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name");
  while (t.executeStep()) names.push_back(t.getColumn(0).getString());
  const auto have = schema_tables(db, names), wanted = schema_tables(want, names);
  for (size_t i = 0; i < names.size(); ++i) {
    if (have[i] == wanted[i]) continue;
    std::string text = names[i] + ":";
    for (size_t c = 1; c < wanted[i].size(); ++c) text += " " + wanted[i][c];
    return text;
  }
  return "";
}

bool has_table(SQLite::Database& db, const char* name) {
  SQLite::Statement q(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?");
  q.bind(1, name);
  return q.executeStep();
}

SQLite::Database open_db(const std::string& path) {
  const std::filesystem::path p(path);
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  if (!std::filesystem::is_directory(dir))
    throw UsageError("history: --db " + path + ": directory " + dir.string() + " does not exist");
  // A FIFO or a device would hang or feed SQLite whatever it gives.
  std::error_code ec;
  if (std::filesystem::exists(p, ec) && !std::filesystem::is_regular_file(p, ec))
    throw UsageError("history: --db " + path + " is not a file (a directory or a device); name the history file");
  try {
    return SQLite::Database(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  } catch (const SQLite::Exception& e) {
    throw UsageError("history: --db " + path + " cannot be opened: " + e.what());
  }
}

}  // namespace

Store::Impl::Impl(const std::string& p) : path(p), db(open_db(p)) {
  try {
    // A busy file (another add) waits a little rather than failing at once.
    db.setBusyTimeout(10000);
    if (!has_table(db, "meta")) {
      SQLite::Statement any(db, "SELECT count(*) FROM sqlite_master");
      if (any.executeStep() && any.getColumn(0).getInt() > 0)
        throw UsageError("history: --db " + path + " is an SQLite file but not a zlcore history (no meta table)");
      SQLite::Transaction t(db);
      db.exec(kSchema);
      SQLite::Statement v(db, "INSERT INTO meta(key, value) VALUES('schema_version', ?)");
      v.bind(1, std::to_string(kSchemaVersion));
      v.exec();
      t.commit();
      return;
    }
    SQLite::Statement v(db, "SELECT value FROM meta WHERE key='schema_version'");
    const std::string have = v.executeStep() ? v.getColumn(0).getString() : "";
    if (have != std::to_string(kSchemaVersion)) {
      throw UsageError("history: --db " + path + " has schema version '" + have + "'; this zlcore reads version " +
                       std::to_string(kSchemaVersion));
    }
    // Version 1 by its word: its tables must be there as version 1 made them.
    if (const std::string want = schema_difference(db); !want.empty()) {
      throw UsageError("history: --db " + path + " says schema version " + have + " but does not hold version " + have +
                       "'s table (" + want + "); it was edited or is not a zlcore history");
    }
  } catch (const SQLite::Exception& e) {
    throw UsageError("history: --db " + path + " is not a readable history: " + e.what());
  }
}

Store::Store(const std::string& path) : impl_(new Impl(path)) {}
Store::~Store() { delete impl_; }

}  // namespace zl::history
