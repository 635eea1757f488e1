// The suite index: marks from text, the home file, hints, and its cache.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "zlcore/suite_index.hpp"
#include "zltest/files.hpp"
#include "zltest/temp_dir.hpp"

namespace fs = std::filesystem;
using zl::SuiteIndex;
using zltest::spit;

namespace {}  // namespace

TEST(SuiteIndex, ScanFindsOpMarksNotPytestsOwnNorComments) {
  const std::string text =
      "import pytest\n"
      "pytestmark = pytest.mark.skipif(True, reason='x')\n"
      "@pytest.mark.bitwise_and_tensor\n"
      "@pytest.mark.parametrize('dtype', [1])\n"
      "def test_a(dtype): pass\n"
      "# @pytest.mark.commented_out\n"
      "x = '#'  ; y = pytest.mark.after_a_hash_in_a_string  # pytest.mark.in_comment\n"
      "@pytest.mark.irshift__  # trailing comment\n"
      "def test_b(): pass\n"
      "not_pytest.mark.lookalike\n"
      "@pytest.mark.xfail\n";
  EXPECT_EQ(SuiteIndex::scan(text),
            (std::vector<std::string>{"after_a_hash_in_a_string", "bitwise_and_tensor", "irshift__"}));
}

TEST(SuiteIndex, HomeFileWinsElseEveryFileThatMarksIt) {
  SuiteIndex index = SuiteIndex::from_texts({
      {"benchmark/test_mm.py", "@pytest.mark.mm\n"},
      {"benchmark/test_blas_perf_parallel.py", "@pytest.mark.mm\n@pytest.mark.bmm\n"},
      {"benchmark/test_div.py", "@pytest.mark.div_tensor\n"},
      {"benchmark/test_true_divide.py", "@pytest.mark.div_tensor\n"},
      {"benchmark/test_bitwise_and.py", "@pytest.mark.bitwise_and_tensor\n@pytest.mark.bitwise_and_scalar\n"},
  });
  EXPECT_EQ(index.files_to_run("mm", "benchmark"), (std::vector<std::string>{"benchmark/test_mm.py"}));
  EXPECT_EQ(index.files_of("mm").size(), 2u);
  EXPECT_EQ(index.files_to_run("div_tensor", "benchmark"),
            (std::vector<std::string>{"benchmark/test_div.py", "benchmark/test_true_divide.py"}));
  EXPECT_EQ(index.files_to_run("bitwise_and_tensor", "benchmark"),
            (std::vector<std::string>{"benchmark/test_bitwise_and.py"}));
  EXPECT_TRUE(index.files_to_run("bitwise_and", "benchmark").empty());
  EXPECT_EQ(index.marks_of("benchmark/test_bitwise_and.py"),
            (std::vector<std::string>{"bitwise_and_scalar", "bitwise_and_tensor"}));
  const std::vector<std::string> near = index.closest("bitwise_and", 3);
  ASSERT_EQ(near.size(), 2u);
  EXPECT_EQ(near[0], "bitwise_and_scalar");
  EXPECT_TRUE(index.closest("zzzzzzzzzzzzzzzz", 3).empty());
}

