// Ctrl-C in the default warm mode killed the op's
// `zlcore run` outright (only its cold path counted the signal), so the op's
// run_identity.json stayed `running` and .child/ stayed behind. Both modes now
// record `interrupted` and clean up.
#include <gtest/gtest.h>

#include "batch_util.hpp"

namespace {

using hostile::TempDir;
namespace fs = std::filesystem;

void interrupt_mid_op(const std::vector<std::string>& mode, const std::string& worker_kind) {
  TempDir tmp;
  hostile::TagGuard guard(hostile::new_tag());
  const fs::path out = tmp / "b";
  hostile::Started batch = hostile::start_zlcore(hostile::batch_args(out, "sleep", mode), tmp.path(),
                                                 hostile::batch_env(tmp, guard.tag(), {{"ZL_SLEEP_OP_SECONDS", "30"}}));
  // The op is inside pytest once its log says the session started.
  ASSERT_TRUE(hostile::wait_until(
      [&] { return hostile::file_has(out / "runs" / "sleep" / "pytest.log", "test session starts"); }, 60))
      << hostile::describe(hostile::finish(batch, 1));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(batch.pid, SIGINT);
  hostile::Ran r = hostile::finish(batch, 60);
  EXPECT_EQ(r.exit_code, 130) << hostile::describe(r);

  const std::string identity = hostile::slurp(out / "runs" / "sleep" / "run_identity.json");
  EXPECT_NE(identity.find("\"status\": \"interrupted\""), std::string::npos) << identity;
  EXPECT_NE(identity.find("\"exit_code\": 130"), std::string::npos) << identity;
  EXPECT_NE(identity.find("\"kind\": \"" + worker_kind + "\""), std::string::npos) << identity;
  EXPECT_FALSE(fs::exists(out / "runs" / "sleep" / ".child")) << "the plugins' side files were left behind";
  const auto rows = hostile::rows_of(out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, zl::batch::Status::interrupted);
  EXPECT_TRUE(hostile::wait_until([&] { return hostile::tagged(guard.tag()).empty(); }, 10))
      << "a process of the batch outlived it";
}

TEST(WarmInterrupt, DefaultWarmModeRecordsInterrupted) { interrupt_mid_op({}, "warm"); }

TEST(WarmInterrupt, ColdModeRecordsInterrupted) { interrupt_mid_op({"--cold"}, "cold"); }

}  // namespace
