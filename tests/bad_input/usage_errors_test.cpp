// Usage errors that came out as `internal error`, exit 1:
// `--shape-mode file` without a file (run and batch), and a batch --out that
// is a file or cannot be written. Each is one line now, with the exit code
// docs/cli.md gives it: 2, a bad command line (a shape file that is named but
// missing is the preflight check, exit 3).
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>

#include "zltest/fault_suite_batch.hpp"

namespace {

using zltest::TempDir;
namespace fs = std::filesystem;

void expect_one_line(const zltest::Ran& r, int code, const std::string& line) {
  EXPECT_EQ(r.exit_code, code) << zltest::describe(r);
  EXPECT_EQ(r.err, line + "\n") << zltest::describe(r);
}

const std::string kNoShapeFile = "zlcore: --shape-mode file needs a shape file: give --shape-file F (or SHAPE_FILE)";
const std::string kNoShapeFileEnv = "zlcore: SHAPE_MODE=file needs a shape file: give --shape-file F (or SHAPE_FILE)";

TEST(UsageErrors, ShapeModeFileWithoutAFile) {
  TempDir tmp;
  zltest::Ran r = zltest::zlcore(
      {"--backend-dir", ZL_BUILD_PLUGIN_DIR, "run", "--backend", "host", "--flaggems-dir", ZL_FAULT_SUITE, "--op",
       "ok1", "--python", "/usr/bin/python3", "--shape-mode", "file", "--out", (tmp / "r").string()},
      tmp.path());
  expect_one_line(r, 2, kNoShapeFile);
  EXPECT_FALSE(fs::exists(tmp / "r"));
  r = zltest::zlcore(zltest::batch_args(tmp / "b", "ok1", {"--shape-mode", "file"}), tmp.path());
  expect_one_line(r, 2, kNoShapeFile);
  r = zltest::zlcore(zltest::batch_args(tmp / "b", "ok1"), tmp.path(), {{"SHAPE_MODE", "file"}});
  expect_one_line(r, 2, kNoShapeFileEnv);
  EXPECT_FALSE(fs::exists(tmp / "b")) << "a batch that cannot run created its directory";
}

TEST(UsageErrors, ABatchOutThatIsAFile) {
  TempDir tmp;
  zltest::spit(tmp / "taken", "a file\n");
  zltest::Ran r = zltest::zlcore(zltest::batch_args(tmp / "taken", "ok1"), tmp.path());
  expect_one_line(r, 2,
                  "zlcore: --out " + (tmp / "taken").string() + " is a file, not a directory; choose another --out");
  r = zltest::zlcore(zltest::batch_args(tmp / "taken" / "b", "ok1"), tmp.path());
  expect_one_line(r, 2, "zlcore: cannot create --out " + (tmp / "taken" / "b").string() + ": Not a directory");
  EXPECT_EQ(zltest::slurp(tmp / "taken"), "a file\n");
}

// Root writes anywhere it has a file system to write: a read-only mount is
// the one place it cannot.
TEST(UsageErrors, ABatchOutThatCannotBeWritten) {
  TempDir tmp;
  const fs::path ro = tmp / "ro";
  fs::create_directories(ro);
  if (::mount("tmpfs", ro.c_str(), "tmpfs", MS_RDONLY, "size=1m") != 0) {
    GTEST_SKIP() << "cannot mount a read-only tmpfs here (" << std::strerror(errno) << "); needs root";
  }
  zltest::Ran in_it = zltest::zlcore(zltest::batch_args(ro, "ok1"), tmp.path());
  zltest::Ran below = zltest::zlcore(zltest::batch_args(ro / "b", "ok1"), tmp.path());
  ::umount(ro.c_str());
  expect_one_line(in_it, 2, "zlcore: cannot write in --out " + ro.string() + ": Read-only file system");
  expect_one_line(below, 2, "zlcore: cannot create --out " + (ro / "b").string() + ": Read-only file system");
}

// Root is refused nothing on a writable file system: the refusal a user
// meets comes from running zlcore as nobody (setpriv, argv only), in a
// directory of root's that nobody may not enter.
struct Closed {
  fs::path dir;    // 0700, root's
  fs::path shown;  // a path below it
};

std::optional<Closed> closed_to_nobody(const TempDir& tmp) {
  if (::geteuid() != 0 || !fs::exists("/usr/bin/setpriv")) return std::nullopt;
  fs::permissions(tmp.path(), fs::perms(0755));
  Closed c{tmp / "closed", tmp / "closed" / "out"};
  fs::create_directories(c.shown);
  fs::permissions(c.dir, fs::perms(0700));
  return c;
}

zltest::Ran as_nobody(const TempDir& tmp, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", ZL_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  return zltest::run(argv, {{"HOME", "/nonexistent"}, {"ZL_CACHE_DIR", "-"}}, 60, tmp.path());
}

TEST(UsageErrors, ABatchOutThatMayNotBeEnteredIsOneLineNamingIt) {
  TempDir tmp;
  const auto closed = closed_to_nobody(tmp);
  if (!closed) GTEST_SKIP() << "needs root and setpriv to run zlcore as nobody";
  zltest::Ran r = as_nobody(tmp, zltest::batch_args(closed->shown, "ok1"));
  EXPECT_EQ(r.exit_code, 2) << zltest::describe(r);
  EXPECT_EQ(zltest::count_lines(r.err), 1u) << zltest::describe(r);
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << zltest::describe(r);
  EXPECT_NE(r.err.find(closed->shown.string()), std::string::npos) << zltest::describe(r);
  EXPECT_NE(r.err.find("Permission denied"), std::string::npos) << zltest::describe(r);
}

TEST(UsageErrors, AnAbOutThatMayNotBeEnteredIsOneLineNamingIt) {
  TempDir tmp;
  const auto closed = closed_to_nobody(tmp);
  if (!closed) GTEST_SKIP() << "needs root and setpriv to run zlcore as nobody";
  zltest::Ran r =
      as_nobody(tmp, {"--backend-dir", ZL_BUILD_PLUGIN_DIR, "ab", "--backend", "host", "--a", ZL_FAULT_SUITE, "--b",
                      ZL_FAULT_SUITE, "--ops", "ok1", "--a-python", "/usr/bin/python3", "--b-python",
                      "/usr/bin/python3", "--out", closed->shown.string()});
  EXPECT_EQ(r.exit_code, 2) << zltest::describe(r);
  EXPECT_EQ(zltest::count_lines(r.err), 1u) << zltest::describe(r);
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << zltest::describe(r);
  EXPECT_NE(r.err.find(closed->shown.string()), std::string::npos) << zltest::describe(r);
}

TEST(UsageErrors, ACalibrationOutThatMayNotBeWrittenIsOneLineNamingIt) {
  TempDir tmp;
  const auto closed = closed_to_nobody(tmp);
  if (!closed) GTEST_SKIP() << "needs root and setpriv to run zlcore as nobody";
  const std::string run = ZL_COMPARE_DATA "/verdicts/a", other = ZL_COMPARE_DATA "/verdicts/b";
  zltest::Ran r = as_nobody(tmp, {"compare", "--calibrate", run, other, "--out", (closed->shown / "f.json").string()});
  EXPECT_EQ(r.exit_code, 2) << zltest::describe(r);
  EXPECT_EQ(zltest::count_lines(r.err), 1u) << zltest::describe(r);
  EXPECT_NE(r.err.find((closed->shown / "f.json").string()), std::string::npos) << zltest::describe(r);
}

// The default run directory goes under runs/ in the working directory: a
// read-only one is said to be that, not "No such file or directory".
TEST(UsageErrors, AReadOnlyWorkingDirectoryIsNamedAsSuch) {
  TempDir tmp;
  const fs::path ro = tmp / "ro";
  fs::create_directories(ro);
  if (::mount("tmpfs", ro.c_str(), "tmpfs", MS_RDONLY, "size=1m") != 0) {
    GTEST_SKIP() << "cannot mount a read-only tmpfs here (" << std::strerror(errno) << "); needs root";
  }
  zltest::Ran r = zltest::zlcore({"--backend-dir", ZL_BUILD_PLUGIN_DIR, "run", "--backend", "host", "--flaggems-dir",
                                  ZL_FAULT_SUITE, "--op", "ok1", "--python", "/usr/bin/python3"},
                                 tmp.path(), {}, 60, ro);
  ::umount(ro.c_str());
  expect_one_line(r, 2,
                  "zlcore: cannot create " + (ro / "runs").string() +
                      " for the run directory: Read-only file system (the default is runs/ in the working "
                      "directory; choose --out)");
}

}  // namespace