TEST(SuiteIndex, BuildScansSubdirectoriesAndCachesByStamp) {
  const zltest::TempDir tmp("zl-index-build");
  const fs::path root = tmp.path();
  const fs::path cache = root / "cache";
  spit(root / "benchmark" / "test_abs.py", "@pytest.mark.abs\n");
  spit(root / "benchmark" / "test_FLA" / "test_chunk.py", "@pytest.mark.chunk_rule\n");
  spit(root / "benchmark" / "helpers.py", "@pytest.mark.not_a_test_file\n");
  spit(root / "benchmark" / "__pycache__" / "test_x.py", "@pytest.mark.cached_junk\n");

  SuiteIndex first = SuiteIndex::build(root.string(), "benchmark", cache.string());
  EXPECT_FALSE(first.from_cache());
  EXPECT_EQ(first.file_count(), 2u);
  EXPECT_EQ(first.files_of("chunk_rule"), (std::vector<std::string>{"benchmark/test_FLA/test_chunk.py"}));
  EXPECT_TRUE(first.files_of("not_a_test_file").empty());
  EXPECT_TRUE(first.files_of("cached_junk").empty());

  SuiteIndex second = SuiteIndex::build(root.string(), "benchmark", cache.string());
  EXPECT_TRUE(second.from_cache());
  EXPECT_EQ(second.marks(), first.marks());

  // An edited file changes the key: the index is read afresh.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  spit(root / "benchmark" / "test_abs.py", "@pytest.mark.abs\n@pytest.mark.absolute\n");
  SuiteIndex third = SuiteIndex::build(root.string(), "benchmark", cache.string());
  EXPECT_FALSE(third.from_cache());
  EXPECT_EQ(third.files_of("absolute"), (std::vector<std::string>{"benchmark/test_abs.py"}));

  // A corrupt cache file is ignored, never trusted.
  for (const auto& e : fs::recursive_directory_iterator(cache)) {
    if (e.is_regular_file()) std::ofstream(e.path()) << "{\"schema\": 1, \"key\": [";
  }
  SuiteIndex fourth = SuiteIndex::build(root.string(), "benchmark", cache.string());
  EXPECT_FALSE(fourth.from_cache());
  EXPECT_EQ(fourth.marks(), third.marks());
}

// A cache whose key matches but that names a file the scan did not find
// (a path out of the suite), or one file twice, is not trusted: that name
// would reach pytest, or marks the file does not hold.
TEST(SuiteIndex, ACacheNamingAFileTheScanDidNotFindIsReadAfresh) {
  const zltest::TempDir tmp("zl-index-planted");
  const fs::path root = tmp.path();
  const fs::path cache = root / "cache";
  spit(root / "benchmark" / "test_abs.py", "@pytest.mark.abs\n");
  ASSERT_FALSE(SuiteIndex::build(root.string(), "benchmark", cache.string()).from_cache());
  for (const auto& e : fs::recursive_directory_iterator(cache)) {
    if (!e.is_regular_file()) continue;
    std::string text = zltest::slurp(e.path());
    const size_t at = text.find("benchmark/test_abs.py");
    ASSERT_NE(at, std::string::npos) << text;
    text.replace(at, std::string("benchmark/test_abs.py").size(), "../outside/test_abs.py");
    spit(e.path(), text);
  }
  const SuiteIndex index = SuiteIndex::build(root.string(), "benchmark", cache.string());
  EXPECT_FALSE(index.from_cache());
  EXPECT_EQ(index.files_of("abs"), (std::vector<std::string>{"benchmark/test_abs.py"}));

  // The scanned file listed twice, the second time with marks it lacks.
  for (const auto& e : fs::recursive_directory_iterator(cache)) {
    if (!e.is_regular_file()) continue;
    std::string text = zltest::slurp(e.path());
    const std::string listed = "\"benchmark/test_abs.py\":[\"abs\"]";
    const size_t at = text.find(listed);
    ASSERT_NE(at, std::string::npos) << text;
    text.insert(at + listed.size(), ",\"benchmark/test_abs.py\":[\"planted\"]");
    spit(e.path(), text);
  }
  const SuiteIndex twice = SuiteIndex::build(root.string(), "benchmark", cache.string());
  EXPECT_FALSE(twice.from_cache());
  EXPECT_TRUE(twice.files_of("planted").empty());
}

TEST(SuiteIndex, MissingBenchmarkDirIsEmpty) {
  const zltest::TempDir tmp("zl-index-missing");
  const fs::path root = tmp.path();
  SuiteIndex index = SuiteIndex::build(root.string(), "benchmark", "");
  EXPECT_TRUE(index.marks().empty());
}
