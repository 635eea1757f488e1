// In a directory someone else can write, a planted link
// made zlcore write through it (a symlinked batch.log made root append to its
// target; temporaries were X.tmp.<pid>, opened without O_EXCL/O_NOFOLLOW).
// Temporaries are now exclusive and randomly named, appends refuse links, and
// a backend directory or batch --out open to other users gets one warning.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <functional>

#include "../../core/src/util/dir_links.hpp"
#include "zlcore/atomic_file.hpp"
#include "zlcore/shared_dir.hpp"
#include "zltest/fault_suite_batch.hpp"
#include "zltest/suites.hpp"

namespace {

using zltest::TempDir;
namespace fs = std::filesystem;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

TEST(Links, AtomicWriteNeverOpensAPlantedTemporary) {
  TempDir tmp;
  const fs::path victim = tmp / "victim", target = tmp / "identity.json";
  zltest::spit(victim, "precious\n");
  // The names the old code used, and a few around them.
  for (int pid = getpid() - 2; pid <= getpid() + 2; ++pid) {
    fs::create_symlink(victim, target.string() + ".tmp." + std::to_string(pid));
  }
  zl::write_file_atomic(target.string(), "{\"new\": true}\n");
  EXPECT_EQ(zltest::slurp(victim), "precious\n");
  EXPECT_EQ(zltest::slurp(target), "{\"new\": true}\n");
  EXPECT_FALSE(fs::is_symlink(target));
  size_t leftovers = 0;
  for (const auto& e : fs::directory_iterator(tmp.path())) leftovers += e.path().extension() == ".tmp";
  EXPECT_EQ(leftovers, 0u) << "a temporary was left behind";
}

TEST(Links, AtomicWriteReplacesALinkRatherThanItsTarget) {
  TempDir tmp;
  const fs::path victim = tmp / "victim", target = tmp / "ops_status.csv";
  zltest::spit(victim, "precious\n");
  fs::create_symlink(victim, target);
  zl::write_file_atomic(target.string(), "op,status\n");
  EXPECT_EQ(zltest::slurp(victim), "precious\n");
  EXPECT_FALSE(fs::is_symlink(target));
  EXPECT_EQ(zltest::slurp(target), "op,status\n");
}

TEST(Links, AppendsRefuseALinkWithOneLineNamingTheFile) {
  TempDir tmp;
  const fs::path victim = tmp / "victim", log = tmp / "batch.log", csv = tmp / "ops_status.csv";
  zltest::spit(victim, "precious\n");
  fs::create_symlink(victim, log);
  fs::create_symlink(victim, csv);
  const std::string why = "it is a symbolic link, and zlcore does not follow links for files it writes";
  EXPECT_EQ(error_of([&] { zl::append_log_line(log.string(), "line\n"); }),
            "cannot append to " + log.string() + ": " + why);
  EXPECT_EQ(error_of([&] { zl::append_record(csv.string(), "a,b\n"); }),
            "cannot append to " + csv.string() + ": " + why);
  EXPECT_EQ(zltest::slurp(victim), "precious\n");
  // A dangling link must not create its target either.
  const fs::path dangling = tmp / "run.log", would_be = tmp / "created-through-link";
  fs::create_symlink(would_be, dangling);
  EXPECT_NE(error_of([&] { zl::append_log_line(dangling.string(), "x\n"); }), "no error");
  EXPECT_FALSE(fs::exists(would_be));
}

TEST(Links, AFifoAtALogPathFailsInsteadOfBlocking) {
  TempDir tmp;
  const fs::path fifo = tmp / "batch.log";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  // Without a reader the open itself fails (ENXIO); with one, the type check.
  EXPECT_EQ(error_of([&] { zl::append_log_line(fifo.string(), "x\n"); }).rfind("cannot append to " + fifo.string(), 0),
            0u);
}

TEST(Links, DirectoriesOthersCanWriteAreNamed) {
  TempDir tmp;
  const fs::path d = tmp / "d";
  fs::create_directory(d);
  ::chmod(d.c_str(), 0755);
  EXPECT_EQ(zl::writable_by_others(d.string()), "");
  ::chmod(d.c_str(), 0775);
  EXPECT_EQ(zl::writable_by_others(d.string()), "writable by its group (mode 0775) without the sticky bit");
  ::chmod(d.c_str(), 0777);
  EXPECT_EQ(zl::writable_by_others(d.string()),
            "writable by its group and by everyone (mode 0777) without the sticky bit");
  ::chmod(d.c_str(), 01777);  // like /tmp: others cannot remove or rename our files
  EXPECT_EQ(zl::writable_by_others(d.string()), "");
  EXPECT_EQ(zl::writable_by_others((tmp / "missing").string()), "");
}

TEST(Links, AnOpenBackendDirectoryIsWarnedAboutOnce) {
  TempDir tmp;
  const fs::path plugins = tmp / "plugins";
  fs::create_directory(plugins);
  ::chmod(plugins.c_str(), 0777);
  zltest::Ran r = zltest::zlcore({"--backend-dir", plugins.string(), "backends"}, tmp.path());
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  EXPECT_EQ(r.err, "zlcore: warning: the backend directory " + plugins.string() +
                       " is writable by its group and by everyone (mode 0777) without the sticky bit; other users "
                       "can change what zlcore reads and writes there\n");
  ::chmod(plugins.c_str(), 01777);
  r = zltest::zlcore({"--backend-dir", plugins.string(), "backends"}, tmp.path());
  EXPECT_EQ(r.err, "") << zltest::describe(r);
}

// End to end: a batch into an --out where someone planted
// batch.log as a link to a file of ours.
TEST(Links, ABatchNeverAppendsThroughAPlantedLog) {
  TempDir tmp;
  const fs::path out = tmp / "out", victim = tmp / "victim";
  fs::create_directory(out);
  ::chmod(out.c_str(), 0777);
  zltest::spit(victim, "precious\n");
  fs::create_symlink(victim, out / "batch.log");
  zltest::Ran r = zltest::zlcore(
      {"--backend-dir", ZL_BUILD_PLUGIN_DIR, "batch", "--backend", "host", "--flaggems-dir", ZL_EXAMPLE_SUITE, "--ops",
       "abs", "--cold", "--no-idle-check", "--python", "/usr/bin/python3", "--out", out.string()},
      tmp.path(), {{"HOME", (tmp / "home").string()}}, 180);
  EXPECT_EQ(zltest::slurp(victim), "precious\n");
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  EXPECT_NE(r.err.find("zlcore: warning: the batch --out directory " + out.string() + " is writable by"),
            std::string::npos)
      << zltest::describe(r);
  const std::string refused = "zlcore batch: cannot append to " + out.string() +
                              "/batch.log: it is a symbolic link, and zlcore does not follow links for files it "
                              "writes\n";
  const size_t at = r.err.find(refused);
  EXPECT_NE(at, std::string::npos) << zltest::describe(r);
  EXPECT_EQ(r.err.find(refused, at + 1), std::string::npos) << "said more than once\n" << zltest::describe(r);
}

// A directory a batch keeps in its --out, replaced by a link to one
// elsewhere, would take the resumed batch's new runs and the attempts it
// moves aside there: the resume is refused before anything is written.
TEST(Links, ABatchResumeRefusesARunsDirectoryReplacedByALink) {
  TempDir tmp;
  const fs::path out = tmp / "b", elsewhere = tmp / "elsewhere";
  zltest::spit(out / "ops_status.csv", zl::batch::csv_header());
  zltest::spit(elsewhere / "ok1" / "run_identity.json", "{}\n");
  fs::create_symlink(elsewhere, out / "runs");
  zltest::Ran r = zltest::zlcore(zltest::batch_args(out, "ok1,ok2", {"--cold", "--resume"}), tmp.path(),
                                 zltest::batch_env(tmp, zltest::new_tag()), 120);
  EXPECT_EQ(r.exit_code, 2) << zltest::describe(r);
  EXPECT_EQ(r.err, "zlcore: --out " + out.string() + " holds a symbolic link where zlcore keeps a directory: " +
                       (out / "runs").string() + " (a link to " + elsewhere.string() +
                       "); zlcore does not follow links inside the directories it writes: put the directory itself "
                       "there, or use another --out\n")
      << zltest::describe(r);
  // Nothing moved aside or written through the link.
  std::vector<std::string> there;
  for (const auto& e : fs::directory_iterator(elsewhere)) there.push_back(e.path().filename().string());
  EXPECT_EQ(there, std::vector<std::string>{"ok1"});
  EXPECT_EQ(zltest::slurp(elsewhere / "ok1" / "run_identity.json"), "{}\n");
  EXPECT_FALSE(fs::exists(out / "logs"));
  EXPECT_EQ(zltest::slurp(out / "ops_status.csv"), zl::batch::csv_header());
}

// The same for ab: an A/B whose runs/ was moved elsewhere and replaced by a
// link wrote the rounds a --resume added there.
TEST(Links, AnAbResumeRefusesARunsDirectoryReplacedByALink) {
  TempDir tmp;
  const fs::path out = tmp / "ab", elsewhere = tmp / "elsewhere";
  auto ab = [&](const std::vector<std::string>& more) {
    std::vector<std::string> args{
        "--backend-dir", ZL_BUILD_PLUGIN_DIR, "ab",    "--backend", "host",  "--a",       ZL_FAULT_SUITE,
        "--b",           ZL_FAULT_SUITE,      "--ops", "ok1",       "--out", out.string()};
    args.insert(args.end(), more.begin(), more.end());
    return zltest::zlcore(args, tmp.path(), zltest::batch_env(tmp, zltest::new_tag()), 180);
  };
  zltest::Ran r = ab({"--rounds", "1"});
  ASSERT_EQ(r.exit_code, 0) << zltest::describe(r);
  fs::create_directories(elsewhere);
  fs::rename(out / "runs", elsewhere / "runs");
  fs::create_symlink(elsewhere / "runs", out / "runs");
  const std::string rounds = zltest::slurp(out / "rounds.csv");
  r = ab({"--rounds", "2", "--resume"});
  EXPECT_EQ(r.exit_code, 2) << zltest::describe(r);
  EXPECT_EQ(r.err, "zlcore: ab: --out " + out.string() + " holds a symbolic link where zlcore keeps a directory: " +
                       (out / "runs").string() + " (a link to " + (elsewhere / "runs").string() +
                       "); zlcore does not follow links inside the directories it writes: put the directory itself "
                       "there, or use another --out\n")
      << zltest::describe(r);
  EXPECT_FALSE(fs::exists(elsewhere / "runs" / "ok1" / "r2-t1")) << "a round was written through the link";
  EXPECT_EQ(zltest::slurp(out / "rounds.csv"), rounds);
}

// What is looked for: links in the directories zlcore keeps in --out, at any
// depth, that lead to a directory or dangle; not links to files (refused
// where a file is written) and not what else the user keeps in --out.
TEST(Links, DirectoryLinksAreFoundOnlyWhereZlcoreKeepsDirectories) {
  TempDir tmp;
  const fs::path out = tmp / "out", elsewhere = tmp / "elsewhere";
  fs::create_directories(elsewhere);
  zltest::spit(tmp / "afile", "x\n");
  fs::create_directories(out / "runs" / "abs" / "autotune_records");
  fs::create_symlink(tmp / "afile", out / "runs" / "abs" / "results.jsonl");
  fs::create_symlink(elsewhere, out / "my_notes");
  EXPECT_EQ(zl::directory_link_under(out.string()), "");
  fs::create_symlink(tmp / "gone", out / "runs" / "abs" / "autotune_records" / "kernels");
  EXPECT_EQ(zl::directory_link_under(out.string()), (out / "runs" / "abs" / "autotune_records" / "kernels").string() +
                                                        " (a link to " + (tmp / "gone").string() + ")");
  fs::remove(out / "runs" / "abs" / "autotune_records" / "kernels");
  fs::create_symlink(elsewhere, out / "leases");
  EXPECT_EQ(zl::directory_link_under(out.string()),
            (out / "leases").string() + " (a link to " + elsewhere.string() + ")");
}

}  // namespace

