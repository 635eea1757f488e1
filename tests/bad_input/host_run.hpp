// `zlcore run` of one op of the example suite on the host backend, as the
// cases of this folder start it: HOME is tmp/home, and the Python is
// /usr/bin/python3 unless `extra` names another.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "zltest/temp_dir.hpp"
#include "zltest/zlcore_cli.hpp"

namespace bad_input {

// The run goes to tmp/<out>.
inline zltest::Ran host_run(const zltest::TempDir& tmp, const std::string& op, const std::string& out,
                            const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{"--backend-dir",     ZL_BUILD_PLUGIN_DIR, "run",  "--backend", "host",
                                "--flaggems-dir",    ZL_EXAMPLE_SUITE,    "--op", op,          "--out",
                                (tmp / out).string()};
  args.insert(args.end(), extra.begin(), extra.end());
  if (std::find(extra.begin(), extra.end(), "--python") == extra.end()) {
    args.insert(args.end(), {"--python", "/usr/bin/python3"});
  }
  return zltest::zlcore(args, tmp.path(), {{"HOME", (tmp / "home").string()}}, 120);
}

// `--replay-from SOURCE` into tmp/B, with a minute to run.
inline zltest::Ran replay_run(const zltest::TempDir& tmp, const std::filesystem::path& source, const std::string& op,
                              std::vector<std::string> extra = {}) {
  extra.insert(extra.end(), {"--replay-from", source.string(), "--timeout", "60"});
  return host_run(tmp, op, "B", extra);
}

}  // namespace bad_input
