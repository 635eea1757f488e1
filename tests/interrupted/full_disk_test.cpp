// A batch into a full file system recorded one row, then
// died (`cannot append to logs/...`): later ops got no row and identities
// stayed `running`. Now the op that hit the full disk is recorded `failed`
// with `No space left on device`, no other op starts, the batch's identity
// says `failed`, no identity is left `running`, and --resume finishes the
// batch once space is freed. Room for those last writes is kept aside
// (.space_reserve) from the start.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <optional>

#include "zlcore/atomic_file.hpp"
#include "zltest/fault_suite_batch.hpp"

namespace {

using zl::batch::Status;
using zltest::TempDir;
namespace fs = std::filesystem;

// Writes until the file system says no, in smaller and smaller pieces, so
// not even a page is left.
void fill(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  const std::string block(1 << 16, 'x');
  for (size_t piece = block.size(); piece >= 1; piece /= 4) {
    while (::write(fd, block.data(), piece) == static_cast<ssize_t>(piece)) {
    }
  }
  ::close(fd);
}

class Mounted {
 public:
  explicit Mounted(const fs::path& at) : at_(at) {
    fs::create_directories(at);
    ok_ = ::mount("tmpfs", at.c_str(), "tmpfs", 0, "size=8m") == 0;
    why_ = ok_ ? "" : std::strerror(errno);
  }
  ~Mounted() {
    if (ok_) ::umount2(at_.c_str(), MNT_DETACH);
  }
  bool ok() const { return ok_; }
  const std::string& why() const { return why_; }