// A directory link planted inside --out while a batch runs (here by the
// first op itself, between its start and the next op's) is found before the
// next op starts: nothing more is written through it, and one line says so.
TEST(Links, ABatchStartsNoOpAfterALinkAppearsInsideItsOut) {
  TempDir tmp;
  const fs::path suite = tmp / "suite", out = tmp / "out", elsewhere = tmp / "elsewhere";
  zltest::suite_with_op(ZL_FAULT_SUITE, suite, "linker",
                        "import os\n\nimport pytest\n\nfrom . import faults\n\n\n"
                        "@pytest.mark.linker\n"
                        "def test_linker():\n"
                        "    out = os.environ['LINKER_OUT']\n"
                        "    os.rename(os.path.join(out, 'runs'), os.environ['LINKER_ELSEWHERE'])\n"
                        "    os.symlink(os.environ['LINKER_ELSEWHERE'], os.path.join(out, 'runs'))\n"
                        "    faults.TrivialBenchmark(op_name='linker', torch_op=faults.negate, "
                        "dtypes=faults.FAULT_DTYPES).run()\n",
                        "linker (replaces <out>/runs by a link)");
  std::vector<std::string> args = zltest::batch_args(out, "linker,ok1", {"--cold"});
  args[std::find(args.begin(), args.end(), std::string(ZL_FAULT_SUITE)) - args.begin()] = suite.string();
  zltest::Ran r =
      zltest::zlcore(args, tmp.path(),
                     zltest::batch_env(tmp, zltest::new_tag(),
                                       {{"LINKER_OUT", out.string()}, {"LINKER_ELSEWHERE", elsewhere.string()}}),
                     180);
  EXPECT_EQ(r.exit_code, 1) << zltest::describe(r);
  EXPECT_NE(r.out.find("--out " + out.string() + " now holds a symbolic link where zlcore keeps a directory: " +
                       (out / "runs").string() + " (a link to " + elsewhere.string() +
                       "); no more ops start: put the directory itself there, then --resume runs them\n"),
            std::string::npos)
      << zltest::describe(r);
  EXPECT_FALSE(fs::exists(elsewhere / "ok1")) << "the next op ran through the link";
}
