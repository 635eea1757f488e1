// What a LibTuner record may say about its table before any of it reaches
// SQL. A record is data from a file someone else may have written: its table
// name, column names and column types are checked against what FlagGems'
// LibTuner (SQLAlchemy on SQLite) and the example suite's tuner write, and
// the SQL that rebuilds the table is made only from the checked, canonical
// forms (docs/autotune.md, "Replay rules").
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <vector>

namespace zl {

struct LibTunerColumn {
  std::string name;
  std::string type;  // canonical spelling from the allow-list; "" for a column without a type
  int pk = 0;        // place in the primary key, 0 when not part of it
};

struct LibTunerTable {
  std::string db_file;  // a plain file name ending in .db
  std::string table;
  std::vector<LibTunerColumn> columns;
};

// The table a record describes, every name and type checked. Throws
// std::runtime_error with one line naming the field that is not allowed.
LibTunerTable checked_libtuner_table(const rapidjson::Value& record);

// The canonical spelling of an allowed column type ("bigint" -> "BIGINT",
// "varchar( 64 )" -> "VARCHAR(64)"), or "" when the type is not one LibTuner
// writes. `*ok` says which (an empty type is allowed: SQLite's typeless column).
std::string canonical_column_type(const std::string& type, bool* ok);

// `name` as an SQLite identifier: in double quotes, each '"' in it doubled.
std::string quote_ident(const std::string& name);

// `s` fit for one line of an error message: control characters escaped,
// at most `max` bytes of it shown.
std::string printable(const std::string& s, size_t max = 80);

}  // namespace zl
