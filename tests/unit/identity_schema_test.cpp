// The identity schema is the one place a run_identity.json key is spelled:
// docs/run-directory.md's key table must be exactly the table generated from
// it, and compare's caliber keys are the schema's caliber fields.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <stdexcept>

#include "run/identity.hpp"
#include "zlcore/compare.hpp"
#include "zlcore/identity_schema.hpp"
#include "zltest/files.hpp"

namespace {

std::string schema_table() {
  std::string out = "| key | written by | caliber | what |\n|---|---|---|---|\n";
  for (const zl::identity::Field& f : zl::identity::fields()) {
    out += std::string("| `") + f.path + "` | " + (f.writer == zl::identity::Writer::core ? "core" : "plugin") + " | " +
           (f.caliber ? "yes" : "") + " | " + f.meaning + " |\n";
  }
  return out;
}

std::string between(const std::string& text, const std::string& begin, const std::string& end) {
  const size_t a = text.find(begin);
  const size_t b = text.find(end);
  if (a == std::string::npos || b == std::string::npos || b < a) return "(markers missing)";
  return text.substr(a + begin.size(), b - a - begin.size());
}

// ZL_UPDATE_DOCS=1 writes the generated table into the docs instead of
// checking it: `ZL_UPDATE_DOCS=1 build/bin/unit_tests --gtest_filter=IdentitySchema.*`.
TEST(IdentitySchema, DocsTableIsTheSchema) {
  const std::string path = std::string(ZL_SOURCE_DIR) + "/docs/run-directory.md";
  const std::string begin = "<!-- identity-schema:begin -->\n";
  const std::string end = "<!-- identity-schema:end -->";
  std::string text = zltest::slurp(path);
  if (const char* update = std::getenv("ZL_UPDATE_DOCS"); update != nullptr && std::string(update) == "1") {
    const size_t a = text.find(begin);
    const size_t b = text.find(end);
    ASSERT_TRUE(a != std::string::npos && b != std::string::npos && b > a);
    text.replace(a + begin.size(), b - a - begin.size(), schema_table());
    zltest::spit(path, text);
  }
  EXPECT_EQ(between(text, begin, end), schema_table())
      << "run: ZL_UPDATE_DOCS=1 build/bin/unit_tests --gtest_filter=IdentitySchema.DocsTableIsTheSchema";
}

TEST(IdentitySchema, CaliberKeysAreTheSchemasCaliberFields) {
  std::vector<std::string> want;
  for (const zl::identity::Field& f : zl::identity::fields()) {
    if (f.caliber) want.emplace_back(f.path);
  }
  EXPECT_EQ(zl::compare::caliber_keys(), want);
  // The order compare reports differences in, unchanged since before the schema.
  ASSERT_GE(want.size(), 3u);
  EXPECT_EQ(want[0], "backend.name");
  EXPECT_EQ(want[1], "device.name");
  EXPECT_EQ(want[2], "timer.name");
}

TEST(IdentitySchema, IdentityRefusesAKeyTheSchemaLacks) {
  zl::Identity id;
  id.set(zl::identity::key::status, "running");
  id.set("env.GEMS_VENDOR", "x");                       // under an open object
  id.set("env", std::map<std::string, std::string>{});  // the open object whole
  EXPECT_THROW(id.set("statu", "running"), std::logic_error);
  EXPECT_THROW(id.set("envx.A", "1"), std::logic_error);
}

TEST(IdentitySchema, EveryPathIsListedOnce) {
  std::set<std::string> seen;
  for (const zl::identity::Field& f : zl::identity::fields()) EXPECT_TRUE(seen.insert(f.path).second) << f.path;
}

}  // namespace
