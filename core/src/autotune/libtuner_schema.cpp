#include "libtuner_schema.hpp"

#include <cctype>
#include <cstdio>
#include <set>
#include <stdexcept>

namespace zl {
namespace {

// SQLite's limit on columns per table (SQLITE_MAX_COLUMN's default).
constexpr size_t kMaxColumns = 2000;
constexpr size_t kMaxColumnName = 128;
constexpr size_t kMaxTableName = 255;

bool is_ascii_alpha(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }

// A Python identifier in ASCII: what key_0.. and triton.Config fields are.
bool valid_column_name(const std::string& s) {
  if (s.empty() || s.size() > kMaxColumnName) return false;
  if (!is_ascii_alpha(s[0]) && s[0] != '_') return false;
  for (char c : s) {
    if (!is_ascii_alpha(c) && !is_ascii_digit(c) && c != '_') return false;
  }
  return true;
}

// <kernel>_<kernel_hash>-<md5>: a Python name, hex digits, '_' and '-'.
// sqlite_* names belong to SQLite itself.
bool valid_table_name(const std::string& s) {
  if (s.empty() || s.size() > kMaxTableName) return false;
  if (!is_ascii_alpha(s[0]) && s[0] != '_') return false;
  for (char c : s) {
    if (!is_ascii_alpha(c) && !is_ascii_digit(c) && c != '_' && c != '-') return false;
  }
  std::string head = s.substr(0, 7);
  for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return head != "sqlite_";
}

// TunedConfig_<vendor>_triton_<maj>_<min>.db: a file name, never a path.
bool valid_db_file(const std::string& s) {
  if (s.size() < 4 || s.size() > kMaxTableName || s[0] == '.') return false;
  if (s.compare(s.size() - 3, 3, ".db") != 0) return false;
  for (char c : s) {
    if (!is_ascii_alpha(c) && !is_ascii_digit(c) && c != '_' && c != '-' && c != '.') return false;
  }
  return true;
}

// The types SQLAlchemy emits on SQLite for LibTuner's columns (Boolean,
// BigInteger, Float, String, String(64), Text, Integer), the example suite's
// tuner's (the same names), and SQLite's own affinity names. How many
// numbers may follow in parentheses.
struct TypeRule {
  const char* name;
  int max_params;
};
constexpr TypeRule kTypes[] = {
    {"INTEGER", 0}, {"INT", 0},    {"BIGINT", 0},           {"SMALLINT", 0}, {"BOOLEAN", 0},
    {"REAL", 0},    {"DOUBLE", 0}, {"DOUBLE PRECISION", 0}, {"FLOAT", 1},    {"NUMERIC", 2},
    {"DECIMAL", 2}, {"TEXT", 0},   {"VARCHAR", 1},          {"CHAR", 1},     {"BLOB", 0},
};

std::string str_member(const rapidjson::Value& v, const char* key, bool* present) {
  auto it = v.FindMember(key);
  *present = it != v.MemberEnd() && it->value.IsString();
  return *present ? std::string(it->value.GetString(), it->value.GetStringLength()) : std::string();
}

}  // namespace

std::string printable(const std::string& s, size_t max) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < max; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > max) out += "...";
  return out;
}

std::string canonical_column_type(const std::string& type, bool* ok) {
  *ok = false;
  size_t i = 0;
  auto skip_spaces = [&] {
    while (i < type.size() && type[i] == ' ') ++i;
  };
  skip_spaces();
  // The name: words of letters, one space between them.
  std::string name;
  while (i < type.size() && is_ascii_alpha(type[i])) {
    name += static_cast<char>(std::toupper(static_cast<unsigned char>(type[i++])));
    if (i + 1 < type.size() && type[i] == ' ' && is_ascii_alpha(type[i + 1])) {
      name += ' ';
      ++i;
    }
  }
  skip_spaces();
  std::vector<std::string> params;
  if (i < type.size() && type[i] == '(') {
    ++i;
    while (true) {
      skip_spaces();
      std::string digits;
      while (i < type.size() && is_ascii_digit(type[i]) && digits.size() < 6) digits += type[i++];
      if (digits.empty()) return {};
      params.push_back(digits);
      skip_spaces();
      if (i < type.size() && type[i] == ',') {
        ++i;
        continue;
      }
      if (i < type.size() && type[i] == ')') {
        ++i;
        break;
      }
      return {};
    }
    skip_spaces();
  }
  if (i != type.size()) return {};
  if (name.empty()) {
    *ok = params.empty();
    return {};
  }
  for (const TypeRule& rule : kTypes) {
    if (name != rule.name) continue;
    if (params.size() > static_cast<size_t>(rule.max_params)) return {};
    std::string out = name;
    for (size_t p = 0; p < params.size(); ++p) out += (p == 0 ? "(" : ",") + params[p];
    if (!params.empty()) out += ")";
    *ok = true;
    return out;
  }
  return {};
}

