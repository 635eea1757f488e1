// The built zlcore run as a user runs it, with its probe cache kept in the
// test's scratch directory. Header-only on purpose: the target that includes
// it names its zlcore as ZL_CLI ("$<TARGET_FILE:zlcore>"), so the support
// library itself needs no zlcore built. ZL_TEST_CLI=<another zlcore> runs
// another build instead (to see a test fail on code without the behaviour).
#pragma once

#ifndef ZL_CLI
#error "define ZL_CLI as the path of the zlcore under test"
#endif

#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "zltest/child.hpp"

namespace zltest {

inline Started start_zlcore(const std::vector<std::string>& args, const fs::path& scratch,
                            std::map<std::string, std::string> env = {}, const fs::path& cwd = {}) {
  const char* other = std::getenv("ZL_TEST_CLI");
  std::vector<std::string> argv{other != nullptr && *other != '\0' ? other : ZL_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  if (!env.count("ZL_CACHE_DIR")) env["ZL_CACHE_DIR"] = (scratch / ".zlcache").string();
  return start(argv, env, scratch, cwd);
}

inline Ran zlcore(const std::vector<std::string>& args, const fs::path& scratch,
                  std::map<std::string, std::string> env = {}, double timeout_s = 60, const fs::path& cwd = {}) {
  return finish(start_zlcore(args, scratch, std::move(env), cwd), timeout_s);
}

}  // namespace zltest
