// The warm workers' socket directory: what a killed batch left in /tmp is
// removed by the next batch, a live batch's is kept, and nothing else is
// touched.
#include "batch/socket_dir.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "zltest/files.hpp"
#include "zltest/temp_dir.hpp"

namespace fs = std::filesystem;
using zl::batch::remove_abandoned_socket_dirs;
using zl::batch::SocketDir;

namespace {

// The directory a process made before SIGKILL ended it: its destructor never ran.
std::string left_by_a_killed_process(const fs::path& parent) {
  int fds[2];
  if (::pipe(fds) != 0) return "";
  const pid_t pid = ::fork();
  if (pid == 0) {
    auto* dir = new SocketDir(parent.string());  // never deleted: the process is killed
    const std::string made = dir->path() + "\n";
    if (::write(fds[1], made.data(), made.size()) < 0) _exit(1);
    ::pause();
    _exit(0);
  }
  ::close(fds[1]);
  std::string made;
  char c = 0;
  while (::read(fds[0], &c, 1) == 1 && c != '\n') made += c;
  ::close(fds[0]);
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return made;
}

TEST(SocketDir, AKilledBatchsDirectoryIsRemovedByTheNextOne) {
  zltest::TempDir tmp{"zl-sockdir"};
  const std::string abandoned = left_by_a_killed_process(tmp.path());
  ASSERT_FALSE(abandoned.empty());
  ASSERT_TRUE(fs::is_regular_file(fs::path(abandoned) / "owner"));
  zltest::spit(fs::path(abandoned) / "d0-1.sock.exit", "signal 9\n");

  const SocketDir next(tmp.path().string());
  EXPECT_FALSE(fs::exists(abandoned));
  EXPECT_TRUE(fs::is_directory(next.path()));
}

TEST(SocketDir, ALiveBatchsDirectoryIsKeptAndRemovedWhenItEnds) {
  zltest::TempDir tmp{"zl-sockdir"};
  std::string first_path;
  {
    const SocketDir first(tmp.path().string());
    first_path = first.path();
    ASSERT_FALSE(first_path.empty());
    struct stat st {};
    ASSERT_EQ(::lstat(first_path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    EXPECT_EQ(fs::path(first_path).filename().string().rfind("zlw-", 0), 0u) << first_path;
    // Its lock is held (another open file, even in this process, cannot take it).
    EXPECT_EQ(remove_abandoned_socket_dirs(tmp.path().string()), 0);
    const SocketDir second(tmp.path().string());
    EXPECT_TRUE(fs::is_directory(first_path));
    EXPECT_NE(second.path(), first_path);
  }
  EXPECT_FALSE(fs::exists(first_path));
}

TEST(SocketDir, OnlyOurOwnDirectoriesWithAnUnheldOwnerAreTouched) {
  zltest::TempDir tmp{"zl-sockdir"};
  // A link named like ours, to a directory whose owner nobody holds: neither
  // the link nor its target goes.
  const fs::path target = tmp / "kept";
  zltest::spit(target / "owner", "");
  zltest::spit(target / "precious", "x");
  fs::create_directory_symlink(target, tmp / "zlw-link00");
  // Without an owner file: a zlcore before the lock, or one being made.
  fs::create_directories(tmp / "zlw-nolock");
  zltest::spit(tmp / "zlw-nolock" / ".owner", "");
  // Not a directory; not our prefix.
  zltest::spit(tmp / "zlw-file00", "a file");
  zltest::spit(tmp / "other" / "owner", "");

  EXPECT_EQ(remove_abandoned_socket_dirs(tmp.path().string()), 0);
  EXPECT_TRUE(fs::exists(target / "precious"));
  EXPECT_TRUE(fs::is_symlink(tmp / "zlw-link00"));
  EXPECT_TRUE(fs::is_directory(tmp / "zlw-nolock"));
  EXPECT_TRUE(fs::is_regular_file(tmp / "zlw-file00"));
  EXPECT_TRUE(fs::exists(tmp / "other" / "owner"));
}

}  // namespace
