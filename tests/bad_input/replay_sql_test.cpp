// A replay record is data. Its table name, column names and
// column types reach SQL only after a check against what LibTuner writes;
// anything else stops the replay before pytest with PREFLIGHT_FAILED
// check=replay_from and exit 3, and nothing of the record runs as SQL.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cstdio>

#include "../../core/src/autotune/libtuner_schema.hpp"
#include "host_run.hpp"
#include "zltest/child.hpp"
#include "zltest/files.hpp"
#include "zltest/temp_dir.hpp"
#include "zltest/zlcore_cli.hpp"

namespace {

using zltest::TempDir;
namespace fs = std::filesystem;

const std::string kTable = "mm_kernel_" + std::string(32, 'a') + "-" + std::string(32, 'b');

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// A recorded run directory holding one LibTuner record.
fs::path records_with(const TempDir& tmp, const std::string& table, const std::string& column,
                      const std::string& type) {
  const fs::path run = tmp / "A";
  zltest::spit(run / "autotune_records" / "manifest.json", "{\"schema\": 1, \"run_id\": \"planted\"}\n");
  zltest::spit(run / "autotune_records" / "libtuner" / "TunedConfig_host_numgems_0_1" / "t.json",
               "{\"schema\": 1, \"kind\": \"libtuner\", \"db_file\": \"TunedConfig_host_numgems_0_1.db\","
               " \"table\": " +
                   json_string(table) +
                   ", \"kernel\": \"mm_kernel\","
                   " \"columns\": [{\"name\": \"key_0\", \"type\": \"BIGINT\", \"pk\": 1},"
                   " {\"name\": " +
                   json_string(column) + ", \"type\": " + json_string(type) +
                   ", \"pk\": 0}],"
                   " \"entries\": [{\"key_string\": \"1\", \"key\": [1], \"config\": {\"BLOCK_M\": 64}}]}\n");
  return run;
}

void expect_refused(const TempDir& tmp, const zltest::Ran& r, const std::string& mentions) {
  EXPECT_EQ(r.exit_code, 3) << zltest::describe(r);
  EXPECT_EQ(r.err.rfind("PREFLIGHT_FAILED check=replay_from cannot replay ", 0), 0u) << zltest::describe(r);
  EXPECT_NE(r.err.find(mentions), std::string::npos) << zltest::describe(r);
  EXPECT_EQ(zltest::count_lines(r.err), 1u) << zltest::describe(r);
  EXPECT_FALSE(fs::exists(tmp / "B" / "results.jsonl")) << "pytest ran";
}

TEST(ReplaySql, ColumnTypeThatAttachesADatabaseRunsNothing) {
  TempDir tmp;
  const fs::path canary = tmp / "canary.db";
  const std::string type = "BIGINT); COMMIT; ATTACH DATABASE '" + canary.string() +
                           "' AS p; CREATE TABLE p.t(x); DETACH DATABASE p; BEGIN; --";
  zltest::Ran r = bad_input::replay_run(tmp, records_with(tmp, kTable, "BLOCK_M", type), "mm");
  EXPECT_FALSE(fs::exists(canary)) << "the record's type ran as SQL";
  expect_refused(tmp, r, "column 2 ('BLOCK_M') type 'BIGINT); COMMIT;");
}

TEST(ReplaySql, MaliciousTableNameIsRefused) {
  TempDir tmp;
  const fs::path canary = tmp / "canary2.db";
  const std::string table = "x\" (a); ATTACH DATABASE '" + canary.string() + "' AS p; --";
  zltest::Ran r = bad_input::replay_run(tmp, records_with(tmp, table, "BLOCK_M", "BIGINT"), "mm");
  EXPECT_FALSE(fs::exists(canary));
  expect_refused(tmp, r, "is not a LibTuner table name");
}

TEST(ReplaySql, MaliciousColumnNameIsRefused) {
  TempDir tmp;
  zltest::Ran r =
      bad_input::replay_run(tmp, records_with(tmp, kTable, "BLOCK_M\" BIGINT, \"evil\nline", "BIGINT"), "mm");
  expect_refused(tmp, r, "column 2 name 'BLOCK_M\" BIGINT, \"evil\\x0aline' is not an identifier");
}

// What LibTuner and SQLAlchemy write is still accepted, in canonical form.
TEST(ReplaySql, TypesLibTunerWritesAreAccepted) {
  bool ok = false;
  EXPECT_EQ(zl::canonical_column_type("BIGINT", &ok), "BIGINT");
  EXPECT_TRUE(ok);
  EXPECT_EQ(zl::canonical_column_type("varchar( 64 )", &ok), "VARCHAR(64)");
  EXPECT_TRUE(ok);
  EXPECT_EQ(zl::canonical_column_type("DOUBLE  PRECISION", &ok), "");
  EXPECT_FALSE(ok);
  EXPECT_EQ(zl::canonical_column_type("double precision", &ok), "DOUBLE PRECISION");
  EXPECT_TRUE(ok);
  EXPECT_EQ(zl::canonical_column_type("NUMERIC(10, 2)", &ok), "NUMERIC(10,2)");
  EXPECT_TRUE(ok);
  EXPECT_EQ(zl::canonical_column_type("", &ok), "");
  EXPECT_TRUE(ok);  // SQLite's typeless column
  for (const char* bad : {"BIGINT)", "BIGINT; DROP", "TEXT COLLATE x", "VARCHAR(64) PRIMARY KEY", "BOOLEAN(1)",
                          "INTEGER -- x", "JSON", "VARCHAR(", "VARCHAR(1,2)", "(3)"}) {
    zl::canonical_column_type(bad, &ok);
    EXPECT_FALSE(ok) << bad;
  }
}

TEST(ReplaySql, RecordChecksNameTheField) {
  auto check = [](const std::string& text) {
    rapidjson::Document d;
    d.Parse(text.c_str());
    try {
      zl::checked_libtuner_table(d);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string cols = "\"columns\": [{\"name\": \"key_0\", \"type\": \"BIGINT\", \"pk\": 1}], \"entries\": []";
  EXPECT_EQ(check("{\"db_file\": \"T.db\", \"table\": \"" + kTable + "\", " + cols + "}"), "accepted");
  EXPECT_NE(check("{\"db_file\": \"../T.db\", \"table\": \"" + kTable + "\", " + cols + "}").find("db_file"),
            std::string::npos);
  EXPECT_NE(check("{\"db_file\": \"T.db\", \"table\": \"sqlite_master\", " + cols + "}").find("table"),
            std::string::npos);
  EXPECT_NE(check("{\"db_file\": \"T.db\", \"table\": \"t\", \"columns\": [{\"name\": \"a\"}, {\"name\": \"A\"}],"
                  " \"entries\": []}")
                .find("repeats"),
            std::string::npos);
  EXPECT_NE(check("{\"db_file\": \"T.db\", \"table\": \"t\", \"columns\": [{\"name\": \"a\", \"pk\": \"1; x\"}],"
                  " \"entries\": []}")
                .find("pk"),
            std::string::npos);
}

}  // namespace
