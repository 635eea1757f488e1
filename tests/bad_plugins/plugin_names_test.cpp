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
