// Ctrl-C during the compile-ahead pass: the batch stops with 130 before
// anything is timed, an op whose compile run went through keeps its marker,
// the interrupted one gets none, no row is written and no process or lease
// is left; --resume compiles only what is missing, then times every op.
#include <gtest/gtest.h>
#include <signal.h>

#include <thread>

#include "zltest/fault_suite_batch.hpp"

namespace {

using zl::batch::Status;
using zltest::TempDir;
namespace fs = std::filesystem;

size_t markers(const fs::path& triton) {
  const fs::path dir = triton / "zlcore-compiled";
  if (!fs::is_directory(dir)) return 0;
  return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

TEST(CompileInterrupt, CtrlCInThePassKeepsWhatCompiledAndResumeCompilesTheRest) {
  TempDir tmp;
  zltest::TagGuard guard(zltest::new_tag());
  const fs::path out = tmp / "b", triton = tmp / "triton";
  const std::vector<std::string> ahead{"--compile-ahead", "2"};
  auto env = zltest::batch_env(tmp, guard.tag(), {{"ZL_SLEEP_OP_SECONDS", "30"}, {"TRITON_CACHE_DIR", triton}});
  zltest::Started batch = zltest::start_zlcore(zltest::batch_args(out, "ok1,sleep", ahead), tmp.path(), env);
  // ok1's compile run is over (its marker) and sleep's is inside pytest.
  ASSERT_TRUE(zltest::wait_until(
      [&] {
        return markers(triton) == 1 &&
               zltest::file_has(out / "compile" / "sleep" / "pytest.log", "test session starts");
      },
      60))
      << zltest::describe(zltest::finish(batch, 1));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(batch.pid, SIGINT);
  zltest::Ran r = zltest::finish(batch, 60);

  EXPECT_EQ(r.exit_code, 130) << zltest::describe(r);
  EXPECT_NE(r.out.find("compiled sleep ahead on device 0 (host:vm): interrupted"), std::string::npos)
      << zltest::describe(r);
  EXPECT_NE(r.out.find("compile-ahead pass: 1 of 2 ops compiled in "), std::string::npos) << zltest::describe(r);
  EXPECT_NE(r.out.find(" s, 1 interrupted\n"), std::string::npos) << zltest::describe(r);
  EXPECT_EQ(markers(triton), 1u) << "only ok1 went through";
  EXPECT_TRUE(zltest::rows_of(out).empty()) << "a compile run is never an op's row";
  EXPECT_FALSE(fs::exists(out / "runs")) << "something was timed after the Ctrl-C";
  EXPECT_TRUE(fs::is_empty(out / "leases")) << "a lease outlived its run";
  EXPECT_NE(zltest::slurp(out / "compile" / "sleep" / "run_identity.json").find("\"status\": \"interrupted\""),
            std::string::npos);
  EXPECT_TRUE(zltest::wait_until([&] { return zltest::tagged(guard.tag()).empty(); }, 10))
      << "a process of the batch outlived it";

  env["ZL_SLEEP_OP_SECONDS"] = "0.1";
  std::vector<std::string> resume = ahead;
  resume.push_back("--resume");
  r = zltest::zlcore(zltest::batch_args(out, "ok1,sleep", resume), tmp.path(), env, 120);
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  EXPECT_NE(r.out.find("compile-ahead pass: 1 ops, 1 at a time (1 compiled by an earlier batch)"), std::string::npos)
      << zltest::describe(r);
  const auto rows = zltest::rows_of(out);
  ASSERT_EQ(rows.size(), 2u) << zltest::describe(r);
  for (const auto& row : rows) EXPECT_EQ(row.status, Status::passed) << row.op;
}

}  // namespace
