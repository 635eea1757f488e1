// One bad backend must not decide the fate of every command. A plugin that
// exits, aborts, segfaults or hangs in a constructor, its entry point,
// enumerate_devices or query_device_state is probed in a child first and
// rejected with what happened and where, while the good plugin beside it
// loads; nothing hangs. A plugin that passes its probe and hangs later costs
// an enumerate the time limit, not the command; one that crashes later ends
// the command with one line naming it and the call, and exit 9.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <thread>

#include <tuple>

#include "zlcore/loader.hpp"
#include "zltest/child.hpp"
#include "zltest/files.hpp"
#include "zltest/temp_dir.hpp"
#include "zltest/zlcore_cli.hpp"

namespace {

using zltest::TempDir;
namespace fs = std::filesystem;

// A backend directory: the faulty file sorted first, a good one after it.
fs::path plugin_dir(const TempDir& tmp, const std::vector<std::string>& faults) {
  const fs::path dir = tmp / "plugins";
  fs::create_directories(dir);
  for (const std::string& f : faults) fs::copy_file(fs::path(ZL_FAULTS_DIR) / (f + ".so"), dir / ("a_" + f + ".so"));
  fs::copy_file(fs::path(ZL_FAULTS_DIR) / "good.so", dir / "z_good.so");
  return dir;
}

struct Listing {
  std::vector<std::string> loaded;
  std::map<std::string, std::string> rejected;  // file name -> reason
};

Listing parse_listing(const std::string& json) {
  Listing l;
  rapidjson::Document d;
  d.Parse(json.c_str());
  if (d.HasParseError() || !d.IsObject()) return l;
  for (const auto& b : d["backends"].GetArray()) l.loaded.push_back(b["name"].GetString());
  for (const auto& r : d["rejected"].GetArray()) {
    l.rejected[fs::path(r["path"].GetString()).filename().string()] = r["reason"].GetString();
  }
  return l;
}

std::string where_words(const std::string& where) {
  if (where == "ctor") return "during load";
  if (where == "entry") return "in the entry point";
  if (where == "state") return "in query_device_state";
  return "in enumerate_devices";
}

std::string expected_reason(const std::string& what, const std::string& where) {
  if (what == "exit") return "exited with 0 " + where_words(where);
  if (what == "abort") return "aborted (SIGABRT) " + where_words(where);
  if (what == "segv") return "killed by SIGSEGV " + where_words(where);
  return "no answer in 1 s " + where_words(where);
}

const std::map<std::string, std::string> kShortLimit{{"ZL_BACKEND_TIMEOUT", "1"}};

class PluginFault : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(PluginFault, RejectedBesideAGoodOne) {
  const auto& [what, where] = GetParam();
  const std::string fault = "fault_" + what + "_" + where;
  TempDir tmp;
  const fs::path dir = plugin_dir(tmp, {fault});

  zltest::Ran r = zltest::zlcore({"--backend-dir", dir.string(), "backends", "--json"}, tmp.path(), kShortLimit, 30);
  ASSERT_FALSE(r.timed_out) << zltest::describe(r);
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  Listing l = parse_listing(r.out);
  EXPECT_EQ(l.loaded, std::vector<std::string>{"good"}) << zltest::describe(r);
  EXPECT_EQ(l.rejected["a_" + fault + ".so"], expected_reason(what, where)) << zltest::describe(r);
  std::printf("  %s: backends in %.3f s (cold)\n", fault.c_str(), r.seconds);

  // The plain listing says the same, and the verdict comes from the cache.
  r = zltest::zlcore({"--backend-dir", dir.string(), "backends"}, tmp.path(),
                     {{"ZL_BACKEND_TIMEOUT", "1"}, {"ZL_DEBUG_LOADER", "1"}}, 30);
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  EXPECT_NE(r.out.find("\ngood  (ABI"), std::string::npos) << zltest::describe(r);
  EXPECT_NE(r.out.find("rejected:\n  " + (dir / ("a_" + fault + ".so")).string() + ": " + expected_reason(what, where)),
            std::string::npos)
      << zltest::describe(r);
  EXPECT_NE(r.err.find("cached verdict for " + (dir / ("a_" + fault + ".so")).string()), std::string::npos)
      << zltest::describe(r);
  std::printf("  %s: backends in %.3f s (warm)\n", fault.c_str(), r.seconds);