// A command line with several bad inputs: `run` and `batch` name the same
// first one (the backend, then the options both take in one order, then
// their own), so fixing what one says never leaves the other saying
// something else first.
TEST(UsageErrors, RunAndBatchNameTheSameFirstOfSeveralFaults) {
  TempDir tmp;
  zltest::spit(tmp / "file", "a file\n");
  const std::map<std::string, std::vector<std::string>> bad = {
      {"backend", {"--backend", "nope"}},   {"flaggems", {"--flaggems-dir", (tmp / "nope").string()}},
      {"dtypes", {"--dtypes", "float99"}},  {"out", {"--out", (tmp / "file" / "x").string()}},
      {"level", {"--level", "weird"}},      {"timeout", {"--timeout", "-5"}},
      {"repeat", {"--direct-repeat", "0"}},
  };
  const std::vector<std::vector<std::string>> combos = {
      {"backend", "flaggems"},       {"backend", "dtypes"}, {"backend", "out"},   {"flaggems", "dtypes"},
      {"flaggems", "out"},           {"dtypes", "out"},     {"level", "backend"}, {"timeout", "backend"},
      {"repeat", "backend"},         {"dtypes", "timeout"}, {"out", "level"},     {"backend", "dtypes", "out"},
      {"flaggems", "dtypes", "out"},
  };
  auto line_of = [&](const std::string& command, const std::vector<std::string>& faults) {
    std::vector<std::string> argv{"--backend-dir", ZL_BUILD_PLUGIN_DIR, command};
    if (command == "run") {
      argv.insert(argv.end(), {"--op", "ok1"});
    } else {
      argv.insert(argv.end(), {"--ops", "ok1", "--no-idle-check"});
    }
    std::map<std::string, std::vector<std::string>> given = {{"backend", {"--backend", "host"}},
                                                             {"flaggems", {"--flaggems-dir", ZL_FAULT_SUITE}}};
    for (const std::string& f : faults) given[f] = bad.at(f);
    for (const auto& [name, words] : given) argv.insert(argv.end(), words.begin(), words.end());
    const zltest::Ran r = zltest::zlcore(argv, tmp.path());
    return std::to_string(r.exit_code) + " " + r.err.substr(0, r.err.find('\n'));
  };
  for (const std::vector<std::string>& faults : combos) {
    std::string shown;
    for (const std::string& f : faults) shown += f + " ";
    const std::string run = line_of("run", faults), batch = line_of("batch", faults);
    EXPECT_EQ(run, batch) << "faults: " << shown;
    if (std::find(faults.begin(), faults.end(), "backend") != faults.end()) {
      EXPECT_EQ(run.rfind("2 zlcore: unknown backend 'nope'", 0), 0u) << "faults: " << shown << run;
    }
  }
  EXPECT_FALSE(fs::exists(tmp / "runs")) << "a command refused wrote its directory";
}
