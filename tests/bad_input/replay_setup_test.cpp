// A replay source that is refused (a truncated or garbage
// manifest.json was even accepted silently) left a half-made run directory
// behind, so the same --out was refused as "already exists" on the next try.
// Now a manifest that does not read is refused in one line, and a run that
// fails before its identity exists leaves no directory.
#include <gtest/gtest.h>

#include "host_run.hpp"
#include "zltest/child.hpp"
#include "zltest/files.hpp"
#include "zltest/temp_dir.hpp"
#include "zltest/zlcore_cli.hpp"

namespace {

using zltest::TempDir;
namespace fs = std::filesystem;

fs::path source_with_manifest(const TempDir& tmp, const std::string& manifest) {
  const fs::path run = tmp / "A";
  fs::remove_all(run);
  zltest::spit(run / "autotune_records" / "manifest.json", manifest);
  return run;
}

TEST(ReplaySetup, ABadManifestIsRefusedInOneLineAndLeavesNoDirectory) {
  TempDir tmp;
  const std::string whole = "{\"schema\": 1, \"run_id\": \"20261203-abs\", \"records_hash\": \"\"}\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {whole.substr(0, 30), "not valid JSON ("},
      {std::string("\x00\x01garbage\xff", 11), "not valid JSON ("},
      {"[1, 2, 3]\n", "not a JSON object"},
  };
  for (const auto& [manifest, says] : cases) {
    SCOPED_TRACE(says);
    const fs::path source = source_with_manifest(tmp, manifest);
    zltest::Ran r = bad_input::replay_run(tmp, source, "abs", {"--dtypes", "float32"});
    EXPECT_EQ(r.exit_code, 3) << zltest::describe(r);
    EXPECT_EQ(r.err.rfind("PREFLIGHT_FAILED check=replay_from cannot replay " +
                              (source / "autotune_records" / "manifest.json").string() + ": " + says,
                          0),
              0u)
        << zltest::describe(r);
    EXPECT_EQ(zltest::count_lines(r.err), 1u) << zltest::describe(r);
    EXPECT_FALSE(fs::exists(tmp / "B")) << "a refused replay left its run directory behind";
  }
  // The same --out is free for the next try.
  zltest::Ran r = bad_input::replay_run(tmp, source_with_manifest(tmp, whole), "abs", {"--dtypes", "float32"});
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  EXPECT_TRUE(fs::exists(tmp / "B" / "run_identity.json"));
}

TEST(ReplaySetup, ARefusedRecordLeavesNoDirectory) {
  TempDir tmp;
  const fs::path source = source_with_manifest(tmp, "{\"schema\": 1, \"run_id\": \"x\"}\n");
  zltest::spit(source / "autotune_records" / "libtuner" / "TunedConfig_host_numgems_0_1" / "t.json", "{\"schema\": ");
  zltest::Ran r = bad_input::replay_run(tmp, source, "abs", {"--dtypes", "float32"});
  EXPECT_EQ(r.exit_code, 3) << zltest::describe(r);
  EXPECT_FALSE(fs::exists(tmp / "B"));
}

}  // namespace
