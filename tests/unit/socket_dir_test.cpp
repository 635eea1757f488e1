// The warm workers' socket directory: what a killed batch left in /tmp is
// removed by the next batch, and nothing else is.
#include "batch/socket_dir.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "zltest/files.hpp"
#include "zltest/temp_dir.hpp"

namespace fs = std::filesystem;

namespace {

// The pid of a process that has exited and been reaped.
pid_t gone_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) _exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

std::string dir_name(pid_t pid, const std::string& tail = "a1B2c3") {
  return "zlw-" + std::to_string(pid) + "-" + tail;
}

TEST(SocketDir, AKilledBatchsDirectoryIsRemovedAndALiveOnesKept) {
  zltest::TempDir tmp{"zl-sockdir"};
  const pid_t dead = gone_pid();
  const fs::path abandoned = tmp / dir_name(dead), live_parent = tmp / dir_name(::getppid()),
                 own = tmp / dir_name(::getpid());
  for (const fs::path& d : {abandoned, live_parent, own}) fs::create_directories(d);
  zltest::spit(abandoned / "d0-1.sock.exit", "signal 9\n");

  EXPECT_EQ(zl::batch::remove_abandoned_socket_dirs(tmp.path().string()), 1);
  EXPECT_FALSE(fs::exists(abandoned));
  EXPECT_TRUE(fs::is_directory(live_parent));
  EXPECT_TRUE(fs::is_directory(own));
}

TEST(SocketDir, OnlyOurOwnDirectoriesOfThatExactNameAreTouched) {
  zltest::TempDir tmp{"zl-sockdir"};
  const pid_t dead = gone_pid();
  // A link named like an abandoned directory: neither it nor its target goes.
  const fs::path target = tmp / "kept";
  fs::create_directories(target);
  zltest::spit(target / "precious", "x");
  fs::create_directory_symlink(target, tmp / dir_name(dead));
  // Names that only look like ours.
  for (const std::string& name :
       std::vector<std::string>{"zlw-" + std::to_string(dead) + "-ab", "zlw-abc-a1B2c3", "zlw-a1B2c3", "zlw--a1B2c3",
                                "zlw-" + std::to_string(dead) + "-a1B2c3x"}) {
    fs::create_directories(tmp / name);
  }
  zltest::spit(tmp / dir_name(dead, "file00"), "a file, not a directory");

  EXPECT_EQ(zl::batch::remove_abandoned_socket_dirs(tmp.path().string()), 0);
  EXPECT_TRUE(fs::exists(target / "precious"));
  EXPECT_TRUE(fs::is_symlink(tmp / dir_name(dead)));
  EXPECT_TRUE(fs::exists(tmp / "zlw-a1B2c3"));
  EXPECT_TRUE(fs::exists(tmp / dir_name(dead, "file00")));
}

TEST(SocketDir, MakeSweepsThenMakesAPrivateDirectoryNamedAfterThisProcess) {
  zltest::TempDir tmp{"zl-sockdir"};
  const fs::path abandoned = tmp / dir_name(gone_pid());
  fs::create_directories(abandoned);
  const std::string made = zl::batch::make_socket_dir(tmp.path().string());
  ASSERT_FALSE(made.empty());
  EXPECT_FALSE(fs::exists(abandoned));
  EXPECT_EQ(fs::path(made).filename().string().rfind("zlw-" + std::to_string(::getpid()) + "-", 0), 0u) << made;
  struct stat st {};
  ASSERT_EQ(::lstat(made.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  // A second batch of the same process keeps the first one's directory.
  const std::string again = zl::batch::make_socket_dir(tmp.path().string());
  EXPECT_NE(again, made);
  EXPECT_TRUE(fs::is_directory(made));
}

}  // namespace