  r = zltest::zlcore({"--backend-dir", dir.string(), "devices", "--backend", "good"}, tmp.path(), kShortLimit, 30);
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  EXPECT_EQ(r.out.rfind("good: 2 device(s) via fake\n", 0), 0u) << zltest::describe(r);
}

INSTANTIATE_TEST_SUITE_P(Each, PluginFault,
                         ::testing::Combine(::testing::Values("exit", "abort", "segv", "hang"),
                                            ::testing::Values("ctor", "entry", "enumerate", "state")),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

// A directory of every fault at once costs about one time limit, not sixteen.
TEST(PluginFaults, EveryFaultAtOnceBesideAGoodOne) {
  TempDir tmp;
  std::vector<std::string> faults;
  for (const char* what : {"exit", "abort", "segv", "hang"}) {
    for (const char* where : {"ctor", "entry", "enumerate", "state"})
      faults.push_back(std::string("fault_") + what + "_" + where);
  }
  const fs::path dir = plugin_dir(tmp, faults);
  zltest::Ran r = zltest::zlcore({"--backend-dir", dir.string(), "backends", "--json"}, tmp.path(), kShortLimit, 60);
  ASSERT_FALSE(r.timed_out) << zltest::describe(r);
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  Listing l = parse_listing(r.out);
  EXPECT_EQ(l.loaded, std::vector<std::string>{"good"}) << zltest::describe(r);
  EXPECT_EQ(l.rejected.size(), 16u) << zltest::describe(r);
  std::printf("  16 faulty plugins and a good one: backends in %.3f s (cold)\n", r.seconds);
}

// Passed its probe, stops answering later: the command gets the time limit
// and a reason, for devices, run and batch alike.
TEST(PluginFaults, AnEnumerationThatHangsLaterIsCutOffInProcess) {
  TempDir tmp;
  const fs::path dir = tmp / "plugins", hang = tmp / "hang-now";
  fs::create_directories(dir);
  fs::copy_file(fs::path(ZL_FAULTS_DIR) / "later_hang.so", dir / "later_hang.so");
  std::map<std::string, std::string> env{{"ZL_BACKEND_TIMEOUT", "1"}, {"ZL_FAKE_HANG_FILE", hang.string()}};

  zltest::Ran r = zltest::zlcore({"--backend-dir", dir.string(), "backends"}, tmp.path(), env, 30);
  EXPECT_NE(r.out.find("\nlaterhang  (ABI"), std::string::npos) << zltest::describe(r);

  zltest::spit(hang, "");
  r = zltest::zlcore({"--backend-dir", dir.string(), "devices", "--backend", "laterhang"}, tmp.path(), env, 30);
  ASSERT_FALSE(r.timed_out) << zltest::describe(r);
  // No answer is not "no devices": exit 1, said once on stderr.
  EXPECT_EQ(r.exit_code, 1) << zltest::describe(r);
  EXPECT_EQ(r.out, "") << zltest::describe(r);
  EXPECT_EQ(r.err, "zlcore: devices: laterhang could not list its devices: no answer in 1 s from enumerate_devices\n")
      << zltest::describe(r);
  std::printf("  devices with a hanging enumerate: %.3f s\n", r.seconds);

  r = zltest::zlcore({"--backend-dir", dir.string(), "run", "--backend", "laterhang", "--flaggems-dir",
                      ZL_EXAMPLE_SUITE, "--op", "abs", "--python", "/usr/bin/python3", "--out", (tmp / "R").string()},
                     tmp.path(), env, 30);
  ASSERT_FALSE(r.timed_out) << zltest::describe(r);
  EXPECT_EQ(r.exit_code, 3) << zltest::describe(r);
  EXPECT_EQ(r.err,
            "PREFLIGHT_FAILED check=device backend 'laterhang' reports no devices: no answer in 1 s from "
            "enumerate_devices\n")
      << zltest::describe(r);

  r = zltest::zlcore({"--backend-dir", dir.string(), "batch", "--backend", "laterhang", "--flaggems-dir",
                      ZL_EXAMPLE_SUITE, "--ops", "abs", "--python", "/usr/bin/python3", "--out", (tmp / "B").string()},
                     tmp.path(), env, 30);
  ASSERT_FALSE(r.timed_out) << zltest::describe(r);
  EXPECT_EQ(r.exit_code, 3) << zltest::describe(r);
  // The same line as run's: one mistake, one message, whichever command met it.
  EXPECT_EQ(r.err,
            "PREFLIGHT_FAILED check=device backend 'laterhang' reports no devices: no answer in 1 s from "
            "enumerate_devices\n")
      << zltest::describe(r);
}

// Passed its probe, crashes later in process: one line naming the backend,
// the call and the signal, the documented exit code (9), nothing half
// printed on stdout; a command that uses another backend is not touched.
TEST(PluginFaults, ACrashAfterTheProbeIsNamedWithItsOwnExitCode) {
  TempDir tmp;
  const fs::path dir = plugin_dir(tmp, {}), crash = tmp / "crash-in";
  fs::copy_file(fs::path(ZL_FAULTS_DIR) / "later_crash.so", dir / "a_later_crash.so");
  const std::string who = "backend 'latercrash' (" + (dir / "a_later_crash.so").string() + ")";
  std::map<std::string, std::string> env{{"ZL_FAKE_CRASH_FILE", crash.string()}};

  zltest::Ran r = zltest::zlcore({"--backend-dir", dir.string(), "backends"}, tmp.path(), env);
  EXPECT_NE(r.out.find("\nlatercrash  (ABI"), std::string::npos) << zltest::describe(r);

  zltest::spit(crash, "enumerate");
  r = zltest::zlcore({"--backend-dir", dir.string(), "devices", "--backend", "latercrash", "--json"}, tmp.path(), env);
  EXPECT_EQ(r.exit_code, 9) << zltest::describe(r);
  EXPECT_EQ(r.out, "") << zltest::describe(r);
  EXPECT_EQ(r.err, "zlcore: " + who + " crashed in enumerate_devices: killed by SIGSEGV\n") << zltest::describe(r);

  zltest::spit(crash, "state");
  r = zltest::zlcore({"--backend-dir", dir.string(), "devices", "--backend", "latercrash", "--json"}, tmp.path(), env);
  EXPECT_EQ(r.exit_code, 9) << zltest::describe(r);
  EXPECT_EQ(r.out, "") << zltest::describe(r);
  EXPECT_EQ(r.err, "zlcore: " + who + " crashed in query_device_state: killed by SIGSEGV\n") << zltest::describe(r);

  r = zltest::zlcore({"--backend-dir", dir.string(), "devices", "--backend", "good", "--json"}, tmp.path(), env);
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  EXPECT_NE(r.out.find("\"backend\": \"good\""), std::string::npos) << zltest::describe(r);
}

// In process: a call that ran out of time blocks new calls until it returns,
// and the backend answers again once it does.
TEST(PluginFaults, AnOverdueEnumerationHoldsBackNewCallsUntilItReturns) {
  TempDir tmp;
  const fs::path hang = tmp / "hang-now";
  ::setenv("ZL_BACKEND_TIMEOUT", "0.5", 1);
  ::setenv("ZL_FAKE_HANG_FILE", hang.c_str(), 1);
  fs::create_directories(tmp / "plugins");
  fs::copy_file(fs::path(ZL_FAULTS_DIR) / "later_hang.so", tmp / "plugins" / "later_hang.so");
  zl::LoadReport r = zl::load_backends((tmp / "plugins").string());  // in process: this one passes a probe
  const zl::Backend* later = nullptr;
  for (const zl::Backend& b : r.backends) later = b.name() == "laterhang" ? &b : later;
  ASSERT_NE(later, nullptr);
  EXPECT_EQ(later->enumerate().devices.size(), 2u);

  zltest::spit(hang, "");
  EXPECT_EQ(later->enumerate().error, "no answer in 0.5 s from enumerate_devices");
  EXPECT_EQ(later->enumerate().error, "enumerate_devices has not returned from a call that ran out of time");
  fs::remove(hang);
  zl::DeviceQuery q;
  for (int i = 0; i < 50 && q.devices.empty(); ++i) {  // the stuck call notices within a second
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    q = later->enumerate();
  }
  EXPECT_EQ(q.devices.size(), 2u) << q.error;
  ::unsetenv("ZL_BACKEND_TIMEOUT");
  ::unsetenv("ZL_FAKE_HANG_FILE");
}

// The probe's verdict is kept per file: a changed file is probed again.
TEST(PluginFaults, AChangedFileIsProbedAgain) {
  TempDir tmp;
  const fs::path dir = plugin_dir(tmp, {});
  std::map<std::string, std::string> env{{"ZL_DEBUG_LOADER", "1"}};
  zltest::Ran r = zltest::zlcore({"--backend-dir", dir.string(), "backends"}, tmp.path(), env);
  EXPECT_NE(r.err.find("probe " + (dir / "z_good.so").string() + ": ok"), std::string::npos) << zltest::describe(r);
  r = zltest::zlcore({"--backend-dir", dir.string(), "backends"}, tmp.path(), env);
  EXPECT_NE(r.err.find("cached verdict for " + (dir / "z_good.so").string() + ": ok"), std::string::npos)
      << zltest::describe(r);
  // Same name, another file: a fault now.
  fs::remove(dir / "z_good.so");
  fs::copy_file(fs::path(ZL_FAULTS_DIR) / "fault_abort_entry.so", dir / "z_good.so");
  r = zltest::zlcore({"--backend-dir", dir.string(), "backends", "--json"}, tmp.path());
  Listing l = parse_listing(r.out);
  EXPECT_TRUE(l.loaded.empty()) << zltest::describe(r);
  EXPECT_EQ(l.rejected["z_good.so"], "aborted (SIGABRT) in the entry point") << zltest::describe(r);
  // A cache that is not JSON is ignored, and rewritten.
  for (const auto& e : fs::directory_iterator(tmp / ".zlcache")) zltest::spit(e.path(), std::string(5000, '['));
  r = zltest::zlcore({"--backend-dir", dir.string(), "backends", "--json"}, tmp.path());
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  EXPECT_EQ(parse_listing(r.out).rejected["z_good.so"], "aborted (SIGABRT) in the entry point");
}

// A hang verdict holds for limits no longer than the one it ran out at: given
// more time, the file is probed again.
TEST(PluginFaults, AHangVerdictIsProbedAgainWithALongerLimit) {
  TempDir tmp;
  const fs::path dir = plugin_dir(tmp, {"fault_hang_entry"});
  const std::string file = (dir / "a_fault_hang_entry.so").string();
  auto reason_with = [&](const std::string& limit, zltest::Ran* ran) {
    *ran = zltest::zlcore({"--backend-dir", dir.string(), "backends", "--json"}, tmp.path(),
                          {{"ZL_BACKEND_TIMEOUT", limit}, {"ZL_DEBUG_LOADER", "1"}}, 30);
    return parse_listing(ran->out).rejected["a_fault_hang_entry.so"];
  };
  zltest::Ran r;
  EXPECT_EQ(reason_with("1", &r), "no answer in 1 s in the entry point") << zltest::describe(r);
  EXPECT_EQ(reason_with("0.5", &r), "no answer in 1 s in the entry point") << zltest::describe(r);
  EXPECT_NE(r.err.find("cached verdict for " + file), std::string::npos) << zltest::describe(r);
  EXPECT_EQ(reason_with("1.5", &r), "no answer in 1.5 s in the entry point") << zltest::describe(r);
  EXPECT_NE(r.err.find("probe " + file + ": no answer"), std::string::npos) << zltest::describe(r);
}

}  // namespace
