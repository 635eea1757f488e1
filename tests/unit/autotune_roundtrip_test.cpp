// The autotune record/replay round trip at the SQLite level: a LibTuner DB
// harvested by record mode into autotune_records/libtuner/*.json and rebuilt
// from those records by replay comes back with the same tables, column
// types, primary keys and rows (docs/autotune.md), and without the timing
// tables, which a replay must never inherit.
#include <gtest/gtest.h>
#include <unistd.h>

#include <SQLiteCpp/SQLiteCpp.h>
#include <filesystem>
#include <string>
#include <vector>

#include "zlcore/autotune.hpp"
#include "zlcore/provider.hpp"
#include "zlcore/tuner_cache.hpp"
#include "zltest/temp_dir.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kHash = std::string(32, 'a');
const std::string kMd5 = std::string(32, 'b');
const std::string kMm = "mm_kernel_" + kHash + "-" + kMd5;
const std::string kSoftmax = "softmax_kernel_" + std::string(32, 'c') + "-" + std::string(32, 'd');
const std::string kTiming = "mm_kernel_" + kHash + "_benchmark_v1-" + kMd5;
const char* kDb = "TunedConfig_host_triton_3_1.db";

zl::CacheDirs isolated_dirs(const fs::path& run) {
  zl::CacheDirs d;
  d.isolated = true;
  d.flaggems = (run / ".tuner_cache" / "flaggems").string();
  d.triton = (run / ".tuner_cache" / "triton").string();
  return d;
}

fs::path db_path(const zl::CacheDirs& d) {
  return fs::path(d.flaggems) / zl::FlagGemsProvider::tuner_db_subdir() / kDb;
}

// The DB as LibTuner (SQLAlchemy on SQLite) writes it: one winners table per
// kernel, key_0.. as the primary key, one column per config field, and a
// per-config timing table beside it.
void write_libtuner_db(const fs::path& file) {
  fs::create_directories(file.parent_path());
  SQLite::Database db(file.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  db.exec("CREATE TABLE \"" + kMm +
          "\" (key_0 BIGINT NOT NULL, key_1 BIGINT NOT NULL, key_2 VARCHAR(32) NOT NULL,"
          " \"BLOCK_M\" INTEGER, \"BLOCK_N\" INTEGER, num_warps INTEGER, num_stages INTEGER,"
          " PRIMARY KEY (key_0, key_1, key_2))");
  db.exec("INSERT INTO \"" + kMm + "\" VALUES (128, 256, 'float16', 64, 128, 4, 3)");
  db.exec("INSERT INTO \"" + kMm + "\" VALUES (1024, 1024, 'bfloat16', 128, 128, 8, 2)");
  db.exec("INSERT INTO \"" + kMm + "\" VALUES (7, 9, 'float32', 16, NULL, 2, 1)");
  // A second kernel: other types, a float, a boolean and a primary key whose
  // order differs from the column order.
  db.exec("CREATE TABLE \"" + kSoftmax +
          "\" (key_0 INTEGER NOT NULL, key_1 TEXT NOT NULL, \"TILE_K\" INTEGER, \"ONE_TILE_PER_CTA\" BOOLEAN,"
          " ratio FLOAT, PRIMARY KEY (key_1, key_0))");
  db.exec("INSERT INTO \"" + kSoftmax + "\" VALUES (4096, 'float16', 1024, 1, 0.5)");
  db.exec("INSERT INTO \"" + kSoftmax + "\" VALUES (32, 'float32', 32, 0, 2.0)");
  db.exec("CREATE TABLE \"" + kTiming +
          "\" (key_0 BIGINT NOT NULL, config VARCHAR NOT NULL, time FLOAT, PRIMARY KEY (key_0, config))");
  db.exec("INSERT INTO \"" + kTiming + "\" VALUES (128, 'BLOCK_M=64', 0.01)");
}

struct Column {
  std::string name, type;
  int notnull, pk;
  bool operator==(const Column& o) const {
    return name == o.name && type == o.type && notnull == o.notnull && pk == o.pk;
  }
};

std::ostream& operator<<(std::ostream& os, const Column& c) {
  return os << c.name << " " << c.type << " notnull=" << c.notnull << " pk=" << c.pk;
}

std::vector<std::string> tables_of(SQLite::Database& db) {
  std::vector<std::string> out;
  SQLite::Statement q(db, "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name");
  while (q.executeStep()) out.push_back(q.getColumn(0).getString());
  return out;
}

std::vector<Column> columns_of(SQLite::Database& db, const std::string& table) {
  std::vector<Column> out;
  SQLite::Statement q(db, "PRAGMA table_info(\"" + table + "\")");
  while (q.executeStep()) {
    out.push_back(
        {q.getColumn(1).getString(), q.getColumn(2).getString(), q.getColumn(3).getInt(), q.getColumn(5).getInt()});
  }
  return out;
}

// Every row, each value with its SQLite storage class, in primary key order.
std::vector<std::string> rows_of(SQLite::Database& db, const std::string& table) {
  std::vector<std::string> out;
  SQLite::Statement q(db, "SELECT * FROM \"" + table + "\" ORDER BY 1, 2");
  while (q.executeStep()) {
    std::string row;
    for (int i = 0; i < q.getColumnCount(); ++i) {
      const SQLite::Column c = q.getColumn(i);
      std::string v = c.isNull()      ? "NULL"
                      : c.isInteger() ? "int:" + std::to_string(c.getInt64())
                      : c.isFloat()   ? "real:" + std::to_string(c.getDouble())
                                      : "text:" + c.getString();
      row += (row.empty() ? "" : " | ") + v;
    }
    out.push_back(row);
  }
  return out;
}

class AutotuneRoundTrip : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(root_ / "A");
    fs::create_directories(root_ / "B");
  }
  zltest::TempDir tmp_{"zl-autotune-rt"};
  const fs::path root_ = tmp_.path();
};

