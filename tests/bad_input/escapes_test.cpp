// Terminal escape sequences in what an op reports (its
// failure message, its test id) reached the terminal raw: a suite could
// retitle, recolour or clear the terminal of whoever ran the batch. Every
// line run and batch print now escapes control characters.
#include <gtest/gtest.h>

#include "zltest/fault_suite_batch.hpp"
#include "zltest/suites.hpp"

namespace {

using zltest::TempDir;
namespace fs = std::filesystem;

// The example suite plus an op whose failure message is made of escapes.
fs::path evil_suite(const TempDir& tmp) {
  return zltest::suite_with_op(ZL_EXAMPLE_SUITE, tmp / "suite", "evil",
                               "import pytest\n\n\n"
                               "@pytest.mark.evil\n"
                               "def test_evil():\n"
                               "    raise RuntimeError('\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31mred\\x1b[0m \\x9b31m')\n");
}

TEST(Escapes, ABatchPrintsWhatAnOpReportsEscaped) {
  TempDir tmp;
  const fs::path suite = evil_suite(tmp);
  zltest::Ran r = zltest::zlcore(
      {"--backend-dir", ZL_BUILD_PLUGIN_DIR, "batch", "--backend", "host", "--flaggems-dir", suite.string(), "--ops",
       "evil", "--python", "/usr/bin/python3", "--no-idle-check", "--cold", "--out", (tmp / "b").string()},
      tmp.path(), zltest::batch_env(tmp, zltest::new_tag()), 120);
  EXPECT_EQ(r.exit_code, 1) << zltest::describe(r);
  EXPECT_EQ((r.out + r.err).find('\x1b'), std::string::npos) << "an escape reached the terminal raw";
  EXPECT_EQ(zltest::slurp(tmp / "b" / "batch.log").find('\x1b'), std::string::npos);
  EXPECT_NE(r.out.find("\\x1b]0;pwned\\x07"), std::string::npos) << zltest::describe(r);
  // The row keeps the message as it was: it is data, not terminal output.
  const auto rows = zltest::rows_of(tmp / "b");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NE(rows[0].reason.find("\x1b]0;pwned"), std::string::npos) << rows[0].reason;
}

TEST(Escapes, ARunPrintsATestIdEscaped) {
  TempDir tmp;
  const fs::path suite = evil_suite(tmp);
  zltest::Ran r = zltest::zlcore({"--backend-dir", ZL_BUILD_PLUGIN_DIR, "run", "--backend", "host", "--flaggems-dir",
                                  suite.string(), "--test-node", "benchmark/test_evil.py::test_evil", "--python",
                                  "/usr/bin/python3", "--out", (tmp / "r").string()},
                                 tmp.path(), {{"HOME", (tmp / "home").string()}}, 120);
  EXPECT_EQ(r.exit_code, 1) << zltest::describe(r);
  EXPECT_EQ((r.out + r.err).find('\x1b'), std::string::npos) << "an escape reached the terminal raw";
  EXPECT_NE(zltest::slurp(tmp / "r" / "pytest.log").find('\x1b'), std::string::npos)
      << "pytest.log keeps pytest's own bytes";
}

}  // namespace
