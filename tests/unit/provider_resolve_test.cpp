// FlagGemsProvider::resolve against a tiny FlagGems-layout suite on disk:
// which files an op runs, what -m it carries, and how unknown or malformed
// ops are refused before any pytest starts.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "zlcore/errors.hpp"
#include "zlcore/provider.hpp"
#include "zltest/files.hpp"
#include "zltest/temp_dir.hpp"

namespace fs = std::filesystem;
using zl::FlagGemsProvider;
using zl::TargetRequest;
using zl::TestTarget;
using zltest::spit;

namespace {

class ProviderResolve : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = tmp_.path();
    // The index cache goes under the test's own directory, not the user's.
    if (const char* v = std::getenv("ZL_CACHE_DIR")) saved_cache_ = v;
    ::setenv("ZL_CACHE_DIR", (root_ / "cache").c_str(), 1);
    spit(root_ / "benchmark" / "test_mm.py", "import pytest\n@pytest.mark.mm\ndef test_mm(): pass\n");
    spit(root_ / "benchmark" / "test_blas_perf_parallel.py",
         "import pytest\n@pytest.mark.mm\ndef test_mm_par(): pass\n@pytest.mark.bmm\ndef test_bmm(): pass\n");
    spit(root_ / "benchmark" / "test_div.py", "import pytest\n@pytest.mark.div_tensor\ndef test_div(): pass\n");
    spit(root_ / "benchmark" / "test_true_divide.py",
         "import pytest\n@pytest.mark.div_tensor\ndef test_true_div(): pass\n");
    spit(root_ / "benchmark" / "test_bitwise.py",
         "import pytest\n@pytest.mark.bitwise_and_tensor\ndef test_a(): pass\n"
         "@pytest.mark.bitwise_and_scalar\ndef test_b(): pass\n");
  }
  void TearDown() override {
    if (saved_cache_) {
      ::setenv("ZL_CACHE_DIR", saved_cache_->c_str(), 1);
    } else {
      ::unsetenv("ZL_CACHE_DIR");
    }
  }
  TestTarget resolve(const std::string& op) const {
    TargetRequest req;
    req.op = op;
    return FlagGemsProvider(root_.string()).resolve(req);
  }
  zltest::TempDir tmp_{"zl-provider"};
  fs::path root_;
  std::optional<std::string> saved_cache_;
};

TEST_F(ProviderResolve, HomeFileWinsOverOtherFilesThatMarkTheOp) {
  const TestTarget t = resolve("mm");
  EXPECT_EQ(t.op, "mm");
  EXPECT_EQ(t.files, (std::vector<std::string>{"benchmark/test_mm.py"}));
  EXPECT_EQ(t.marker, "mm");
  EXPECT_TRUE(t.node.empty());
  EXPECT_EQ(t.also_marked_in, (std::vector<std::string>{"benchmark/test_blas_perf_parallel.py"}));
  EXPECT_EQ(t.display(), "benchmark/test_mm.py -m mm");
}

TEST_F(ProviderResolve, OpWithoutHomeFileRunsEveryFileThatMarksIt) {
  const TestTarget t = resolve("div_tensor");
  EXPECT_EQ(t.files, (std::vector<std::string>{"benchmark/test_div.py", "benchmark/test_true_divide.py"}));
  EXPECT_EQ(t.marker, "div_tensor");
  EXPECT_TRUE(t.also_marked_in.empty());

  const TestTarget b = resolve("bmm");
  EXPECT_EQ(b.files, (std::vector<std::string>{"benchmark/test_blas_perf_parallel.py"}));
}

TEST_F(ProviderResolve, UnknownOpIsAPreflightFailureNamingTheClosestMarks) {
  try {
    resolve("bitwise_and");
    FAIL() << "an op no file marks resolved";
  } catch (const zl::PreflightError& e) {
    EXPECT_EQ(e.check(), "benchmark_file");
    const std::string what = e.what();
    EXPECT_NE(what.find("marks 'bitwise_and'"), std::string::npos) << what;
    EXPECT_NE(what.find("closest:"), std::string::npos) << what;
    EXPECT_NE(what.find("bitwise_and_scalar"), std::string::npos) << what;
    EXPECT_NE(what.find("bitwise_and_tensor"), std::string::npos) << what;
    EXPECT_EQ(what.find("div_tensor"), std::string::npos) << what;
  }
  // Nothing near: the message points at `zlcore ops` instead.
  try {
    resolve("zzzzzzzzzzzzzzzzzzzzzzzz");
    FAIL() << "an op no file marks resolved";
  } catch (const zl::PreflightError& e) {
    EXPECT_EQ(e.check(), "benchmark_file");
    EXPECT_NE(std::string(e.what()).find("zlcore ops"), std::string::npos) << e.what();
  }
}

TEST_F(ProviderResolve, InvalidOpNamesAreRefusedAsUsageErrors) {
  for (const std::string& bad :
       std::vector<std::string>{"mm;rm", "mm or bmm", "not-a-mark", "../mm", std::string(201, 'a')}) {
    EXPECT_THROW(resolve(bad), zl::UsageError) << bad;
  }
  EXPECT_TRUE(FlagGemsProvider::valid_op_name(std::string(200, 'a')));
  EXPECT_FALSE(FlagGemsProvider::valid_op_name(""));
  // Nothing at all is a usage error too, not a preflight failure.
  EXPECT_THROW(FlagGemsProvider(root_.string()).resolve(TargetRequest{}), zl::UsageError);
}

TEST_F(ProviderResolve, OpFileThatDoesNotMarkTheOpIsRefused) {
  TargetRequest req;
  req.op = "bmm";
  req.op_file = "benchmark/test_mm.py";
  try {
    FlagGemsProvider(root_.string()).resolve(req);
    FAIL() << "--op-file that does not mark --op resolved";
  } catch (const zl::PreflightError& e) {
    EXPECT_EQ(e.check(), "benchmark_file");
    EXPECT_NE(std::string(e.what()).find("it marks: mm"), std::string::npos) << e.what();
  }
  // --op-file alone: the file and every op it marks.
  TargetRequest file_only;
  file_only.op_file = (root_ / "benchmark" / "test_bitwise.py").string();
  const TestTarget t = FlagGemsProvider(root_.string()).resolve(file_only);
  EXPECT_EQ(t.files, (std::vector<std::string>{"benchmark/test_bitwise.py"}));
  EXPECT_EQ(t.marks, (std::vector<std::string>{"bitwise_and_scalar", "bitwise_and_tensor"}));
  EXPECT_EQ(t.op, "bitwise");
  EXPECT_TRUE(t.marker.empty());
}

}  // namespace