TEST_F(AutotuneRoundTrip, HarvestThenRebuildGivesTheSameTablesTypesKeysAndRows) {
  const zl::CacheDirs a = isolated_dirs(root_ / "A");
  write_libtuner_db(db_path(a));
  const zl::CacheSnapshot before;  // an isolated cache: the run made every row

  zl::AutotuneSetup record;
  record.mode = "record";
  record.run_id = "roundtrip-A";
  const zl::AutotuneResult rec = zl::finish_autotune(record, a, before, (root_ / "A").string());
  EXPECT_EQ(rec.records_written, 5);  // 3 mm rows + 2 softmax rows; no timing rows
  EXPECT_EQ(rec.record_files, 2);
  const fs::path records = root_ / "A" / "autotune_records";
  ASSERT_TRUE(fs::is_regular_file(records / "manifest.json"));
  EXPECT_TRUE(fs::is_regular_file(records / "libtuner" / fs::path(kDb).stem() / (kMm + ".json")));
  EXPECT_FALSE(fs::exists(records / "libtuner" / fs::path(kDb).stem() / (kTiming + ".json")));
  EXPECT_EQ(rec.records_hash, zl::records_hash(records.string()));

  const zl::CacheDirs b = isolated_dirs(root_ / "B");
  const zl::AutotuneSetup replay =
      zl::prepare_autotune("replay", (root_ / "A").string(), false, b, (root_ / "B").string());
  EXPECT_EQ(replay.mode, "replay");
  EXPECT_EQ(replay.source_run_id, "roundtrip-A");
  EXPECT_EQ(replay.records_hash, rec.records_hash);
  EXPECT_EQ(replay.replay_rows, 5);
  ASSERT_TRUE(fs::is_regular_file(db_path(b)));

  SQLite::Database src(db_path(a).string(), SQLite::OPEN_READONLY);
  SQLite::Database out(db_path(b).string(), SQLite::OPEN_READONLY);
  EXPECT_EQ(tables_of(out), (std::vector<std::string>{kMm, kSoftmax}));
  for (const std::string& t : {kMm, kSoftmax}) {
    SCOPED_TRACE(t);
    const std::vector<Column> cols = columns_of(src, t);
    ASSERT_FALSE(cols.empty());
    EXPECT_EQ(columns_of(out, t), cols);
    const std::vector<std::string> rows = rows_of(src, t);
    ASSERT_FALSE(rows.empty());
    EXPECT_EQ(rows_of(out, t), rows);
  }
  // Spot checks that do not lean on the helpers agreeing with themselves.
  const std::vector<Column> sm = columns_of(out, kSoftmax);
  ASSERT_EQ(sm.size(), 5u);
  EXPECT_EQ(sm[0], (Column{"key_0", "INTEGER", 1, 2}));
  EXPECT_EQ(sm[1], (Column{"key_1", "TEXT", 1, 1}));
  EXPECT_EQ(sm[4], (Column{"ratio", "FLOAT", 0, 0}));
  EXPECT_EQ(rows_of(out, kSoftmax)[1], "int:4096 | text:float16 | int:1024 | int:1 | real:0.500000");
  EXPECT_EQ(rows_of(out, kMm)[0], "int:7 | int:9 | text:float32 | int:16 | NULL | int:2 | int:1");
}

TEST_F(AutotuneRoundTrip, ReplayingTwiceDoesNotDuplicateRows) {
  const zl::CacheDirs a = isolated_dirs(root_ / "A");
  write_libtuner_db(db_path(a));
  zl::AutotuneSetup record;
  record.mode = "record";
  record.run_id = "roundtrip-A";
  zl::finish_autotune(record, a, zl::CacheSnapshot{}, (root_ / "A").string());

  const zl::CacheDirs b = isolated_dirs(root_ / "B");
  zl::prepare_autotune("replay", (root_ / "A").string(), false, b, (root_ / "B").string());
  const zl::AutotuneSetup again =
      zl::prepare_autotune("replay", (root_ / "A").string(), false, b, (root_ / "B").string());
  EXPECT_EQ(again.replay_rows, 0);  // INSERT OR IGNORE: the primary key holds
  SQLite::Database out(db_path(b).string(), SQLite::OPEN_READONLY);
  EXPECT_EQ(rows_of(out, kMm).size(), 3u);
}

}  // namespace
