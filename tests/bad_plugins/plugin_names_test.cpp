// Plugin names were not checked. A backend named in
// capitals loaded (and the registry matched it case-insensitively), and a
// backend whose alias was another backend's name took that name whenever its
// file sorted first. Names and aliases are now lower case (letters, digits,
// '-', '_'), and the backend whose alias would shadow another's name is the
// one rejected, with the reason, whatever the file order.
#include <gtest/gtest.h>

#include "backends_json.hpp"
#include "zltest/child.hpp"
#include "zltest/files.hpp"
#include "zltest/temp_dir.hpp"
#include "zltest/zlcore_cli.hpp"

namespace {

using zltest::TempDir;
namespace fs = std::filesystem;

using zltest::rejected;

zltest::Ran backends(const TempDir& tmp, const std::vector<std::pair<std::string, std::string>>& files) {
  const fs::path dir = tmp / "plugins";
  fs::create_directories(dir);
  for (const auto& [from, to] : files) fs::copy_file(fs::path(ZL_FAULTS_DIR) / from, dir / to);
  return zltest::zlcore({"--backend-dir", dir.string(), "backends", "--json"}, tmp.path());
}

TEST(PluginNames, ANameNotInLowerCaseIsRejected) {
  TempDir tmp;
  zltest::Ran r = backends(tmp, {{"shouty.so", "a_shouty.so"}, {"good.so", "z_good.so"}});
  EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
  std::vector<std::string> loaded;
  auto why = rejected(r.out, &loaded);
  EXPECT_EQ(loaded, std::vector<std::string>{"good"}) << r.out;
  EXPECT_EQ(why["a_shouty.so"],
            "name 'Shouty' is not lower case letters, digits, '-' and '_' starting with a letter (at most 32)")
      << r.out;
}

TEST(PluginNames, AnAliasNeverShadowsAnotherBackendsName) {
  // Both orders: the shadowing file sorted first (it used to win), and last.
  for (const std::string first : {"a_", "z_"}) {
    SCOPED_TRACE(first);
    TempDir tmp;
    const std::string shadow = first + "shadow.so", good = first == "a_" ? "m_good.so" : "b_good.so";
    zltest::Ran r = backends(tmp, {{"shadow.so", shadow}, {"good.so", good}});
    EXPECT_EQ(r.exit_code, 0) << zltest::describe(r);
    std::vector<std::string> loaded;
    auto why = rejected(r.out, &loaded);
    EXPECT_EQ(loaded, std::vector<std::string>{"good"}) << r.out;
    EXPECT_EQ(why[shadow], "alias 'good' is the name of backend 'good' (" + (tmp / "plugins" / good).string() +
                               "); an alias may not shadow another backend's name")
        << r.out;
    // And `--backend good` reaches good itself.
    zltest::Ran d = zltest::zlcore(
        {"--backend-dir", (tmp / "plugins").string(), "devices", "--backend", "good", "--json"}, tmp.path());
    EXPECT_EQ(d.exit_code, 0) << zltest::describe(d);
    EXPECT_NE(d.out.find("\"backend\": \"good\""), std::string::npos) << d.out;
  }
}

}  // namespace

// A backend the loader rejected is not an unknown one: `--backend X` for it,
// in any command that selects a backend, says that X was found and rejected,
// with the file and the loader's reason (as `zlcore backends` lists them),
// in one line, exit 2, before anything is written.
TEST(PluginNames, ABackendTheLoaderRejectedIsNamedAsRejectedWithItsReason) {
  TempDir tmp;
  const fs::path dir = tmp / "plugins";
  fs::create_directories(dir);
  fs::copy_file(fs::path(ZL_FAULTS_DIR) / "fault_segv_enumerate.so", dir / "zl_backend_fakex.so");
  fs::copy_file(fs::path(ZL_FAULTS_DIR) / "good.so", dir / "good.so");
  const std::string said = "zlcore: backend 'FakeX' (--backend / ZL_BACKEND) was found but rejected: " +
                           (dir / "zl_backend_fakex.so").string() +
                           ": killed by SIGSEGV in enumerate_devices; loaded backends: good\n";
  const std::string out = (tmp / "out").string();
  for (const std::vector<std::string>& command : std::vector<std::vector<std::string>>{
           {"devices"}, {"devices", "--json"}, {"run", "--op", "abs"}, {"batch", "--ops", "abs", "--out", out}}) {
    std::vector<std::string> argv{"--backend-dir", dir.string()};
    argv.insert(argv.end(), command.begin(), command.end());
    argv.insert(argv.end(), {"--backend", "FakeX"});
    const zltest::Ran r = zltest::zlcore(argv, tmp.path());
    EXPECT_EQ(r.exit_code, 2) << zltest::describe(r);
    EXPECT_EQ(r.err, said) << command[0];
    EXPECT_FALSE(fs::exists(out)) << command[0];
  }
  // A backend rejected for its alias is meant by its own name too.
  fs::copy_file(fs::path(ZL_FAULTS_DIR) / "shadow.so", dir / "shadow.so");
  const zltest::Ran r = zltest::zlcore({"--backend-dir", dir.string(), "devices", "--backend", "sneaky"}, tmp.path());
  EXPECT_EQ(r.exit_code, 2) << zltest::describe(r);
  EXPECT_EQ(r.err.rfind("zlcore: backend 'sneaky' (--backend / ZL_BACKEND) was found but rejected: " +
                            (dir / "shadow.so").string() + ": alias 'good' is the name of backend 'good'",
                        0),
            0u)
      << r.err;
  // A name no file has stays unknown.
  const zltest::Ran u = zltest::zlcore({"--backend-dir", dir.string(), "devices", "--backend", "nope"}, tmp.path());
  EXPECT_EQ(u.exit_code, 2);
  EXPECT_EQ(u.err, "zlcore: unknown backend 'nope' (--backend / ZL_BACKEND); loaded backends: good\n");
}
