// A backend that lies in its table (an extension_start into nowhere, a
// capability_count larger than its array) or in its device list (a count
// larger than the array, an attribute count larger than its array, a string
// pointing nowhere) is rejected by its probe with the reason, beside a good
// backend that still loads; the verdict is cached as a rejection, never as
// "ok" followed by a SIGSEGV in every later command. In process, the core
// reads a table or a list the same bounded way, so even a backend loaded
// without a probe gives a reason, not a crash.
#include <gtest/gtest.h>
#include <signal.h>

#include "backends_json.hpp"
#include "zlcore/loader.hpp"
#include "zltest/child.hpp"
#include "zltest/files.hpp"
#include "zltest/temp_dir.hpp"
#include "zltest/zlcore_cli.hpp"

namespace {

using zltest::TempDir;
namespace fs = std::filesystem;

struct Lie {
  std::string file;    // lie_<what>.so
  std::string name;    // the backend's name
  bool in_table;       // the table lies (else its device list does)
  std::string reason;  // what the rejection says, up to the first address
  std::string after;   // and what it says after that address
};

const std::vector<Lie> kLies = {
    {"lie_extension", "lieextension", true, "extension [0] at 0x10 is not readable", ""},
    {"lie_capability_count", "liecapabilitycount", true, "capability [2] of 100 at ",
     " is not readable (capability_count larger than the array?)"},
    {"lie_device_count", "liedevicecount", false,
     "enumerate_devices returned a list that cannot be read: device list entries [2] to [63] are not readable", ""},
    {"lie_attribute_count", "lieattributecount", false,
     "enumerate_devices returned a list that cannot be read: device [0] FAKE-0000 attributes: value [5] of 1000 at ",
     " is not readable (count larger than the array?)"},
    {"lie_device_string", "liedevicestring", false,
     "enumerate_devices returned a list that cannot be read: device [1] name at 0x10 is not readable", ""},
    // Accepted, then its visibility variable turned into control bytes in
    // initialize: run with it, a child would see every device.
    {"table_changes", "changes", true, "its table changed after it was read (visibility_env '\\n",
     " is not printable text)"},
};

// gtest names a failing case by its file, not by the struct's bytes.
void PrintTo(const Lie& lie, std::ostream* os) { *os << lie.file; }

using zltest::rejected;

void expect_reason(const std::string& reason, const Lie& lie) {
  EXPECT_EQ(reason.rfind(lie.reason, 0), 0u) << reason;
  if (!lie.after.empty()) {
    EXPECT_GT(reason.size(), lie.after.size()) << reason;
    EXPECT_EQ(reason.substr(reason.size() - std::min(reason.size(), lie.after.size())), lie.after) << reason;
  }
}

class LyingBackend : public ::testing::TestWithParam<Lie> {};

TEST_P(LyingBackend, IsRejectedWithTheReasonWhileAGoodOneLoads) {
  const Lie& lie = GetParam();
  TempDir tmp;
  const fs::path dir = tmp / "plugins";
  fs::create_directories(dir);
  fs::copy_file(fs::path(ZL_FAULTS_DIR) / (lie.file + ".so"), dir / ("a_" + lie.file + ".so"));
  fs::copy_file(fs::path(ZL_FAULTS_DIR) / "good.so", dir / "z_good.so");

  // Cold (probed), then warm (the cached verdict): the same rejection.
  for (const char* pass : {"cold", "warm"}) {
    SCOPED_TRACE(pass);
    zltest::Ran r = zltest::zlcore({"--backend-dir", dir.string(), "backends", "--json"}, tmp.path());
    ASSERT_FALSE(r.timed_out) << zltest::describe(r);
    EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
    std::vector<std::string> loaded;
    auto why = rejected(r.out, &loaded);
    EXPECT_EQ(loaded, std::vector<std::string>{"good"}) << zltest::describe(r);
    expect_reason(why["a_" + lie.file + ".so"], lie);
  }
  zltest::Ran r = zltest::zlcore({"--backend-dir", dir.string(), "devices", "--backend", "good"}, tmp.path());
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  EXPECT_EQ(r.out.rfind("good: 2 device(s) via fake\n", 0), 0u) << zltest::describe(r);
  r = zltest::zlcore({"--backend-dir", dir.string(), "devices", "--backend", lie.name}, tmp.path());
  EXPECT_EQ(r.exit_code, 2) << zltest::describe(r);
  EXPECT_EQ(r.term_signal, 0) << zltest::describe(r);
}

// Without a probe (a loader given no probe program), the core's own reads
// are the same bounded ones: the lying table is a reason, the lying list an
// error or a rejected device, and nothing crashes this test process.
TEST_P(LyingBackend, IsReadSafelyInProcessWithoutAProbe) {
  const Lie& lie = GetParam();
  TempDir tmp;
  fs::create_directories(tmp / "plugins");
  fs::copy_file(fs::path(ZL_FAULTS_DIR) / (lie.file + ".so"), tmp / "plugins" / (lie.file + ".so"));
  zl::LoadReport report = zl::load_backends((tmp / "plugins").string(), zl::LoadOptions{});
  if (lie.in_table) {
    ASSERT_EQ(report.rejected.size(), 1u);
    expect_reason(report.rejected[0].reason, lie);
    EXPECT_TRUE(report.backends.empty());
    return;
  }
  ASSERT_EQ(report.backends.size(), 1u);
  const zl::DeviceQuery q = report.backends[0].enumerate();
  std::string said = q.error;
  for (const zl::RejectedDevice& d : q.rejected) said += "|" + d.reason;
  EXPECT_NE(said.find("not readable"), std::string::npos) << said;
}

INSTANTIATE_TEST_SUITE_P(Each, LyingBackend, ::testing::ValuesIn(kLies),
                         [](const auto& info) { return info.param.file; });

}  // namespace