LibTunerTable checked_libtuner_table(const rapidjson::Value& record) {
  if (!record.IsObject()) throw std::runtime_error("not a JSON object");
  LibTunerTable t;
  bool present = false;
  t.db_file = str_member(record, "db_file", &present);
  if (!present || !valid_db_file(t.db_file)) {
    throw std::runtime_error("db_file '" + printable(t.db_file) +
                             "' is not a plain file name ending in .db (letters, digits, '_', '-', '.')");
  }
  t.table = str_member(record, "table", &present);
  if (!present || !valid_table_name(t.table)) {
    throw std::runtime_error("table '" + printable(t.table) +
                             "' is not a LibTuner table name (letters, digits, '_' and '-', at most 255, "
                             "not sqlite_*)");
  }
  auto columns = record.FindMember("columns");
  if (columns == record.MemberEnd() || !columns->value.IsArray() || columns->value.Empty()) {
    throw std::runtime_error("columns is not a non-empty array");
  }
  auto entries = record.FindMember("entries");
  if (entries == record.MemberEnd() || !entries->value.IsArray()) {
    throw std::runtime_error("entries is not an array");
  }
  if (columns->value.Size() > kMaxColumns) {
    throw std::runtime_error("more than " + std::to_string(kMaxColumns) + " columns");
  }
  std::set<std::string> names_seen;  // SQLite compares identifiers without case
  std::set<int> pk_places;
  int index = 0;
  for (const rapidjson::Value& c : columns->value.GetArray()) {
    ++index;
    const std::string where = "column " + std::to_string(index);
    if (!c.IsObject()) throw std::runtime_error(where + " is not an object");
    LibTunerColumn col;
    col.name = str_member(c, "name", &present);
    if (!present || !valid_column_name(col.name)) {
      throw std::runtime_error(where + " name '" + printable(col.name) +
                               "' is not an identifier (ASCII letters, digits and '_', not starting with a "
                               "digit, at most 128)");
    }
    std::string lower = col.name;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (!names_seen.insert(lower).second) throw std::runtime_error(where + " name '" + col.name + "' repeats");
    const std::string type = str_member(c, "type", &present);
    auto type_it = c.FindMember("type");
    if (type_it != c.MemberEnd() && !type_it->value.IsString() && !type_it->value.IsNull()) {
      throw std::runtime_error(where + " ('" + col.name + "') type is not a string");
    }
    bool ok = false;
    col.type = canonical_column_type(type, &ok);
    if (!ok) {
      throw std::runtime_error(where + " ('" + col.name + "') type '" + printable(type) +
                               "' is not one LibTuner writes (INTEGER, INT, BIGINT, SMALLINT, BOOLEAN, REAL, "
                               "DOUBLE, FLOAT, NUMERIC, DECIMAL, TEXT, VARCHAR, CHAR, BLOB)");
    }
    auto pk_it = c.FindMember("pk");
    if (pk_it != c.MemberEnd()) {
      if (!pk_it->value.IsInt() || pk_it->value.GetInt() < 0 ||
          pk_it->value.GetInt() > static_cast<int>(columns->value.Size())) {
        throw std::runtime_error(where + " ('" + col.name + "') pk is not a place in the primary key");
      }
      col.pk = pk_it->value.GetInt();
      if (col.pk > 0 && !pk_places.insert(col.pk).second) {
        throw std::runtime_error(where + " ('" + col.name + "') pk " + std::to_string(col.pk) + " repeats");
      }
    }
    t.columns.push_back(std::move(col));
  }
  return t;
}

std::string quote_ident(const std::string& name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace zl
