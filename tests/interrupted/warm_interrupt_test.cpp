// Ctrl-C in the default warm mode killed the op's
// `zlcore run` outright (only its cold path counted the signal), so the op's
// run_identity.json stayed `running` and .child/ stayed behind. Both modes now
// record `interrupted` and clean up.
#include <gtest/gtest.h>
#include <signal.h>
#include <thread>

#include "zltest/fault_suite_batch.hpp"

namespace {

using zltest::TempDir;
namespace fs = std::filesystem;

void interrupt_mid_op(const std::vector<std::string>& mode, const std::string& worker_kind) {
  TempDir tmp;
  zltest::TagGuard guard(zltest::new_tag());
  const fs::path out = tmp / "b";
  zltest::Started batch = zltest::start_zlcore(zltest::batch_args(out, "sleep", mode), tmp.path(),
                                               zltest::batch_env(tmp, guard.tag(), {{"ZL_SLEEP_OP_SECONDS", "30"}}));
  // The op is inside pytest once its log says the session started.
  ASSERT_TRUE(zltest::wait_until(
      [&] { return zltest::file_has(out / "runs" / "sleep" / "pytest.log", "test session starts"); }, 60))
      << zltest::describe(zltest::finish(batch, 1));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(batch.pid, SIGINT);
  zltest::Ran r = zltest::finish(batch, 60);
  EXPECT_EQ(r.exit_code, 130) << zltest::describe(r);

  const std::string identity = zltest::slurp(out / "runs" / "sleep" / "run_identity.json");
  EXPECT_NE(identity.find("\"status\": \"interrupted\""), std::string::npos) << identity;
  EXPECT_NE(identity.find("\"exit_code\": 130"), std::string::npos) << identity;
  EXPECT_NE(identity.find("\"kind\": \"" + worker_kind + "\""), std::string::npos) << identity;
  EXPECT_FALSE(fs::exists(out / "runs" / "sleep" / ".child")) << "the plugins' side files were left behind";
  const auto rows = zltest::rows_of(out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, zl::batch::Status::interrupted);
  EXPECT_TRUE(zltest::wait_until([&] { return zltest::tagged(guard.tag()).empty(); }, 10))
      << "a process of the batch outlived it";
}

TEST(WarmInterrupt, DefaultWarmModeRecordsInterrupted) { interrupt_mid_op({}, "warm"); }

TEST(WarmInterrupt, ColdModeRecordsInterrupted) { interrupt_mid_op({"--cold"}, "cold"); }

}  // namespace