 private:
  fs::path at_;
  bool ok_ = false;
  std::string why_;
};

// A batch started, the disk filled once `log` says its pytest is running,
// and how the batch ended; nullopt (a failure recorded) if pytest never ran.
std::optional<zltest::Ran> fill_the_disk_under(const TempDir& tmp, const std::vector<std::string>& args,
                                               const std::map<std::string, std::string>& env, const fs::path& log) {
  zltest::Started batch = zltest::start_zlcore(args, tmp.path(), env);
  if (!zltest::wait_until([&] { return zltest::file_has(log, "test session starts"); }, 60)) {
    ADD_FAILURE() << zltest::describe(zltest::finish(batch, 1));
    return std::nullopt;
  }
  fill(tmp / "disk" / "filler");
  return zltest::finish(batch, 120);
}

TEST(FullDisk, TheBatchStopsCleanlyAndResumeFinishesIt) {
  TempDir tmp;
  Mounted disk(tmp / "disk");
  if (!disk.ok()) GTEST_SKIP() << "cannot mount a small tmpfs here (" << disk.why() << "); needs root";
  zltest::TagGuard guard(zltest::new_tag());
  const fs::path out = tmp / "disk" / "b";
  const auto ran = fill_the_disk_under(tmp, zltest::batch_args(out, "sleep,ok1,ok2"),
                                       zltest::batch_env(tmp, guard.tag(), {{"ZL_SLEEP_OP_SECONDS", "3"}}),
                                       out / "runs" / "sleep" / "pytest.log");
  ASSERT_TRUE(ran);
  zltest::Ran r = *ran;

  EXPECT_EQ(r.exit_code, 1) << zltest::describe(r);
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << zltest::describe(r);
  EXPECT_NE(r.out.find("No space left on device (op sleep): no more ops start; free space, then --resume"),
            std::string::npos)
      << zltest::describe(r);
  auto rows = zltest::rows_of(out);
  ASSERT_EQ(rows.size(), 1u) << zltest::describe(r);
  EXPECT_EQ(rows[0].op, "sleep");
  EXPECT_EQ(rows[0].status, Status::failed);
  EXPECT_EQ(rows[0].reason.rfind("No space left on device", 0), 0u) << rows[0].reason;
  const std::string identity = zltest::slurp(out / "runs" / "sleep" / "run_identity.json");
  EXPECT_NE(identity.find("\"status\": \"failed\""), std::string::npos) << identity;
  EXPECT_NE(identity.find("\"disk_full\": true"), std::string::npos) << identity;
  EXPECT_FALSE(fs::exists(out / "runs" / "sleep" / ".child"));
  for (const auto& e : fs::directory_iterator(out / "runs")) {
    EXPECT_EQ(zltest::slurp(e.path() / "run_identity.json").find("\"running\""), std::string::npos) << e.path();
  }
  EXPECT_FALSE(fs::exists(out / "runs" / "ok1")) << "an op started after the disk was full";
  const std::string batch_identity = zltest::slurp(out / "batch_identity.json");
  EXPECT_NE(batch_identity.find("\"status\": \"failed\""), std::string::npos) << batch_identity;
  EXPECT_NE(batch_identity.find("No space left on device"), std::string::npos) << batch_identity;

  fs::remove(tmp / "disk" / "filler");
  r = zltest::zlcore(zltest::batch_args(out, "sleep,ok1,ok2", {"--resume"}), tmp.path(),
                     zltest::batch_env(tmp, guard.tag(), {{"ZL_SLEEP_OP_SECONDS", "0.1"}}), 120);
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  rows = zltest::rows_of(out);
  ASSERT_EQ(rows.size(), 4u) << zltest::describe(r);
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_EQ(rows[i].status, Status::passed) << rows[i].op;
  EXPECT_NE(zltest::slurp(out / "batch_identity.json").find("\"status\": \"finished\""), std::string::npos);
}

// The same in the compile-ahead pass: nothing is timed after the disk filled
// (no row, no runs/), and --resume with room compiles and times every op.
TEST(FullDisk, InTheCompileAheadPassNothingIsTimedAndResumeFinishes) {
  TempDir tmp;
  Mounted disk(tmp / "disk");
  if (!disk.ok()) GTEST_SKIP() << "cannot mount a small tmpfs here (" << disk.why() << "); needs root";
  zltest::TagGuard guard(zltest::new_tag());
  const fs::path out = tmp / "disk" / "b";
  const std::vector<std::string> ahead{"--compile-ahead", "2"};
  auto env = zltest::batch_env(tmp, guard.tag(),
                               {{"ZL_SLEEP_OP_SECONDS", "3"}, {"TRITON_CACHE_DIR", (tmp / "triton").string()}});
  const auto ran = fill_the_disk_under(tmp, zltest::batch_args(out, "sleep,ok1", ahead), env,
                                       out / "compile" / "sleep" / "pytest.log");
  ASSERT_TRUE(ran);
  zltest::Ran r = *ran;

  EXPECT_EQ(r.exit_code, 1) << zltest::describe(r);
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << zltest::describe(r);
  EXPECT_NE(r.out.find("No space left on device"), std::string::npos) << zltest::describe(r);
  EXPECT_TRUE(zltest::rows_of(out).empty()) << zltest::describe(r);
  EXPECT_FALSE(fs::exists(out / "runs")) << "an op was timed after the disk was full";
  for (const auto& e : fs::directory_iterator(out / "compile")) {
    EXPECT_EQ(zltest::slurp(e.path() / "run_identity.json").find("\"running\""), std::string::npos) << e.path();
  }
  EXPECT_NE(zltest::slurp(out / "batch_identity.json").find("\"status\": \"failed\""), std::string::npos);
  EXPECT_TRUE(zltest::wait_until([&] { return zltest::tagged(guard.tag()).empty(); }, 10))
      << "a process of the batch outlived it";

  fs::remove(tmp / "disk" / "filler");
  env["ZL_SLEEP_OP_SECONDS"] = "0.1";
  std::vector<std::string> resume = ahead;
  resume.push_back("--resume");
  r = zltest::zlcore(zltest::batch_args(out, "sleep,ok1", resume), tmp.path(), env, 120);
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  const auto rows = zltest::rows_of(out);
  ASSERT_EQ(rows.size(), 2u) << zltest::describe(r);
  for (const auto& row : rows) EXPECT_EQ(row.status, Status::passed) << row.op;
  EXPECT_NE(zltest::slurp(out / "batch_identity.json").find("\"status\": \"finished\""), std::string::npos);
}

// A short write (the file system filled mid-record) used to leave its part
// of the record behind, and the retry after room was freed then ran on
// behind it as one garbled line: the row was lost to every reader.
TEST(FullDisk, AnAppendThatDoesNotFitLeavesNoPartOfItsRecord) {
  TempDir tmp;
  Mounted disk(tmp / "disk");
  if (!disk.ok()) GTEST_SKIP() << "cannot mount a small tmpfs here (" << disk.why() << "); needs root";
  const fs::path csv = tmp / "disk" / "rounds.csv";
  zl::append_record(csv.string(), "op,round\n");
  fill(tmp / "disk" / "filler");
  // Longer than what is left of the file's last page, which still takes it in part.
  const std::string record = std::string(3 * 4096, 'y') + "\n";
  EXPECT_THROW(zl::append_record(csv.string(), record), zl::WriteError);
  EXPECT_EQ(zltest::slurp(csv), "op,round\n");

  fs::remove(tmp / "disk" / "filler");
  zl::append_record(csv.string(), "abs,1\n");
  EXPECT_EQ(zltest::slurp(csv), "op,round\nabs,1\n");
}

}  // namespace
