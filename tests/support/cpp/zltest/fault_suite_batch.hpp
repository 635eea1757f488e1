// A batch on the host backend over the fault suite
// (tests/fixtures/fault_suite), and its rows. Header-only, like
// zlcore_cli.hpp: the including target links zl_core and defines ZL_CLI,
// ZL_BUILD_PLUGIN_DIR and ZL_FAULT_SUITE.
#pragma once

#if !defined(ZL_BUILD_PLUGIN_DIR) || !defined(ZL_FAULT_SUITE)
#error "define ZL_BUILD_PLUGIN_DIR and ZL_FAULT_SUITE for the batch of the fault suite"
#endif

#include <map>
#include <string>
#include <vector>

#include "zlcore/batch.hpp"
#include "zltest/child.hpp"
#include "zltest/files.hpp"
#include "zltest/tagged.hpp"
#include "zltest/temp_dir.hpp"
#include "zltest/zlcore_cli.hpp"

namespace zltest {

// The environment of a batch whose processes carry `tag`, with a home of
// its own in the scratch directory.
inline std::map<std::string, std::string> batch_env(const TempDir& tmp, const std::string& tag,
                                                    std::map<std::string, std::string> more = {}) {
  more["HOME"] = (tmp / "home").string();
  more[kTagVariable] = tag;
  return more;
}

// `zlcore batch` on the host backend's one device over the fault suite.
inline std::vector<std::string> batch_args(const fs::path& out, const std::string& ops,
                                           const std::vector<std::string>& extra = {}) {
  std::vector<std::string> a{"--backend-dir",    ZL_BUILD_PLUGIN_DIR, "batch", "--backend", "host",
                             "--flaggems-dir",   ZL_FAULT_SUITE,      "--ops", ops,         "--python",
                             "/usr/bin/python3", "--no-idle-check",   "--out", out.string()};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

inline std::vector<zl::batch::OpRow> rows_of(const fs::path& out) {
  return zl::batch::read_status_csv((out / "ops_status.csv").string()).rows;
}

}  // namespace zltest
