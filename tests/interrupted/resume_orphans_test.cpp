// --resume did not see ops still running. After `kill -9`
// of a --cold batch its op kept running as an orphan; --resume moved the
// orphan's directory aside and started the op again, and the orphan then
// wrote into the new attempt's results: two runs on one device at once. Each
// op in flight now leaves a lease, and --resume waits for a live orphan
// (recording what it measured) or, with --orphans kill, kills its group,
// saying which; the orphan's directory is never reused while it lives.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sstream>

#include "../../core/src/ab/runner_parts.hpp"
#include "zltest/fault_suite_batch.hpp"

namespace {

using zl::batch::Status;
using zltest::TempDir;
namespace fs = std::filesystem;

// The tagged processes that lead a session of their own: what the `sleep`
// op started with ZL_SLEEP_OP_ESCAPE.
std::vector<pid_t> escaped(const std::string& tag) {
  std::vector<pid_t> out;
  for (pid_t pid : zltest::tagged(tag)) {
    if (::getsid(pid) == pid) out.push_back(pid);
  }
  return out;
}

// A --cold batch of `sleep` (long) and ok1, SIGKILLed while sleep runs: the
// orphan is left running. Returns its lease's text.
// With `escape`, the op has also started a process in a session of its own.
std::string kill_batch_mid_op(const TempDir& tmp, const fs::path& out, const std::string& tag, bool escape = false) {
  std::map<std::string, std::string> env = {{"ZL_SLEEP_OP_SECONDS", "4"}};
  if (escape) env["ZL_SLEEP_OP_ESCAPE"] = "120";
  zltest::Started batch = zltest::start_zlcore(zltest::batch_args(out, "sleep,ok1", {"--cold"}), tmp.path(),
                                               zltest::batch_env(tmp, tag, env));
  const fs::path lease = out / "leases" / "sleep.json";
  EXPECT_TRUE(zltest::wait_until(
      [&] {
        return fs::exists(lease) && zltest::file_has(out / "runs" / "sleep" / "pytest.log", "test session starts") &&
               (!escape || !escaped(tag).empty());
      },
      60))
      << zltest::describe(zltest::finish(batch, 1));
  ::kill(batch.pid, SIGKILL);
  zltest::finish(batch, 10);
  return zltest::slurp(lease);
}

size_t result_lines(const fs::path& run) { return zltest::count_lines(zltest::slurp(run / "results.jsonl")); }

TEST(ResumeOrphans, ALiveOrphanIsWaitedForAndItsResultKept) {
  TempDir tmp;
  zltest::TagGuard guard(zltest::new_tag());
  const fs::path out = tmp / "b";
  const std::string lease = kill_batch_mid_op(tmp, out, guard.tag());
  ASSERT_NE(lease.find("\"op\": \"sleep\""), std::string::npos) << lease;
  ASSERT_FALSE(zltest::tagged(guard.tag()).empty()) << "the orphan should still be running";

  zltest::Ran r = zltest::zlcore(zltest::batch_args(out, "sleep,ok1", {"--cold", "--resume"}), tmp.path(),
                                 zltest::batch_env(tmp, guard.tag()), 120);
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  EXPECT_NE(r.out.find("op sleep: its run from an earlier batch is still running (pid "), std::string::npos)
      << zltest::describe(r);
  EXPECT_NE(r.out.find("; waiting for it to end (--orphans kill stops it instead)"), std::string::npos)
      << zltest::describe(r);
  EXPECT_NE(r.out.find("op sleep: its earlier run ended passed; recorded"), std::string::npos) << zltest::describe(r);
  const auto rows = zltest::rows_of(out);
  ASSERT_EQ(rows.size(), 2u) << zltest::describe(r);
  EXPECT_EQ(rows[0].op, "sleep");
  EXPECT_EQ(rows[0].status, Status::passed);
  EXPECT_EQ(rows[0].run_dir, "runs/sleep");
  EXPECT_NE(rows[0].reason.find("recorded by --resume"), std::string::npos) << rows[0].reason;
  EXPECT_EQ(rows[1].op, "ok1");
  // The orphan's directory was never moved or shared: one run's rows.
  EXPECT_EQ(result_lines(out / "runs" / "sleep"), 1u);
  EXPECT_FALSE(fs::exists(out / "runs" / "sleep.attempt1"));
  EXPECT_FALSE(fs::exists(out / "leases" / "sleep.json"));
  EXPECT_TRUE(zltest::tagged(guard.tag()).empty());
}

TEST(ResumeOrphans, OrphansKillStopsItsGroupAndNeverReusesItsDirectory) {
  TempDir tmp;
  zltest::TagGuard guard(zltest::new_tag());
  const fs::path out = tmp / "b";
  kill_batch_mid_op(tmp, out, guard.tag());
  ASSERT_FALSE(zltest::tagged(guard.tag()).empty()) << "the orphan should still be running";

  zltest::Ran r =
      zltest::zlcore(zltest::batch_args(out, "sleep,ok1", {"--cold", "--resume", "--orphans", "kill"}), tmp.path(),
                     zltest::batch_env(tmp, guard.tag(), {{"ZL_SLEEP_OP_SECONDS", "0.2"}}), 120);
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  EXPECT_NE(r.out.find("; killing its processes (--orphans kill)"), std::string::npos) << zltest::describe(r);
  const auto rows = zltest::rows_of(out);
  ASSERT_EQ(rows.size(), 2u) << zltest::describe(r);
  for (const auto& row : rows) EXPECT_EQ(row.status, Status::passed) << row.op;
  // The killed run stays aside, whole; the new attempt has only its own rows.
  EXPECT_TRUE(fs::exists(out / "runs" / "sleep.attempt1" / "run_identity.json"));
  EXPECT_EQ(result_lines(out / "runs" / "sleep.attempt1"), 0u) << "the killed run cannot have measured";
  EXPECT_EQ(result_lines(out / "runs" / "sleep"), 1u);
  EXPECT_TRUE(zltest::tagged(guard.tag()).empty());
}

// What the orphan started outside its group goes with it: --orphans kill
// takes the run's whole tree (util/process_tree.hpp), not its group alone.
TEST(ResumeOrphans, OrphansKillTakesWhatTheRunStartedInASessionOfItsOwn) {
  TempDir tmp;
  zltest::TagGuard guard(zltest::new_tag());
  const fs::path out = tmp / "b";
  kill_batch_mid_op(tmp, out, guard.tag(), true);
  const std::vector<pid_t> outside = escaped(guard.tag());
  ASSERT_FALSE(outside.empty()) << "the op should have started a process in a session of its own";

  zltest::Ran r =
      zltest::zlcore(zltest::batch_args(out, "sleep,ok1", {"--cold", "--resume", "--orphans", "kill"}), tmp.path(),
                     zltest::batch_env(tmp, guard.tag(), {{"ZL_SLEEP_OP_SECONDS", "0.2"}}), 120);
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  EXPECT_TRUE(zltest::wait_until([&] { return zltest::tagged(guard.tag()).empty(); }, 5))
      << "left running: pid " << outside.front();
}

// A lease, as zlcore writes it, for a process this test started: its pid,
// group and start time, this boot and host, and `batch_dir`.
std::string lease_of(pid_t pid, const fs::path& batch_dir, const std::string& op, const std::string& run_dir) {
  const std::string stat = zltest::slurp("/proc/" + std::to_string(pid) + "/stat");
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::vector<std::string> f;
  for (std::string w; fields >> w;) f.push_back(w);
  std::string boot = zltest::slurp("/proc/sys/kernel/random/boot_id");
  boot.erase(boot.find_last_not_of("\n") + 1);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return "{\"op\": \"" + op + "\", \"run_dir\": \"" + run_dir + "\", \"batch_dir\": \"" + batch_dir.string() +
         "\", \"pid\": " + std::to_string(pid) + ", \"pgid\": " + f[2] + ", \"start_ticks\": " + f[19] +
         ", \"boot_id\": \"" + boot + "\", \"host\": \"" + host + "\"}\n";
}

// Whether a process this test started is still running: kill(pid, 0) also
// succeeds for one that was killed and not yet waited for.
bool running(pid_t child) {
  int status = 0;
  return ::waitpid(child, &status, WNOHANG) == 0;
}

// A process that works for another batch directory as a run of it would:
// pytest carries ZL_RUN_DIR=<that directory>/... in its environment, and it
// leads a process group of its own, as a cold run does.
zltest::Started run_of_another_batch(const TempDir& tmp, const fs::path& other, const std::string& tag) {
  return zltest::start({"/bin/sleep", "30"},
                       {{zltest::kTagVariable, tag}, {"ZL_RUN_DIR", (other / "runs" / "ok1").string()}}, tmp.path());
}

// A lease is a file in a directory others may write: one naming a process
// that does not work for this batch must not make --resume kill it.
TEST(ResumeOrphans, AForgedLeaseKillsNothing) {
  TempDir tmp;
  zltest::TagGuard guard(zltest::new_tag());
  zltest::Started victim = zltest::start({"/bin/sleep", "30"}, {{zltest::kTagVariable, guard.tag()}}, tmp.path());
  ASSERT_GT(victim.pid, 0);
  const fs::path out = tmp / "b";
  zltest::spit(out / "ops_status.csv", zl::batch::csv_header());
  zltest::spit(out / "leases" / "ok1.json", lease_of(victim.pid, out, "ok1", "runs/ok1"));
  zltest::Ran r = zltest::zlcore(zltest::batch_args(out, "ok1", {"--cold", "--resume", "--orphans", "kill"}),
                                 tmp.path(), zltest::batch_env(tmp, zltest::new_tag()), 120);
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  EXPECT_EQ(r.out.find("killing"), std::string::npos) << zltest::describe(r);
  EXPECT_TRUE(running(victim.pid)) << "the forged lease's process was killed";
  EXPECT_FALSE(fs::exists(out / "leases" / "ok1.json"));
  ::kill(victim.pid, SIGKILL);
  zltest::finish(victim, 5);
}

// A lease copied from another batch directory names that batch's live run,
// which does carry that directory: --resume here must not kill it (nor wait
// for it), only say so in one line and run the op itself.
TEST(ResumeOrphans, ALeaseNamingAnotherBatchDirectoryLeavesThatBatchsRunAlone) {
  TempDir tmp;
  zltest::TagGuard guard(zltest::new_tag());
  const fs::path out = tmp / "b", other = tmp / "other";
  fs::create_directories(other / "runs" / "ok1");
  zltest::Started victim = run_of_another_batch(tmp, other, guard.tag());
  ASSERT_GT(victim.pid, 0);
  ASSERT_TRUE(zltest::wait_until([&] { return zltest::tagged(guard.tag()).size() == 1; }, 5));
  zltest::spit(out / "ops_status.csv", zl::batch::csv_header());
  zltest::spit(out / "leases" / "ok1.json", lease_of(victim.pid, other, "ok1", "runs/ok1"));
  zltest::Ran r = zltest::zlcore(zltest::batch_args(out, "ok1", {"--cold", "--resume", "--orphans", "kill"}),
                                 tmp.path(), zltest::batch_env(tmp, zltest::new_tag()), 120);
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  EXPECT_TRUE(running(victim.pid)) << "another directory's run was killed\n" << zltest::describe(r);
  EXPECT_NE(r.out.find("ignoring ok1.json in leases/: it names another directory (" + other.string() +
                       "), whose processes (pid " + std::to_string(victim.pid) +
                       ") are not this one's to wait for or kill; left alone\n"),
            std::string::npos)
      << zltest::describe(r);
  EXPECT_EQ(r.out.find("killing"), std::string::npos) << zltest::describe(r);
  const auto rows = zltest::rows_of(out);
  ASSERT_EQ(rows.size(), 1u) << zltest::describe(r);
  EXPECT_EQ(rows[0].status, Status::passed);
  ::kill(victim.pid, SIGKILL);
  zltest::finish(victim, 5);
}

// The same for ab: its --resume kills what its own leases name before any
// round runs (core/src/ab/orphans.cpp), and must leave another directory's
// run alone.
TEST(ResumeOrphans, AnAbResumeLeavesAnotherDirectorysRunAlone) {
  TempDir tmp;
  zltest::TagGuard guard(zltest::new_tag());
  const fs::path ab = tmp / "ab", other = tmp / "other";
  fs::create_directories(other / "runs" / "ok1");
  zltest::Started victim = run_of_another_batch(tmp, other, guard.tag());
  ASSERT_GT(victim.pid, 0);
  ASSERT_TRUE(zltest::wait_until([&] { return zltest::tagged(guard.tag()).size() == 1; }, 5));
  zltest::spit(ab / "leases" / "ok1.r1-t1.B.json", lease_of(victim.pid, other, "ok1", "runs/ok1/r1-t1/B"));
  std::ostringstream said;
  EXPECT_EQ(zl::ab::stop_orphan_runs(ab.string(), said), "");
  EXPECT_TRUE(running(victim.pid)) << "another directory's run was killed\n" << said.str();
  EXPECT_EQ(said.str(), "ignoring ok1.r1-t1.B.json in leases/: it names another directory (" + other.string() +
                            "), whose processes (pid " + std::to_string(victim.pid) +
                            ") are not this one's to wait for or kill; left alone\n");
  // The ab's own run, named by a lease of its own directory, is still stopped.
  zltest::Started own =
      zltest::start({"/bin/sleep", "30"},
                    {{zltest::kTagVariable, guard.tag()}, {"ZL_RUN_DIR", (ab / "runs" / "x").string()}}, tmp.path());
  ASSERT_TRUE(zltest::wait_until([&] { return zltest::tagged(guard.tag()).size() == 2; }, 5));
  zltest::spit(ab / "leases" / "ok1.r2-t1.A.json", lease_of(own.pid, ab, "ok1", "runs/ok1/r2-t1/A"));
  said.str("");
  EXPECT_EQ(zl::ab::stop_orphan_runs(ab.string(), said), "");
  EXPECT_NE(said.str().find("is still running (pid " + std::to_string(own.pid) + "); killing it"), std::string::npos)
      << said.str();
  zltest::finish(own, 5);
  EXPECT_TRUE(running(victim.pid));
  ::kill(victim.pid, SIGKILL);
  zltest::finish(victim, 5);
}

}  // namespace
