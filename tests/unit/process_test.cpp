// ChildProcess / run_child: argv without a shell, the environment it gets,
// its working directory, its output in the log, and how it ended.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/proc_stat.hpp"
#include "zlcore/process.hpp"
#include "zltest/files.hpp"
#include "zltest/temp_dir.hpp"

namespace fs = std::filesystem;
using zl::ChildResult;
using zl::ChildSpec;
using zltest::slurp;

namespace {

class Process : public ::testing::Test {
 protected:
  zltest::TempDir tmp_{"zl-process"};
  const fs::path dir_ = tmp_.path();
};

// A child that starts `sleep 60` in a session of its own (so no signal to
// the child's group reaches it) and waits. That process writes its pid once
// it is in its new session, then becomes the sleep.
ChildSpec escaping_child(const fs::path& pid_file) {
  ChildSpec spec;
  spec.argv = {"sh", "-c", "setsid sh -c 'echo $$ > \"$0\"; exec sleep 60' \"$1\" & wait", "sh", pid_file.string()};
  return spec;
}

pid_t read_pid(const fs::path& pid_file, double wait_s) {
  for (int i = 0; i <= wait_s * 100; ++i) {
    const std::string text = slurp(pid_file);
    if (!text.empty() && text.back() == '\n') return static_cast<pid_t>(std::stol(text));
    ::usleep(10000);
  }
  return -1;
}

// Gone, or a zombie its new parent has yet to reap.
bool gone_within(pid_t pid, double wait_s) {
  for (int i = 0; i <= wait_s * 100; ++i) {
    const auto st = zl::proc_stat(pid);
    if (!st || st->zombie) return true;
    ::usleep(10000);
  }
  return false;
}

TEST_F(Process, ExitCodeEnvCwdAndOutputReachTheLog) {
  ::setenv("ZL_PROCESS_TEST_GONE", "still here", 1);
  ChildSpec spec;
  // No shell between us and argv: the ';' and '$' reach sh as one argument.
  spec.argv = {"sh", "-c", "echo out:$ZL_A; echo gone:${ZL_PROCESS_TEST_GONE-unset} >&2; pwd; exit 7"};
  spec.env_set = {{"ZL_A", "a b;c"}};
  spec.env_unset = {"ZL_PROCESS_TEST_GONE"};
  spec.cwd = dir_.string();
  spec.log_path = (dir_ / "child.log").string();
  std::ofstream(spec.log_path) << "before\n";
  const ChildResult r = zl::run_child(spec);
  ::unsetenv("ZL_PROCESS_TEST_GONE");
  EXPECT_TRUE(r.started) << r.spawn_error;
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.term_signal, 0);
  EXPECT_FALSE(r.timed_out);
  const std::string log = slurp(dir_ / "child.log");
  EXPECT_EQ(log.rfind("before\n", 0), 0u) << log;  // appended, not truncated
  EXPECT_NE(log.find("out:a b;c\n"), std::string::npos) << log;
  EXPECT_NE(log.find("gone:unset\n"), std::string::npos) << log;  // stderr too
  EXPECT_NE(log.find(fs::canonical(dir_).string() + "\n"), std::string::npos) << log;
}

TEST_F(Process, MissingProgramIsASpawnErrorNotAnExitCode) {
  ChildSpec spec;
  spec.argv = {(dir_ / "no-such-program").string()};
  const ChildResult r = zl::run_child(spec);
  EXPECT_FALSE(r.started);
  EXPECT_FALSE(r.spawn_error.empty());
}

TEST_F(Process, SignalAndTimeoutAreReportedAsSuch) {
  ChildSpec killed;
  killed.argv = {"sh", "-c", "kill -TERM $$"};
  const ChildResult k = zl::run_child(killed);
  EXPECT_TRUE(k.started);
  EXPECT_EQ(k.term_signal, SIGTERM);
  EXPECT_FALSE(k.timed_out);

  ChildSpec slow;
  slow.argv = {"sleep", "60"};
  const ChildResult t = zl::run_child(slow, 0.2);
  EXPECT_TRUE(t.started);
  EXPECT_TRUE(t.timed_out);
  EXPECT_NE(t.exit_code, 0);
}

TEST_F(Process, CaptureKeepsStdoutAndTellsFailure) {
  EXPECT_EQ(zl::capture_output({"printf", "a\\nb"}).value_or("?"), "a\nb");
  EXPECT_FALSE(zl::capture_output({"sh", "-c", "echo x; exit 3"}).has_value());
  zl::CaptureOptions o;
  o.with_stderr = true;
  const zl::Captured c = zl::capture({"sh", "-c", "echo err >&2; exit 2"}, o);
  EXPECT_TRUE(c.started);
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.output, "err\n");
}

TEST_F(Process, AKillTakesWhatTheChildStartedInASessionOfItsOwn) {
  zl::ChildProcess child(escaping_child(dir_ / "pid"));
  ASSERT_TRUE(child.start());
  const pid_t escaped = read_pid(dir_ / "pid", 10);
  ASSERT_GT(escaped, 0);
  const auto st = zl::proc_stat(escaped);
  ASSERT_TRUE(st.has_value());
  ASSERT_NE(st->pgid, child.pid());  // out of reach of the child's group
  child.stop(SIGKILL, 0, false, false);
  EXPECT_TRUE(gone_within(escaped, 5));
}

TEST_F(Process, ATimeoutTakesWhatTheChildStartedInASessionOfItsOwn) {
  // The child itself exits on SIGTERM here, so it is gone before any
  // SIGKILL: what it started is found from before the signal.
  const ChildResult r = zl::run_child(escaping_child(dir_ / "pid"), 2.0);
  EXPECT_TRUE(r.timed_out);
  const pid_t escaped = read_pid(dir_ / "pid", 0);
  ASSERT_GT(escaped, 0);
  EXPECT_TRUE(gone_within(escaped, 5));
}

}  // namespace
