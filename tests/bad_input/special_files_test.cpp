// Files zlcore reads that are not regular files: a FIFO made it wait forever
// (an --ops-file, a batch's ops_status.csv on --resume, a run's
// results.jsonl in compare, the probe cache), a link to /dev/zero made it
// read until memory ran out, and a directory given as --ops-file read as
// "no operators". Each is now one line naming the path and what it is.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <functional>

#include "../../core/src/util/file_kind.hpp"
#include "zlcore/atomic_file.hpp"
#include "zltest/fault_suite_batch.hpp"

namespace {

using zltest::TempDir;
namespace fs = std::filesystem;

void make_fifo(const fs::path& p) { ASSERT_EQ(::mkfifo(p.c_str(), 0644), 0) << p; }

std::string message_of(const std::function<void()>& read) {
  try {
    read();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SpecialFiles, TheSharedReaderRefusesWhatIsNotARegularFileWithoutBlocking) {
  TempDir tmp;
  make_fifo(tmp / "fifo");
  fs::create_directories(tmp / "dir");
  fs::create_symlink("/dev/zero", tmp / "zero");
  const std::string fifo = (tmp / "fifo").string(), dir = (tmp / "dir").string(), zero = (tmp / "zero").string();
  EXPECT_EQ(message_of([&] { zl::read_file(fifo); }), fifo + " is a FIFO (named pipe)");
  EXPECT_EQ(message_of([&] { zl::read_file(dir); }), dir + " is a directory");
  EXPECT_EQ(message_of([&] { zl::read_file(zero); }), zero + " is a character device");
}

TEST(SpecialFiles, TheSharedReaderStopsAtItsBound) {
  TempDir tmp;
  zltest::spit(tmp / "big", std::string(3 << 20, 'x'));
  const std::string big = (tmp / "big").string();
  EXPECT_EQ(message_of([&] { zl::read_regular_file(big, 1 << 20); }),
            big + " is larger than 1 MiB, more than zlcore reads from one file");
  EXPECT_EQ(zl::read_regular_file(big).size(), size_t{3} << 20);
}

TEST(SpecialFiles, AnOpsFileThatIsAFifoADeviceOrADirectoryIsNamedAsSuch) {
  TempDir tmp;
  make_fifo(tmp / "fifo");
  fs::create_directories(tmp / "dir");
  const std::vector<std::pair<std::string, std::string>> cases{{(tmp / "fifo").string(), "a FIFO (named pipe)"},
                                                               {"/dev/zero", "a character device"},
                                                               {(tmp / "dir").string(), "a directory"}};
  for (const auto& [path, what] : cases) {
    std::vector<std::string> args = zltest::batch_args(tmp / "b", "ok1", {"--cold"});
    // --ops-file in place of --ops.
    const auto ops = std::find(args.begin(), args.end(), "--ops");
    *ops = "--ops-file";
    *(ops + 1) = path;
    zltest::Ran r = zltest::zlcore(args, tmp.path(), zltest::batch_env(tmp, zltest::new_tag()), 30);
    EXPECT_EQ(r.exit_code, 2) << zltest::describe(r);
    EXPECT_EQ(r.err, "zlcore: --ops-file: " + path + " is " + what + "\n") << zltest::describe(r);
    EXPECT_FALSE(fs::exists(tmp / "b"));
  }
}

TEST(SpecialFiles, ABatchResumeWithAFifoForItsStatusFileStopsAtOnce) {
  TempDir tmp;
  const fs::path out = tmp / "b";
  fs::create_directories(out);
  make_fifo(out / "ops_status.csv");
  zltest::Ran r = zltest::zlcore(zltest::batch_args(out, "ok1", {"--cold", "--resume"}), tmp.path(),
                                 zltest::batch_env(tmp, zltest::new_tag()), 30);
  EXPECT_FALSE(r.timed_out) << zltest::describe(r);
  EXPECT_EQ(r.exit_code, 2) << zltest::describe(r);
  const std::string csv = (out / "ops_status.csv").string();
  EXPECT_EQ(r.err, "zlcore: cannot start on " + csv + ": " + csv + " is a FIFO (named pipe)\n") << zltest::describe(r);
  EXPECT_FALSE(fs::exists(out / "runs"));
}

TEST(SpecialFiles, CompareWithAFifoForResultsIsOneLine) {
  TempDir tmp;
  const fs::path b = tmp / "B";
  fs::copy(fs::path(ZL_COMPARE_DATA) / "report" / "b" / "runs" / "abs", b, fs::copy_options::recursive);
  fs::remove(b / "results.jsonl");
  make_fifo(b / "results.jsonl");
  zltest::Ran r =
      zltest::zlcore({"compare", (fs::path(ZL_COMPARE_DATA) / "report" / "a" / "runs" / "abs").string(), b.string()},
                     tmp.path(), {}, 30);
  EXPECT_FALSE(r.timed_out) << zltest::describe(r);
  EXPECT_EQ(r.exit_code, 2) << zltest::describe(r);
  EXPECT_EQ(r.err, "zlcore: compare: " + (b / "results.jsonl").string() + " is a FIFO (named pipe)\n")
      << zltest::describe(r);
}

TEST(SpecialFiles, AProbeCacheThatIsAFifoOrALinkToADeviceIsProbedAfresh) {
  TempDir tmp;
  const fs::path cache = tmp / "cache";
  const std::map<std::string, std::string> env{{"ZL_CACHE_DIR", cache.string()}};
  const std::vector<std::string> backends{"--backend-dir", ZL_BUILD_PLUGIN_DIR, "backends"};
  zltest::Ran first = zltest::zlcore(backends, tmp.path(), env, 60);
  ASSERT_EQ(first.exit_code, 0) << zltest::describe(first);
  fs::path file;
  for (const auto& e : fs::directory_iterator(cache)) {
    if (e.path().filename().string().rfind("probes-", 0) == 0) file = e.path();
  }
  ASSERT_FALSE(file.empty());
  for (int planted = 0; planted < 2; ++planted) {
    fs::remove(file);
    if (planted == 0) make_fifo(file);
    if (planted == 1) fs::create_symlink("/dev/zero", file);
    zltest::Ran r = zltest::zlcore(backends, tmp.path(), env, 60);
    EXPECT_FALSE(r.timed_out) << zltest::describe(r);
    EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
    EXPECT_EQ(r.out, first.out);
  }
}

}  // namespace
